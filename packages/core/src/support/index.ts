export * from './html';
export * from './lru';
export * from './pagination';
export * from './text';
export * from './money';
