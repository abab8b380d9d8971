export { createCheckoutStartRouter, createV1App, createV1Router, v1OpenApi, type V1AppServices } from './app';
export { DEFERRED_LINK_TTL_MS, v1Routes, type V1Services } from './routes';
export { parseExpand, EXPANDABLE } from './params';
export * from './schemas';
