export * from './shared';
export * from './lifecycle';
export * from './seats';
export * from './provider-sync';
export * from './sweeps';
export * from './admin';
export * from './coupons';
export * from './directory';
