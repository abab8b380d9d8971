export * from './group-commit';
export * from './service';
