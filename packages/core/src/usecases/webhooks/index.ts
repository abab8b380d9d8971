export * from './outbox';
export * from './service';
