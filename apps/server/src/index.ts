export { createServerApp, type Generation, type ServerGenerations } from './app';
export { seedDemoIfEmpty } from './demo';
