export * from './html';
export * from './json';
export * from './lru';
export * from './pagination';
export * from './text';
export * from './money';
