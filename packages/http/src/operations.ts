import { createHash, timingSafeEqual } from 'node:crypto';
import type { Express, RequestHandler } from 'express';
import type { Core } from '@tollgate/core';
import { sendJson } from './json';
import { ServerMetrics, type MetricSources } from './metrics';

/** Whether an instance can serve, check by check (`GET /readyz`). */
export interface Readiness {
  ready: boolean;
  checks: Record<string, { ok: boolean; detail?: string }>;
}

/** What an app needs to be operated and to serve the pages its links point to. */
export interface OperationsServices {
  core: Pick<Core, 'checkCache' | 'worker' | 'webhookEvents'> & Partial<Pick<Core, 'meterRelay'>>;
  config: { metricsToken?: string };
  /** Readiness of this instance (`GET /readyz`); absent: ready whenever it answers. */
  readiness?(): Promise<Readiness>;
  /** The database, for its pool's metrics (absent or without a pool: none). */
  database?: { kind?: string; poolStats?(): { total: number; idle: number; waiting: number } };
  /** Routers adapters serve: the sandbox's hosted pages, and provider webhooks by provider (raw bodies). */
  pages: { sandbox: RequestHandler; webhooks: Record<string, RequestHandler> };
  /** Log lines dropped because stdout's reader fell behind (the process's logger; absent: none dropped). */
  logLinesDropped?(): number;
}

/**
 * How long `GET /readyz` waits for the readiness checks (the database's) before answering 503:
 * well within the 3 s of the image's and compose's health checks, so a database that hangs makes
 * the instance "not ready" instead of a probe that times out without an answer.
 */
export const READINESS_DEADLINE_MS = 2_000;

/**
 * The readiness checks with a deadline. One run at a time: probes that arrive while one hangs
 * wait on it (each with its own deadline) instead of each taking another database connection.
 */
function readinessWithDeadline(readiness: () => Promise<Readiness>, deadlineMs: number): () => Promise<Readiness> {
  let running: Promise<Readiness> | undefined;
  return async () => {
    if (!running) {
      const run = readiness();
      running = run;
      const done = () => {
        if (running === run) running = undefined;
      };
      run.then(done, done);
    }
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<Readiness>((resolve) => {
      timer = setTimeout(
        () =>
          resolve({
            ready: false,
            checks: { readiness: { ok: false, detail: `the readiness checks did not finish within ${deadlineMs} ms` } },
          }),
        deadlineMs,
      );
    });
    try {
      return await Promise.race([running, late]);
    } finally {
      clearTimeout(timer);
    }
  };
}

/** Compares secrets in constant time (by their digests, so lengths do not show). */
const safeEqual = (a: string, b: string) =>
  timingSafeEqual(createHash('sha256').update(a).digest(), createHash('sha256').update(b).digest());

/** The process's metrics, reading the use cases (and the check's and usage's fast paths, where there are). */
export function createMetrics(
  s: OperationsServices,
  fastPath?: MetricSources['fastPath'],
  usageFastPath?: MetricSources['usageFastPath'],
): ServerMetrics {
  return new ServerMetrics({
    checkCache: () => s.core.checkCache.stats(),
    fastPath,
    usageFastPath,
    eventQueue: () => s.core.worker.depth(),
    webhookQueue: () => s.core.webhookEvents.depth(),
    pool: s.database?.poolStats?.bind(s.database),
    meterRelay: s.core.meterRelay && (() => (s.core.meterRelay as NonNullable<Core['meterRelay']>).stats()),
    logLinesDropped: s.logLinesDropped,
  });
}

/**
 * What every app serves beside its API (DESIGN section 13), the combined server and each
 * generation alone alike: providers' webhooks (raw bodies, so first), `/healthz`, `/readyz`,
 * `/metrics` (behind `METRICS_TOKEN` when set) and the sandbox's hosted checkout and portal pages
 * its checkout links point to.
 */
export function mountOperations(
  app: Express,
  s: OperationsServices,
  metrics: ServerMetrics,
  options: { readinessDeadlineMs?: number } = {},
): void {
  for (const [provider, handler] of Object.entries(s.pages.webhooks)) app.use(`/webhooks/${provider}`, handler);
  app.get('/healthz', (_req, res) => sendJson(res, 200, { status: 'ok' }));
  const readiness = s.readiness && readinessWithDeadline(s.readiness.bind(s), options.readinessDeadlineMs ?? READINESS_DEADLINE_MS);
  app.get('/readyz', async (_req, res) => {
    const r: Readiness = readiness ? await readiness() : { ready: true, checks: {} };
    sendJson(res, r.ready ? 200 : 503, { status: r.ready ? 'ready' : 'not ready', checks: r.checks });
  });
  app.get('/metrics', async (req, res) => {
    const token = s.config.metricsToken;
    if (token && !safeEqual(req.header('authorization') ?? '', `Bearer ${token}`)) {
      res.setHeader('WWW-Authenticate', 'Bearer');
      return sendJson(res, 401, { error: 'the metrics token is required (Authorization: Bearer $METRICS_TOKEN)' });
    }
    const text = await metrics.registry.metrics();
    res.status(200).setHeader('Content-Type', metrics.registry.contentType);
    res.end(text);
  });
  app.use('/sandbox', s.pages.sandbox);
}

/** Counts every request of an express app in its metrics (the combined server observes in its listener instead). */
export const observeRequests =
  (metrics: ServerMetrics): RequestHandler =>
  (req, res, next) => {
    metrics.observe(req, res);
    next();
  };
