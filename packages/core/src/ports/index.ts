export * from './repositories';
export * from './services';
export * from './payment';
export * from './usage';
