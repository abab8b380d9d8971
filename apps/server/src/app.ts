import express, { type Express, type RequestHandler } from 'express';
import type { Container } from 'inversify';
import { createLegacyRouter } from '@tollgate/app-legacy';
import { errorHandler, legacyErrorBody, LEGACY_V1_STATUS, openApiDocument, sendJson, type Logger } from '@tollgate/http';
import { TOKENS, wrapApp } from '@tollgate/runtime';

/** A generation mounted in the combined server. */
export interface Generation {
  /** Serves the generation's routes; calls next() for a path it does not serve. */
  router: RequestHandler;
  /** Does this generation serve the method and path? (for helpful 404s) */
  serves?(method: string, path: string): boolean;
}

export interface ServerGenerations {
  v1?: Generation;
  catalog?: Generation;
  /** Hosted pages of the sandbox payment provider (`/sandbox/...`). */
  sandbox?: Generation;
  /** Deferred checkout links of pricing tables (`/checkout/start/:token`). */
  checkoutStart?: Generation;
  /** Payment-provider webhooks by provider (`/webhooks/stripe`), given the raw body. */
  webhooks?: Record<string, RequestHandler>;
}

const notFound = (message: string) => legacyErrorBody({ status: 404, code: 'ROUTE_NOT_FOUND', message, details: [] });

/**
 * All generations in one process (DESIGN.md section 3): `/api` -> catalog; header `version: v1` or
 * any `/subscriptions/` path -> v1; another `version` value -> 400; everything else -> legacy.
 */
export function createServerApp(container: Container, generations: ServerGenerations = {}): Express {
  const logger = container.get<Logger>(TOKENS.Logger);
  const legacy = createLegacyRouter(container);
  return wrapApp(container, (app) => {
    app.get('/healthz', (_req, res) => sendJson(res, 200, { status: 'ok' }));
    app.get('/openapi/:generation.json', (req, res, next) => {
      const g = req.params.generation;
      if (g !== 'legacy' && g !== 'v1' && g !== 'catalog') return next();
      sendJson(res, 200, openApiDocument(g));
    });
    if (generations.sandbox) app.use('/sandbox', generations.sandbox.router);
    if (generations.checkoutStart) app.use('/checkout/start', generations.checkoutStart.router);
    if (generations.catalog) app.use('/api', generations.catalog.router);

    const v1 = express.Router();
    if (generations.v1) v1.use(generations.v1.router);
    v1.use((_req, res) => sendJson(res, 404, notFound('no such v1 operation')));
    v1.use(errorHandler(LEGACY_V1_STATUS, legacyErrorBody, logger));

    const legacyApp = express.Router();
    legacyApp.use(legacy);
    legacyApp.use((req, res) => {
      const hint = generations.v1?.serves?.(req.method, req.path) ? '; this path is a v1 operation: send header version: v1' : '';
      sendJson(res, 404, notFound(`no such operation${hint}`));
    });
    legacyApp.use(errorHandler(LEGACY_V1_STATUS, legacyErrorBody, logger));

    app.use((req, res, next) => {
      const version = req.header('version');
      if (version !== undefined && version !== 'v1') {
        return sendJson(res, 400, legacyErrorBody({ status: 400, code: 'VALIDATION_FAILED', message: `unsupported version ${version}: the only version is v1`, details: [{ property: 'version', error: 'must be v1' }] }));
      }
      if (version === 'v1' || req.path.startsWith('/subscriptions/')) return v1(req, res, next);
      return legacyApp(req, res, next);
    });
    app.use(errorHandler(LEGACY_V1_STATUS, legacyErrorBody, logger));
  }, (app) => {
    for (const [provider, handler] of Object.entries(generations.webhooks ?? {})) app.use(`/webhooks/${provider}`, handler);
  });
}
