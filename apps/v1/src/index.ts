export { createCheckoutStartRouter, createV1App, createV1Router, DEFERRED_LINK_TTL_MS, v1Serves } from './app';
export { parseExpand, EXPANDABLE } from './params';
