export * from './memory';
export * from './fakes';
export * from './harness';
export * from './fixtures';
export * from './contracts';
