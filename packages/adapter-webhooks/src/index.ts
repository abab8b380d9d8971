export * from './sender';
export * from './signature';
