import { createHash, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import express, { type Express, type RequestHandler } from 'express';
import type { Clock, Core, Logger, SignedLinks } from '@tollgate/core';
import { catalogErrorBody, catalogOpenApi, createCatalogRouter } from '@tollgate/app-catalog';
import { createLegacyRouter, legacyOpenApi } from '@tollgate/app-legacy';
import { createCheckoutStartRouter, createPricingPageRouter, createV1Router, v1OpenApi } from '@tollgate/app-v1';
import {
  answerClientErrors,
  createCheckFastPath,
  createHttpApp,
  createRateLimits,
  legacyErrorBody,
  sendJson,
  type CheckFastPathStats,
  type RateLimitConfig,
} from '@tollgate/http';
import { ServerMetrics } from './metrics';
import { docsRouter, homePage } from './pages';

/** Whether an instance can serve, check by check (`GET /readyz`). */
export interface Readiness {
  ready: boolean;
  checks: Record<string, { ok: boolean; detail?: string }>;
}

/** What the combined server is given by its composition root (a plain typed record). */
export interface ServerServices {
  core: Core;
  logger: Logger;
  clock: Clock;
  links: SignedLinks;
  config: { publicUrl: string; logRequests: boolean; rateLimits: RateLimitConfig; metricsToken?: string };
  /** Readiness of this instance (`GET /readyz`); absent: ready whenever it answers. */
  readiness?(): Promise<Readiness>;
  /** The database, for its pool's metrics (absent or without a pool: none). */
  database?: { kind?: string; poolStats?(): { total: number; idle: number; waiting: number } };
  /** A hosted pricing page of the demo organisation, linked from `GET /` (a fresh install). */
  demoPricingPage?: string;
  /** Routers adapters serve: the sandbox's hosted pages, and provider webhooks by provider (raw bodies). */
  pages: { sandbox: RequestHandler; webhooks: Record<string, RequestHandler> };
}

/** Compares secrets in constant time (by their digests, so lengths do not show). */
const safeEqual = (a: string, b: string) =>
  timingSafeEqual(createHash('sha256').update(a).digest(), createHash('sha256').update(b).digest());

const badVersion = (version: string) =>
  legacyErrorBody({
    status: 400,
    code: 'VALIDATION_FAILED',
    message: `unsupported version ${version}: the only version is v1`,
    details: [{ property: 'version', error: 'must be v1' }],
  });

/** The server's request listener: the check's fast path, then the express app of every generation. */
export type ServerApp = ((req: IncomingMessage, res: ServerResponse) => void) & {
  /** What the check's fast path answered itself and what it left to the routers. */
  fastPathStats(): CheckFastPathStats;
};

/**
 * All generations in one process (DESIGN.md section 3): `/api` -> catalog; `version: v1` -> v1;
 * another `version` value -> 400; no header -> legacy where legacy serves the method and path, else
 * v1 where v1 serves it (the real service's clients send no header), else 404. Which paths each
 * generation serves comes from its route table.
 */
export function createServerApp(s: ServerServices, options: { checkFastPath?: boolean } = {}): ServerApp {
  // One set of limiters for the process: a client's failed keys count the same in every generation.
  const rateLimits = createRateLimits(s.config.rateLimits);
  const fast = createCheckFastPath({
    apiKeys: s.core.apiKeys,
    licenses: s.core.checks,
    rateLimits,
    logger: s.logger,
    logRequests: s.config.logRequests,
  });
  const poolStats = s.database?.poolStats?.bind(s.database);
  const metrics = new ServerMetrics({
    checkCache: () => s.core.checkCache.stats(),
    fastPath: fast.stats,
    eventQueue: () => s.core.worker.depth(),
    webhookQueue: () => s.core.webhooks.depth(),
    pool: poolStats,
  });
  const app = createExpressApp(s, rateLimits, metrics);
  const listener = (req: IncomingMessage, res: ServerResponse) => {
    if (options.checkFastPath === false || !fast.wants(req)) {
      metrics.observe(req, res);
      return void app(req, res);
    }
    metrics.observe(req, res, '/licenses/check');
    fast.handle(req, res).then(
      (served) => served || app(req, res),
      () => app(req, res),
    );
  };
  return Object.assign(listener, { fastPathStats: fast.stats });
}

function createExpressApp(s: ServerServices, rateLimits: ReturnType<typeof createRateLimits>, metrics: ServerMetrics): Express {
  const catalog = createCatalogRouter({ ...s, rateLimits });
  const v1 = createV1Router({ ...s, rateLimits });
  const legacy = createLegacyRouter({ ...s, rateLimits });
  const checkoutStart = createCheckoutStartRouter(s);
  const openapi: Record<string, () => object> = {
    legacy: () => legacyOpenApi(s.core),
    v1: () => v1OpenApi(s),
    catalog: () => catalogOpenApi(s.core),
  };
  return createHttpApp({ logger: s.logger, logRequests: s.config.logRequests }, (app) => {
    for (const [provider, handler] of Object.entries(s.pages.webhooks)) app.use(`/webhooks/${provider}`, handler);
    app.get(
      '/',
      homePage({
        database: s.database?.kind === 'postgres' ? 'a PostgreSQL server' : 'the embedded PGlite database',
        demoPricingPage: s.demoPricingPage,
      }),
    );
    app.use(docsRouter());
    app.get('/healthz', (_req, res) => sendJson(res, 200, { status: 'ok' }));
    app.get('/readyz', async (_req, res) => {
      const r: Readiness = s.readiness ? await s.readiness() : { ready: true, checks: {} };
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
    app.get('/openapi/:generation.json', (req, res, next) => {
      const doc = Object.hasOwn(openapi, req.params.generation) ? openapi[req.params.generation]() : undefined;
      if (!doc) return next();
      sendJson(res, 200, doc);
    });
    app.use('/sandbox', s.pages.sandbox);
    app.use(checkoutStart.router);
    app.use(
      createPricingPageRouter({
        queries: s.core.queries,
        checkout: s.core.checkout,
        links: s.links,
        clock: s.clock,
        config: s.config,
        logger: s.logger,
      }),
    );

    const dispatch = express.Router();
    dispatch.use((req, res, next) => {
      if (req.path === '/api' || req.path.startsWith('/api/')) return catalog.router(req, res, next);
      const version = req.header('version');
      if (version !== undefined && version !== 'v1') return sendJson(res, 400, badVersion(version));
      if (version === 'v1') return v1.router(req, res, next);
      if (legacy.serves(req.method, req.path)) return legacy.router(req, res, next);
      // v1 answers what legacy does not serve, and the 404 of a path nobody serves.
      return v1.router(req, res, next);
    });
    app.use(dispatch);
  });
}

/** The HTTP server of the combined app: Node's own refusals (bad request line, huge headers) answer in the path's generation's shape. */
export function createServerHttp(app: (req: IncomingMessage, res: ServerResponse) => void): Server {
  const server = createServer(app);
  answerClientErrors(server, (path, status, message) => {
    const details = [{ property: 'request', error: message }];
    return path === '/api' || path.startsWith('/api/') || path.startsWith('/api?')
      ? catalogErrorBody({ status, message, details })
      : legacyErrorBody({ status, code: 'VALIDATION_FAILED', message, details });
  });
  return server;
}
