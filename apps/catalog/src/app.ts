import type { Express } from 'express';
import type { Logger } from '@tollgate/core';
import {
  createHttpApp,
  createMetrics,
  mountOperations,
  observeRequests,
  type OperationsServices,
  createRateLimits,
  type RateLimitConfig,
  type RateLimits,
  ERROR_STATUS,
  generationRouter,
  openApiDocument,
  type GenerationRouter,
} from '@tollgate/http';
import { catalogErrorSchema } from './response-schemas';
import { catalogRoutes, type CatalogServices } from './routes';
import { catalogErrorBody } from './views';

export interface CatalogAppServices {
  core: CatalogServices;
  logger: Logger;
  config: { logRequests: boolean; rateLimits: RateLimitConfig };
  /** The process's limiters, when several generations share them (the combined server). */
  rateLimits?: RateLimits;
}

/**
 * The published API's endpoints that serve the hosted service's own dashboard and assistant
 * (DESIGN section 15): not part of Tollgate, answered 404 with why.
 */
const NOT_SERVED: [RegExp, string][] = [
  [/^\/api\/ai(\/|$)/, 'the hosted assistant (/api/ai/*) is not part of Tollgate: it is not served'],
  [
    /^\/api\/memberships(\/|$)/,
    "memberships belong to the hosted dashboard's own accounts: not served by Tollgate (grantees and groups are)",
  ],
  [/^\/api\/stripe\/account-session\/?$/, "the hosted dashboard's embedded payment-account session is not served by Tollgate"],
];
export const notServed = (path: string): string | undefined => NOT_SERVED.find(([re]) => re.test(path))?.[1];

/**
 * The catalog generation's router (paths under `/api`), from its route table; idempotency keys on
 * writes; a known path's wrong method is 405 with `Allow` (the published API documents 405 on
 * every operation), a path no operation has 404, both before authentication.
 */
export function createCatalogRouter(s: Pick<CatalogAppServices, 'core' | 'logger' | 'rateLimits'>): GenerationRouter {
  return generationRouter(catalogRoutes(s.core), {
    keySource: 'bearer',
    apiKeys: s.core.apiKeys,
    statusTable: ERROR_STATUS,
    errorShape: catalogErrorBody,
    errorSchema: catalogErrorSchema,
    logger: s.logger,
    notFound: (req) => notServed(req.path) ?? 'no such catalog operation',
    methodNotAllowed: true,
    idempotency: s.core.idempotency,
    rateLimits: s.rateLimits,
  });
}

/** The catalog OpenAPI document, derived from the route table. */
export const catalogOpenApi = (core: CatalogServices) =>
  openApiDocument(catalogRoutes(core), {
    title: 'Tollgate catalog API',
    version: '0.0.0',
    auth: 'bearer',
    errorSchema: catalogErrorSchema,
    headers: (r) =>
      r.method === 'get' || r.method === 'delete'
        ? []
        : [{ name: 'idempotency-key', in: 'header', required: false, schema: { type: 'string', maxLength: 255 } }],
  });

/** The catalog app alone on its own port, a complete service: health, readiness, metrics and the sandbox pages, then the API. */
export function createCatalogApp(s: CatalogAppServices & OperationsServices): Express {
  const rateLimits = s.rateLimits ?? createRateLimits(s.config.rateLimits);
  const metrics = createMetrics(s);
  const http = {
    logger: s.logger,
    logRequests: s.config.logRequests,
    trustProxy: s.config.rateLimits.trustProxy,
    errorShape: () => catalogErrorBody,
  };
  return createHttpApp(http, (app) => {
    app.use(observeRequests(metrics));
    mountOperations(app, s, metrics);
    app.use(createCatalogRouter({ ...s, rateLimits }).router);
  });
}
