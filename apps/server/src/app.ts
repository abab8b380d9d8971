import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import express, { type Express } from 'express';
import type { Clock, Core, Logger, SignedLinks } from '@tollgate/core';
import { catalogErrorBody, catalogOpenApi, createCatalogRouter, createUsageFastPath, type UsageFastPathStats } from '@tollgate/app-catalog';
import { createLegacyRouter, legacyOpenApi } from '@tollgate/app-legacy';
import { createV1Router, mountV1Pages, v1OpenApi } from '@tollgate/app-v1';
import { createVersionRouter, unsupportedVersionBody, versionOpenApi } from '@tollgate/app-v2';
import {
  answerClientErrors,
  createCheckFastPath,
  createHttpApp,
  createHttpServer,
  createMetrics,
  DEFAULT_HTTP_SERVER_LIMITS,
  type HttpServerLimits,
  createRateLimits,
  legacyErrorBody,
  mountOperations,
  sendJson,
  type CheckFastPathStats,
  type OperationsServices,
  type RateLimitConfig,
  type ServerMetrics,
} from '@tollgate/http';
import { docsRouter, homePage } from './pages';

/** What the combined server is given by its composition root (a plain typed record). */
export interface ServerServices extends OperationsServices {
  core: Core;
  logger: Logger;
  clock: Clock;
  links: SignedLinks;
  config: { publicUrl: string; logRequests: boolean; rateLimits: RateLimitConfig; metricsToken?: string };
  /** A hosted pricing page of the demo organisation, linked from `GET /` (a fresh install). */
  demoPricingPage?: string;
}

/** The values of the `version` header the server answers. */
const SUPPORTED_VERSIONS = ['v1', 'v2', 'v3'] as const;

/** The server's request listener: the check's fast path, then the express app of every generation. */
export type ServerApp = ((req: IncomingMessage, res: ServerResponse) => void) & {
  /** What the check's fast path answered itself and what it left to the routers. */
  fastPathStats(): CheckFastPathStats;
  /** What the consume's fast path answered itself and what it left to the routers. */
  usageFastPathStats(): UsageFastPathStats;
};

/**
 * All generations in one process (DESIGN.md sections 3 and 15): `/api` -> catalog; `version: v1`
 * -> v1; `version: v2` / `v3` -> v2 / v3; another `version` value -> 400 naming the supported ones; no header -> legacy where legacy serves the method and path, else
 * v1 where v1 serves it (the real service's clients send no header), else 404. Which paths each
 * generation serves comes from its route table.
 */
export function createServerApp(s: ServerServices, options: { checkFastPath?: boolean; usageFastPath?: boolean } = {}): ServerApp {
  // One set of limiters for the process: a client's failed keys count the same in every generation.
  const rateLimits = createRateLimits(s.config.rateLimits);
  const fast = createCheckFastPath({
    apiKeys: s.core.apiKeys,
    licenses: s.core.checks,
    rateLimits,
    logger: s.logger,
    logRequests: s.config.logRequests,
  });
  const usage = createUsageFastPath({
    apiKeys: s.core.apiKeys,
    usage: s.core.usage,
    rateLimits,
    logger: s.logger,
    logRequests: s.config.logRequests,
    trustProxy: s.config.rateLimits.trustProxy,
  });
  const metrics = createMetrics(s, fast.stats, usage.stats);
  const app = createExpressApp(s, rateLimits, metrics);
  const listener = (req: IncomingMessage, res: ServerResponse) => {
    if (options.usageFastPath !== false && usage.wants(req)) {
      metrics.observe(req, res);
      return void usage.handle(req, res).then(
        (served) => served || app(req, res),
        () => res.headersSent || res.destroy(),
      );
    }
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
  return Object.assign(listener, { fastPathStats: fast.stats, usageFastPathStats: usage.stats });
}

function createExpressApp(s: ServerServices, rateLimits: ReturnType<typeof createRateLimits>, metrics: ServerMetrics): Express {
  const catalog = createCatalogRouter({ ...s, rateLimits });
  const v1 = createV1Router({ ...s, rateLimits });
  const legacy = createLegacyRouter({ ...s, rateLimits });
  const v2 = createVersionRouter({ ...s, rateLimits }, 'v2');
  const v3 = createVersionRouter({ ...s, rateLimits }, 'v3');
  const openapi: Record<string, () => object> = {
    legacy: () => legacyOpenApi(s.core),
    v1: () => v1OpenApi(s),
    v2: () => versionOpenApi(s, 'v2'),
    v3: () => versionOpenApi(s, 'v3'),
    catalog: () => catalogOpenApi(s.core),
  };
  const http = {
    logger: s.logger,
    logRequests: s.config.logRequests,
    trustProxy: s.config.rateLimits.trustProxy,
    // What no router answered (a path that does not decode, a page's fault): the path's generation's shape.
    errorShape: (path: string) => (isCatalogPath(path) ? catalogErrorBody : legacyErrorBody),
  };
  return createHttpApp(http, (app) => {
    mountOperations(app, s, metrics);
    app.get(
      '/',
      homePage({
        database: s.database?.kind === 'postgres' ? 'a PostgreSQL server' : 'the embedded PGlite database',
        demoPricingPage: s.demoPricingPage,
      }),
    );
    app.use(docsRouter());
    app.get('/openapi/:generation.json', (req, res, next) => {
      const doc = Object.hasOwn(openapi, req.params.generation) ? openapi[req.params.generation]() : undefined;
      if (!doc) return next();
      sendJson(res, 200, doc);
    });
    mountV1Pages(app, s);

    const dispatch = express.Router();
    dispatch.use((req, res, next) => {
      if (isCatalogPath(req.path)) return catalog.router(req, res, next);
      const version = req.header('version');
      if (version === 'v2') return v2.router(req, res, next);
      if (version === 'v3') return v3.router(req, res, next);
      if (version !== undefined && version !== 'v1') return sendJson(res, 400, unsupportedVersionBody(version, SUPPORTED_VERSIONS));
      if (version === 'v1') return v1.router(req, res, next);
      if (legacy.serves(req.method, req.path)) return legacy.router(req, res, next);
      // v1 answers what legacy does not serve, and the 404 of a path nobody serves.
      return v1.router(req, res, next);
    });
    app.use(dispatch);
  });
}

/** The catalog generation's paths (`/api`, `/api/...`). */
const isCatalogPath = (path: string) => path === '/api' || path.startsWith('/api/');

/**
 * The HTTP server of the combined app, with the kit's client timeouts and per-address connection
 * cap: Node's own refusals (bad request line, huge headers, a request past its timeout) answer in
 * the path's generation's shape.
 */
export function createServerHttp(
  app: (req: IncomingMessage, res: ServerResponse) => void,
  limits: HttpServerLimits = DEFAULT_HTTP_SERVER_LIMITS,
): Server {
  const server = createHttpServer(app, limits);
  answerClientErrors(server, (path, status, message) => {
    const details = [{ property: 'request', error: message }];
    return path === '/api' || path.startsWith('/api/') || path.startsWith('/api?')
      ? catalogErrorBody({ status, message, details })
      : legacyErrorBody({ status, code: 'VALIDATION_FAILED', message, details });
  });
  return server;
}
