export { createLegacyApp, createLegacyRouter } from './app';
