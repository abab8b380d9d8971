export * from './group-commit';
export * from './service';
export * from './entitlements';
export * from './periods';
export * from './meter-events';
