export { createServerApp, createServerHttp, type ServerApp, type ServerServices } from './app';
