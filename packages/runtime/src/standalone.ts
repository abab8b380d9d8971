import type { RequestListener, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createHttpServer } from '@tollgate/http';
import { loadConfig, type Config } from './config';
import { createRuntime, type Runtime } from './container';
import { closeGracefully } from './lifecycle';
import type { ProcessLogger } from './logger';
import { startFailure } from './start-failure';
import { BackgroundWork } from './worker';

/**
 * How long a shutdown may take at most (`SHUTDOWN_TIMEOUT_MS`): under the 10 s Docker waits before
 * it kills a container, so the process ends by itself, its log written.
 */
export const DEFAULT_SHUTDOWN_TIMEOUT_MS = 8000;
/** What a shutdown keeps for the background work and the pools after the requests in flight were cut. */
const CLOSE_RESERVE_MS = 1000;
/** How long the last line may take to be written once the deadline has passed. */
const LAST_FLUSH_MS = 500;

/**
 * Serves one process until SIGINT/SIGTERM, the same way for the combined server and each
 * generation alone: runs this process's background work (events, period ends, webhooks; unless
 * `RUN_WORKER=false`), listens on the configured port (a failure there is one line and exit 1),
 * and on a stop signal closes gracefully: no new connections; the worker claims nothing more at once
 * (what it holds finishes); requests in flight finish, or are cut a second before the deadline; the
 * pools close. A shutdown still unfinished at `SHUTDOWN_TIMEOUT_MS` (a database that does not
 * answer, a webhook receiver that does not) is one error line, the log flushed, and exit 1: what
 * was left leased is taken up again when its lease runs out.
 */
export function serve(runtime: Runtime, server: Server, onListening: (port: number) => void): void {
  const { config, core, logger } = runtime;
  const deadlineMs = config.shutdownTimeoutMs ?? DEFAULT_SHUTDOWN_TIMEOUT_MS;
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
  /** Ends the process with `code` once `closing` and the pools are done, or with 1 at the deadline. */
  const finish = (code: number, closing: Promise<unknown>) => {
    // Set once the deadline has fired: from then on that path ends the process (exit 1, as its line
    // says), even if the close finishes while the line is being flushed.
    let late = false;
    // Not unref'd: a shutdown waiting on nothing that keeps the process alive still ends here, with 1.
    setTimeout(() => {
      late = true;
      logger.error(`shutdown did not finish within ${deadlineMs} ms (SHUTDOWN_TIMEOUT_MS): exiting with work unfinished`, {
        backgroundBusy: background?.busy() ?? false,
      });
      const flushed = (logger as Partial<ProcessLogger>).flush?.() ?? Promise.resolve();
      void Promise.race([flushed, new Promise((r) => setTimeout(r, LAST_FLUSH_MS))]).then(() => process.exit(1));
    }, deadlineMs);
    void Promise.all([closing, background?.stop()])
      .then(() => runtime.close())
      .then(
        () => {
          if (!late) process.exit(code);
        },
        (e: unknown) => {
          if (late) return;
          logger.error('shutdown failed', { error: String(e) });
          process.exit(1);
        },
      );
  };
  server.once('error', (e) => {
    console.error(startFailure(e, { port: config.port }));
    stopping = true;
    finish(1, Promise.resolve());
  });
  server.listen(config.port, () => onListening((server.address() as AddressInfo | null)?.port ?? config.port));
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info('shutting down', { signal });
    finish(0, closeGracefully(server, Math.max(deadlineMs - CLOSE_RESERVE_MS, Math.floor(deadlineMs / 2))));
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
