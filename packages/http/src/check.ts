import type { IncomingMessage, ServerResponse } from 'node:http';
import { parse as parseQueryString } from 'node:querystring';
import {
  assertCleanText,
  hashApiKey,
  hasScope,
  type ApiKeyService,
  type CheckRequest,
  type CapabilityChecks,
  type Logger,
  type SignedCheck,
} from '@tollgate/core';
import { route, type RouteDef } from './routes';
import { checkSchema } from './schemas';
import { checkBody, checkView } from './views';
import { parseGrace, parseGranteeIds } from './params';
import { compile } from './validation';
import { auditBody, responseAuditSink } from './response-audit';
import { requestIdOf } from './middleware';
import type { RateLimits } from './rate-limits';

/** The check's query string (productUuid a UUID; the rest parsed by the edge parsers). */
export const checkQuerySchema = {
  type: 'object',
  properties: {
    productUuid: { type: 'string', format: 'uuid' },
    granteeIds: { type: 'string', minLength: 1 },
    grace: { type: 'string' },
    sigEncode: { enum: ['DER', 'der', 'P1363', 'p1363'] },
  },
  required: ['productUuid', 'granteeIds'],
} as const;

/**
 * `GET /licenses/check` for legacy and v1: `productUuid`, `granteeIds` (`a,b` or `[a,b]`), `grace`
 * (days > 0), `sigEncode=P1363` for a raw r||s ECDSA signature. 204 when there is no capability.
 */
export function checkRoute(licenses: Pick<CapabilityChecks, 'check'>): RouteDef {
  return route({
    method: 'get',
    path: '/licenses/check',
    operationId: 'checkLicenses',
    summary: 'Signed capability check (204: no capability)',
    description:
      'What the grantees may do in a product, signed: the capabilities of their usable licenses with their end dates, ' +
      'a hash of them and a signature the app verifies offline. 204 when they have none.',
    // A browser's scope (`checks:read`); `licenses:read` passes too (core's hasScope).
    scope: ['checks', 'read'],
    query: checkQuerySchema,
    response: { status: 200, schema: checkSchema },
    otherResponses: [{ status: 204, description: 'no capability' }],
    async handle({ query, tenant }) {
      let headers: Record<string, string> | undefined;
      const result = await licenses.check(tenant, checkRequestOf(query), { fromMemory: () => (headers = FROM_MEMORY_HEADERS) });
      return result ? { status: 200, body: checkView(result), headers } : { status: 204, headers };
    },
  });
}

/**
 * Marks a check answered from memory while the database did not answer (the outage grace,
 * docs/reliability.md): the answer is what the instance held when it last heard the change feed.
 */
export const FROM_MEMORY_HEADER = 'x-tollgate-from-memory';
const FROM_MEMORY_HEADERS = { [FROM_MEMORY_HEADER]: 'database-unavailable' };

type CheckQuery = { productUuid: string; granteeIds: string; grace?: string; sigEncode?: string };

/** The check's validated query string as the command core takes. */
function checkRequestOf(q: CheckQuery): CheckRequest {
  return {
    productId: q.productUuid,
    granteeIds: parseGranteeIds(q.granteeIds),
    graceDays: parseGrace(q.grace),
    encoding: q.sigEncode?.toLowerCase() === 'p1363' ? 'p1363' : 'der',
  };
}

export interface CheckFastPathOptions {
  apiKeys: Pick<ApiKeyService, 'authenticateHash' | 'heldKey'>;
  licenses: Pick<CapabilityChecks, 'check'>;
  /** The process's limiters: an address over its failed-authentication budget is left to the router (429). */
  rateLimits?: RateLimits;
  logger: Logger;
  logRequests: boolean;
}

/** What the fast path did with one request. */
export interface CheckFastPathStats {
  /** Checks it answered itself. */
  served: number;
  /** Requests for the check it left to the generation routers (anything but the plain happy path). */
  passed: number;
}

export interface CheckFastPath {
  /** Is this a request for the check (GET `/licenses/check?...`)? Others go straight to the routers. */
  wants(req: IncomingMessage): boolean;
  /** Answers the request and resolves true, or leaves it untouched (nothing read, nothing written) and resolves false. */
  handle(req: IncomingMessage, res: ServerResponse): Promise<boolean>;
  stats(): CheckFastPathStats;
}

const validCheckQuery = compile<CheckQuery>(checkQuerySchema);

/** Where the fast path keeps an answer's rendered body, on the answer object (dropped with it). */
const RENDERED = Symbol('tollgate.checkBody');

/**
 * `GET /licenses/check` outside express (DESIGN section 11): the route's happy path, with the same
 * key, scope and tenancy rules, the same validation and the same bytes (status, `x-request-id`,
 * `Content-Type`, `Content-Length`, body; 204 when there is no capability). Anything else (another
 * path spelling, a body, a bad or missing key, a missing scope, an invalid query, an address over
 * its failed-authentication budget, an error of the check) is left to the generation routers,
 * which answer it exactly as before; the check is read-only, so running it twice is harmless.
 * `checkFastPath.test.ts` in the server compares both paths byte for byte.
 */
export function createCheckFastPath(o: CheckFastPathOptions): CheckFastPath {
  const stats: CheckFastPathStats = { served: 0, passed: 0 };
  // Core hands back the same answer object for a repeated question: its body is rendered once and
  // kept on the answer itself (a weak map would hold an entry for every fresh answer too, and its
  // entries are work for every garbage collection).
  const render = (result: SignedCheck & { [RENDERED]?: string }) => (result[RENDERED] ??= checkBody(result));
  const pass = () => {
    stats.passed++;
    return false;
  };
  const wants = (req: IncomingMessage) => req.method === 'GET' && req.url !== undefined && req.url.startsWith('/licenses/check?');
  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<boolean> => {
    if (!wants(req)) return false;
    const url = req.url as string;
    const start = o.logRequests ? process.hrtime.bigint() : 0n;
    const h = req.headers;
    if ((h['version'] !== undefined && h['version'] !== 'v1') || h['transfer-encoding'] !== undefined) return pass();
    if (h['content-length'] !== undefined && h['content-length'] !== '0') return pass();
    const presented = typeof h['x-api-key'] === 'string' ? h['x-api-key'].trim() : '';
    if (!presented) return pass();
    let request: CheckRequest;
    try {
      // Validated as parsed (an object without a prototype; a copy cost more than the parse).
      const query = parseQueryString(url.slice('/licenses/check?'.length));
      assertCleanText(query, 'query');
      request = checkRequestOf(validCheckQuery(query));
    } catch {
      return pass();
    }
    // One digest of the key for the limiter and the lookup (the key itself is read no further).
    const digest = hashApiKey(presented);
    if (o.rateLimits?.authRefusal(req, digest)) return pass();
    let body: string | undefined;
    let fromMemory = false;
    try {
      const key = o.apiKeys.heldKey(digest) ?? (await o.apiKeys.authenticateHash(digest));
      o.rateLimits?.authSucceeded(digest);
      if (!hasScope(key, 'checks', 'read')) return pass();
      const result = await o.licenses.check({ organisationId: key.organisationId, isTest: key.isTest }, request, {
        fromMemory: () => (fromMemory = true),
      });
      body = result ? render(result) : undefined;
      // Tests only (no sink in production: the hot path parses nothing).
      if (body !== undefined && responseAuditSink()) auditBody('GET /licenses/check (fast path)', 200, checkSchema, JSON.parse(body));
    } catch {
      return pass();
    }
    if (res.headersSent || res.destroyed) return true;
    const id = requestIdOf(h['x-request-id']);
    // The headers in one list, in the order (and spelling) they were set one by one before: the same bytes.
    const headers: (string | number)[] = fromMemory
      ? ['x-request-id', id, FROM_MEMORY_HEADER, FROM_MEMORY_HEADERS[FROM_MEMORY_HEADER]]
      : ['x-request-id', id];
    if (body === undefined) {
      headers.push('Content-Length', '0');
      res.writeHead(204, headers);
      res.end();
    } else {
      headers.push('Content-Type', 'application/json', 'Content-Length', Buffer.byteLength(body));
      res.writeHead(200, headers);
      res.end(body);
    }
    stats.served++;
    if (o.logRequests) {
      o.logger.info('request', {
        requestId: id,
        method: 'GET',
        path: '/licenses/check',
        status: res.statusCode,
        ms: Number((process.hrtime.bigint() - start) / 1000n) / 1000,
      });
    }
    return true;
  };
  return { wants, handle, stats: () => ({ ...stats }) };
}
