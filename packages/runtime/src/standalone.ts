import type { RequestListener, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createHttpServer } from '@tollgate/http';
import { loadConfig, type Config } from './config';
import { createRuntime, type Runtime } from './container';
import { closeGracefully } from './lifecycle';
import { startFailure } from './start-failure';
import { BackgroundWork } from './worker';

/**
 * Serves one process until SIGINT/SIGTERM, the same way for the combined server and each
 * generation alone: runs this process's background work (events, period ends, webhooks; unless
 * `RUN_WORKER=false`), listens on the configured port (a failure there is one line and exit 1),
 * and on a stop signal closes gracefully: no new connections, requests in flight finish, the
 * worker stops claiming work, the pools close.
 */
export function serve(runtime: Runtime, server: Server, onListening: (port: number) => void): void {
  const { config, core, logger } = runtime;
  const background = config.runWorker
    ? new BackgroundWork(
        core.worker,
        core.sweeps,
        runtime.wake,
        logger,
        config.workerIntervalMs,
        { delivery: core.webhookDelivery, events: core.webhookEvents },
        core.meterRelay,
      )
    : undefined;
  background?.start();
  let stopping = false;
  const finish = (code: number) =>
    void Promise.resolve(background?.stop())
      .then(() => runtime.close())
      .then(
        () => process.exit(code),
        (e: unknown) => {
          logger.error('shutdown failed', { error: String(e) });
          process.exit(1);
        },
      );
  server.once('error', (e) => {
    console.error(startFailure(e, { port: config.port }));
    stopping = true;
    finish(1);
  });
  server.listen(config.port, () => onListening((server.address() as AddressInfo | null)?.port ?? config.port));
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info('shutting down', { signal });
    void closeGracefully(server).then(() => finish(0));
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
}

/** Runs one generation's app alone on its own port (the apps' standalone entries): a complete service. */
export function runStandalone(name: string, build: (runtime: Runtime) => RequestListener): void {
  const start = async () => {
    const runtime = await createRuntime(loadConfig(), { lockAs: `tollgate ${name}` });
    serve(runtime, createHttpServer(build(runtime), runtime.config.http), (port) =>
      console.log(listeningLine(`tollgate ${name}`, runtime.config, port)),
    );
  };
  start().catch((e) => {
    console.error(startFailure(e));
    process.exit(1);
  });
}

/**
 * The start-up banner's first line: the local address this process listens on (the port it bound),
 * then, when `PUBLIC_URL` names another address (a proxy, a domain), that too, and the database.
 */
export function listeningLine(name: string, config: Pick<Config, 'port' | 'publicUrl' | 'databaseUrl' | 'dataDir'>, port: number): string {
  const local = `http://localhost:${port}`;
  const database = config.databaseUrl ? 'PostgreSQL server' : `embedded PGlite in ${config.dataDir}`;
  // PUBLIC_URL unset defaults to http://localhost:$PORT: nothing more to say then.
  const publicUrl = [local, `http://localhost:${config.port}`].includes(config.publicUrl) ? '' : `public URL ${config.publicUrl}; `;
  return `${name} listening on ${local} (${publicUrl}${database})`;
}
