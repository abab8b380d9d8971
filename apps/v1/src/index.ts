export { createV1App, createV1Router, v1Serves } from './app';
export { parseExpand, EXPANDABLE } from './params';
