export { createServerApp, createServerHttp, type ServerServices } from './app';
