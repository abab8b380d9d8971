import type { Express, RequestHandler } from 'express';
import type { Logger } from '@tollgate/core';
import {
  createHttpApp,
  createRateLimits,
  ERROR_STATUS,
  generationRouter,
  legacyErrorBody,
  legacyErrorSchema,
  literalPlusQuery,
  createMetrics,
  mountOperations,
  observeRequests,
  openApiDocument,
  type OperationsServices,
  type GenerationRouter,
  type RateLimitConfig,
  type RateLimits,
} from '@tollgate/http';
import { assertVersion } from './params';
import { createPricingPageRouter } from './pricing-page';
import { checkoutStartRoutes, v1Routes, type V1Services } from './routes';

export interface V1AppServices extends V1Services {
  logger: Logger;
  config: V1Services['config'] & { logRequests: boolean; rateLimits: RateLimitConfig };
  /** The process's limiters, when several generations share them (the combined server). */
  rateLimits?: RateLimits;
}

/** A `version` header other than v1 is 400 before anything else. */
const versionRule: RequestHandler = (req, _res, next) => {
  assertVersion(req.header('version'));
  next();
};

const options = (s: Pick<V1AppServices, 'core' | 'logger' | 'rateLimits'>, notFound: string | null) => ({
  keySource: 'x-api-key' as const,
  apiKeys: s.core.apiKeys,
  statusTable: ERROR_STATUS,
  errorShape: legacyErrorBody,
  logger: s.logger,
  notFound: notFound === null ? null : () => notFound,
  rateLimits: s.rateLimits,
});

/** The v1 generation's router, from its route table; `+` in its query strings is a literal plus (the real service's Node clients do not encode it). */
export function createV1Router(s: Pick<V1AppServices, 'core' | 'links' | 'clock' | 'config' | 'logger' | 'rateLimits'>): GenerationRouter {
  return generationRouter(v1Routes(s), { ...options(s, 'no such v1 operation'), before: [literalPlusQuery, versionRule] });
}

/** Deferred checkout links (`/checkout/start/:token`), public: the customer's browser follows them. Other paths pass on. */
export function createCheckoutStartRouter(s: Pick<V1AppServices, 'core' | 'links' | 'clock' | 'logger'>): GenerationRouter {
  return generationRouter(checkoutStartRoutes(s), options(s, null));
}

/** The v1 OpenAPI document, derived from the route table. */
export const v1OpenApi = (s: V1Services) =>
  openApiDocument(v1Routes(s), {
    title: 'Tollgate v1 API',
    version: 'v1',
    auth: 'x-api-key',
    errorSchema: legacyErrorSchema,
    headers: () => [{ name: 'version', in: 'header', required: false, description: 'v1 (may be left out)', schema: { const: 'v1' } }],
  });

/**
 * The pages v1's links point to, for the customer's browser (no API key): deferred checkout links
 * (`/checkout/start/:token`), the hosted pricing page and the embeddable pricing table.
 */
export function mountV1Pages(app: Express, s: Pick<V1AppServices, 'core' | 'links' | 'clock' | 'config' | 'logger'>): void {
  app.use(createCheckoutStartRouter(s).router);
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
}

/**
 * The v1 app alone on its own port, a complete service (DESIGN section 13): health, readiness,
 * metrics, and the pages its links point to (sandbox checkout and portal, checkout links, the
 * hosted pricing page), then the API.
 */
export function createV1App(s: V1AppServices & OperationsServices): Express {
  const rateLimits = s.rateLimits ?? createRateLimits(s.config.rateLimits);
  const metrics = createMetrics(s);
  return createHttpApp({ logger: s.logger, logRequests: s.config.logRequests, trustProxy: s.config.rateLimits.trustProxy }, (app) => {
    app.use(observeRequests(metrics));
    mountOperations(app, s, metrics);
    mountV1Pages(app, s);
    app.use(createV1Router({ ...s, rateLimits }).router);
  });
}
