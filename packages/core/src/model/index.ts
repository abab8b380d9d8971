export * from './common';
export * from './organisation';
export * from './catalog';
export * from './subscription';
export * from './license';
export * from './event';
export * from './billing';
export * from './checkout';
