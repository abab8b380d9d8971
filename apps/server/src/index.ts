export { createServerApp, createServerHttp, type ServerApp, type ServerServices } from './app';
export { closeGracefully, SHUTDOWN_GRACE_MS } from './lifecycle';
