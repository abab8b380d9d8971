import express, { type Express } from 'express';
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
  sendJson,
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

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

/**
 * 405 for a method a known path does not take (the published API documents 405 on every
 * operation), with `Allow` naming those it does, in the catalog error shape; a path no operation
 * has stays 404. Before authentication, as the 404 is.
 */
function methodNotAllowed(generation: GenerationRouter): express.RequestHandler {
  return (req, res, next) => {
    if (generation.serves(req.method === 'HEAD' ? 'GET' : req.method, req.path)) return next();
    const allowed = METHODS.filter((m) => generation.serves(m, req.path));
    if (allowed.length === 0) return next();
    res.setHeader('Allow', allowed.join(', '));
    sendJson(
      res,
      405,
      catalogErrorBody({
        status: 405,
        message: `${req.method} is not an operation of ${req.path}: it takes ${allowed.join(', ')}`,
        details: [],
      }),
    );
  };
}

/** The catalog generation's router (paths under `/api`), from its route table; idempotency keys on writes. */
export function createCatalogRouter(s: Pick<CatalogAppServices, 'core' | 'logger' | 'rateLimits'>): GenerationRouter {
  const generation = catalogGeneration(s);
  const router = express.Router();
  router.use(methodNotAllowed(generation), generation.router);
  return { router, serves: generation.serves };
}

function catalogGeneration(s: Pick<CatalogAppServices, 'core' | 'logger' | 'rateLimits'>): GenerationRouter {
  return generationRouter(catalogRoutes(s.core), {
    keySource: 'bearer',
    apiKeys: s.core.apiKeys,
    statusTable: ERROR_STATUS,
    errorShape: catalogErrorBody,
    errorSchema: catalogErrorSchema,
    logger: s.logger,
    notFound: (req) => notServed(req.path) ?? 'no such catalog operation',
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
  return createHttpApp({ logger: s.logger, logRequests: s.config.logRequests, trustProxy: s.config.rateLimits.trustProxy }, (app) => {
    app.use(observeRequests(metrics));
    mountOperations(app, s, metrics);
    app.use(createCatalogRouter({ ...s, rateLimits }).router);
  });
}
