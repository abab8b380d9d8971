import type { Express, RequestHandler } from 'express';
import type { Logger } from '@tollgate/core';
import {
  createHttpApp,
  createMetrics,
  createRateLimits,
  ERROR_STATUS,
  generationRouter,
  legacyErrorBody,
  legacyErrorSchema,
  literalPlusQuery,
  mountOperations,
  observeRequests,
  openApiDocument,
  sendJson,
  type ErrorStatusTable,
  type GenerationRouter,
  type OperationsServices,
  type RateLimitConfig,
  type RateLimits,
  dropUndefinedPairs,
} from '@tollgate/http';
import { mountV1Pages } from '@tollgate/app-v1';
import { versionRoutes, VERSIONS, type V2Services, type Version } from './routes';

export interface V2AppServices extends V2Services {
  logger: Logger;
  config: V2Services['config'] & { logRequests: boolean; rateLimits: RateLimitConfig };
  /** The process's limiters, when several generations share them (the combined server). */
  rateLimits?: RateLimits;
}

/**
 * The SDK writes every option into the query string, an absent one as the literal `undefined`
 * (docs/reference/node-sdk-v5.md, bug 6): such a pair is read as absent.
 */
const dropUndefined: RequestHandler = (req, _res, next) => {
  const q = req.url.indexOf('?');
  if (q >= 0 && req.url.includes('=undefined')) {
    const kept = dropUndefinedPairs(req.url.slice(q + 1));
    req.url = req.url.slice(0, q) + (kept ? `?${kept}` : '');
  }
  next();
};

/** The 400 of a `version` header naming no version served here: it names the supported ones. */
export const unsupportedVersionBody = (value: string | undefined, supported: readonly string[]) =>
  legacyErrorBody({
    status: 400,
    code: 'VALIDATION_FAILED',
    message: `unsupported version ${value ?? '(none)'}: the supported versions are ${supported.slice(0, -1).join(', ')} and ${supported[supported.length - 1]}`,
    details: [{ property: 'version', error: `must be one of ${supported.join(', ')}` }],
  });

/** The 409s v2 and v3 keep (see VERSION_ERROR_STATUS). */
const KEEP_409 = new Set(['IDEMPOTENCY_KEY_IN_USE']);

/**
 * v2's and v3's error statuses: the shared table with every 409 but one answered 400. The Node SDK 5 reads
 * the body of a 400, 401, 403, 404 and 500 only; any other status becomes a `SalableUnknownError`
 * (`S1006`) without the body, so a refusal (a seat cancelled, a usage key reused with another
 * amount) would reach its users with no reason. 400 carries the same body and `code`, which the
 * SDK's `SalableValidationError` keeps in `data`. 429, 502 and 503 stay (retries and proxies read
 * them; `Retry-After` is kept): the SDK reports those as `S1006` (docs/api/v2.md). So does
 * `IDEMPOTENCY_KEY_IN_USE` keep its 409: the request is still in progress and a retry later
 * succeeds, where a 400 says the request is wrong and is not to be retried.
 */
export const VERSION_ERROR_STATUS: ErrorStatusTable = Object.fromEntries(
  Object.entries(ERROR_STATUS).map(([code, status]) => [code, status === 409 && !KEEP_409.has(code) ? 400 : status]),
) as ErrorStatusTable;

/** The router of v2 or v3, from its route table, in the legacy/v1 error shape (the SDK reads `validationErrors` of a 400). */
export function createVersionRouter(
  s: Pick<V2AppServices, 'core' | 'links' | 'clock' | 'config' | 'logger' | 'rateLimits'>,
  version: Version,
): GenerationRouter {
  return generationRouter(versionRoutes(s, version), {
    keySource: 'x-api-key',
    apiKeys: s.core.apiKeys,
    statusTable: VERSION_ERROR_STATUS,
    errorShape: legacyErrorBody,
    errorSchema: legacyErrorSchema,
    logger: s.logger,
    notFound: () => `no such ${version} operation`,
    rateLimits: s.rateLimits,
    // `+` in the query string is a literal plus (SDK 5 does not encode it), then SDK 5's `=undefined` pairs dropped.
    before: [literalPlusQuery, dropUndefined],
  });
}

/** The OpenAPI document of v2 or v3, derived from its route table. */
export const versionOpenApi = (s: V2Services, version: Version) =>
  openApiDocument(versionRoutes(s, version), {
    title: `Tollgate ${version} API`,
    version,
    auth: 'x-api-key',
    errorSchema: legacyErrorSchema,
    headers: () => [{ name: 'version', in: 'header', required: true, description: version, schema: { const: version } }],
  });

/**
 * v2 and v3 alone on their own port, a complete service (DESIGN section 13): health, readiness,
 * metrics, the pages their checkout links lead to, then the API of the version the `version`
 * header names.
 */
export function createV2App(s: V2AppServices & OperationsServices): Express {
  const rateLimits = s.rateLimits ?? createRateLimits(s.config.rateLimits);
  const metrics = createMetrics(s);
  const routers = Object.fromEntries(VERSIONS.map((v) => [v, createVersionRouter({ ...s, rateLimits }, v)])) as Record<
    Version,
    GenerationRouter
  >;
  return createHttpApp({ logger: s.logger, logRequests: s.config.logRequests, trustProxy: s.config.rateLimits.trustProxy }, (app) => {
    app.use(observeRequests(metrics));
    mountOperations(app, s, metrics);
    mountV1Pages(app, s);
    app.use((req, res, next) => {
      const v = req.header('version');
      if (v === 'v2' || v === 'v3') return routers[v].router(req, res, next);
      sendJson(res, 400, unsupportedVersionBody(v, VERSIONS));
    });
  });
}
