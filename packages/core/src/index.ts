export * from './errors';
export * from './model';
export * from './domain';
export * from './support';
export * from './views';
export * from './ports';
export * from './usecases';
