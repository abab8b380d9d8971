export * from './outbox';
export * from './endpoints';
export * from './events';
export * from './delivery';
export * from './destinations';
