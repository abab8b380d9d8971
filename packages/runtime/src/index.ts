export * from './config';
export * from './services';
export * from './container';
export * from './demo';
export * from './worker';
export * from './standalone';
export * from './logger';
