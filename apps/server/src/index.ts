export { createServerApp, type Generation, type ServerGenerations } from './app';
