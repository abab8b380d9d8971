export * from './json';
export * from './errors';
export * from './auth';
export * from './validation';
export * from './middleware';
export * from './views/legacy';
export * from './schemas';
export * from './views/v1';
