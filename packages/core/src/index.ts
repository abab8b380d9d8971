export * from './errors';
export * from './model';
export * from './domain';
export * from './ports';
export * from './usecases';
