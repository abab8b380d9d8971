import type { Express } from 'express';
import type { Logger } from '@tollgate/core';
import {
  createHttpApp,
  createMetrics,
  mountOperations,
  observeRequests,
  type OperationsServices,
  createRateLimits,
  ERROR_STATUS,
  generationRouter,
  legacyErrorBody,
  legacyErrorSchema,
  literalPlusQuery,
  openApiDocument,
  type GenerationRouter,
  type RateLimitConfig,
  type RateLimits,
} from '@tollgate/http';
import { legacyRoutes, type LegacyServices } from './routes';

export interface LegacyAppServices {
  core: LegacyServices;
  logger: Logger;
  config: { logRequests: boolean; rateLimits: RateLimitConfig };
  /** The process's limiters, when several generations share them (the combined server). */
  rateLimits?: RateLimits;
}

/** The legacy generation's router (its routes, 404 and errors in its shape), from its route table. */
export function createLegacyRouter(s: Pick<LegacyAppServices, 'core' | 'logger' | 'rateLimits'>): GenerationRouter {
  return generationRouter(legacyRoutes(s.core), {
    keySource: 'x-api-key',
    apiKeys: s.core.apiKeys,
    statusTable: ERROR_STATUS,
    errorShape: legacyErrorBody,
    errorSchema: legacyErrorSchema,
    logger: s.logger,
    notFound: () => 'no such operation',
    rateLimits: s.rateLimits,
    // `+` in the query string is a literal plus (the real service's Node clients do not encode it).
    before: [literalPlusQuery],
  });
}

/** The legacy OpenAPI document, derived from the route table. */
export const legacyOpenApi = (core: LegacyServices) =>
  openApiDocument(legacyRoutes(core), {
    title: 'Tollgate legacy API',
    version: 'legacy',
    auth: 'x-api-key',
    errorSchema: legacyErrorSchema,
  });

/** The legacy app alone on its own port, a complete service: health, readiness, metrics and the sandbox pages, then the API. */
export function createLegacyApp(s: LegacyAppServices & OperationsServices): Express {
  const rateLimits = s.rateLimits ?? createRateLimits(s.config.rateLimits);
  const metrics = createMetrics(s);
  return createHttpApp({ logger: s.logger, logRequests: s.config.logRequests, trustProxy: s.config.rateLimits.trustProxy }, (app) => {
    app.use(observeRequests(metrics));
    mountOperations(app, s, metrics);
    app.use(createLegacyRouter({ ...s, rateLimits }).router);
  });
}
