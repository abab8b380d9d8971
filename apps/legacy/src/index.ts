export { createLegacyApp, createLegacyRouter, wrapApp } from './app';
