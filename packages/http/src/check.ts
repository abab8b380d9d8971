import type { IncomingMessage, ServerResponse } from 'node:http';
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
import { querySchema, route, type RouteDef } from './routes';
import { arrayOf, checkSchema, object, str } from './schemas';
import { checkBody, checkView, v2CheckBody } from './views';
import { parseGrace, parseGranteeIds } from './params';
import { compile } from './validation';
import { auditBody, responseAuditSink } from './response-audit';
import { parseLiteralPlusQuery, requestIdOf } from './middleware';
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

/**
 * v2's check query (SDK 5's `licenses.check`): as v1's, without `sigEncode` (v2 signs DER; like any
 * parameter it does not know, it is ignored). The v2 route and the fast path validate with it.
 */
export const v2CheckQuerySchema = querySchema(
  { productUuid: { type: 'string', format: 'uuid' }, granteeIds: { type: 'string', minLength: 1 }, grace: { type: 'string' } },
  ['productUuid', 'granteeIds'],
);

/** SDK 5's `CheckLicensesCapabilitiesResponse`: each capability with its latest end, and the signature. */
export const v2CheckSchema = object({
  capabilities: arrayOf(object({ capability: str, expiry: { type: 'string', format: 'date-time' } })),
  signature: str,
});

type V2CheckQuery = { productUuid: string; granteeIds: string; grace?: string };

/**
 * What v2's router does to a query string before it reads it (`dropUndefined` in apps/v2): SDK 5
 * writes an absent option as the literal `undefined`, and every `&`-separated pair ending in
 * `=undefined` is dropped, as written (an escaped `%75ndefined` is kept).
 */
export function dropUndefinedPairs(search: string): string {
  if (!search.includes('=undefined')) return search;
  return search
    .split('&')
    .filter((pair) => !pair.endsWith('=undefined'))
    .join('&');
}

/**
 * A URL the routers' URL parser (`parseurl`) reads with Node's legacy `url.parse` rather than as
 * `path?query`: a fragment (`#`, which a raw request line may carry) or whitespace. Its query is not
 * what `querystring` reads from the text after `?`, so v2's fast path leaves it to the router.
 */
const NOT_PLAIN_URL = /[#\t\n\f\r \u00a0\ufeff]/;

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
const validV2CheckQuery = compile<V2CheckQuery>(v2CheckQuerySchema);

/** v2's check request from the query string after `?`, as v2's router reads it (DER, always); throws what it refuses. */
function v2CheckRequestOf(search: string): CheckRequest {
  if (NOT_PLAIN_URL.test(search)) throw new Error('not a plain query string');
  const query = parseLiteralPlusQuery(dropUndefinedPairs(search));
  assertCleanText(query, 'query');
  const q = validV2CheckQuery(query);
  return { productId: q.productUuid, granteeIds: parseGranteeIds(q.granteeIds), graceDays: parseGrace(q.grace), encoding: 'der' };
}

/** Where the fast path keeps an answer's rendered body, on the answer object (dropped with it). */
const RENDERED = Symbol('tollgate.checkBody');
/** The same for v2's rendering of the answer (an answer signed DER is shared by v1 and v2 requests). */
const RENDERED_V2 = Symbol('tollgate.checkBodyV2');

/**
 * `GET /licenses/check` outside express (DESIGN section 11): the route's happy path, with the same
 * key, scope and tenancy rules, the same validation and the same bytes (status, `x-request-id`,
 * `Content-Type`, `Content-Length`, body; 204 when there is no capability). Legacy and v1 (no
 * `version`, or `v1`) in v1's shape; `version: v2` (SDK 5's call) as v2's route answers it: its
 * query schema (no `sigEncode`), its `=undefined` pairs dropped, DER, SDK 5's shape. Anything else
 * (another version, another path spelling, a body, a bad or missing key, a missing scope, an
 * invalid query, an address over its failed-authentication budget, an error of the check) is left
 * to the generation routers, which answer it exactly as before; the check is read-only, so running
 * it twice is harmless. `check-fast-path.test.ts` in the server compares both paths byte for byte.
 */
export function createCheckFastPath(o: CheckFastPathOptions): CheckFastPath {
  const stats: CheckFastPathStats = { served: 0, passed: 0 };
  // Core hands back the same answer object for a repeated question: its body is rendered once and
  // kept on the answer itself (a weak map would hold an entry for every fresh answer too, and its
  // entries are work for every garbage collection).
  const render = (result: SignedCheck & { [RENDERED]?: string }) => (result[RENDERED] ??= checkBody(result));
  const renderV2 = (result: SignedCheck & { [RENDERED_V2]?: string }) => (result[RENDERED_V2] ??= v2CheckBody(result));
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
    // v1 (or none) pays this one comparison; only another value looks further (v2: SDK 5's call).
    let v2 = false;
    if (h['version'] !== undefined && h['version'] !== 'v1') {
      if (h['version'] !== 'v2') return pass();
      v2 = true;
    }
    if (h['transfer-encoding'] !== undefined) return pass();
    if (h['content-length'] !== undefined) {
      if (h['content-length'] !== '0') return pass();
      // An empty body the routers' JSON parser still reads: its charset (415) or its encoding (400).
      if (h['content-encoding'] !== undefined || (h['content-type'] !== undefined && h['content-type'] !== 'application/json'))
        return pass();
    }
    const presented = typeof h['x-api-key'] === 'string' ? h['x-api-key'].trim() : '';
    if (!presented) return pass();
    let request: CheckRequest;
    try {
      if (v2) request = v2CheckRequestOf(url.slice('/licenses/check?'.length));
      else {
        // Validated as parsed (an object without a prototype; a copy cost more than the parse). `+`
        // is a literal plus, as the routers read it (`literalPlusQuery`).
        const search = url.slice('/licenses/check?'.length);
        // A URL the routers' parser reads otherwise (a raw `#` drops the rest there): theirs to answer.
        if (NOT_PLAIN_URL.test(search)) return pass();
        const query = parseLiteralPlusQuery(search);
        assertCleanText(query, 'query');
        request = checkRequestOf(validCheckQuery(query));
      }
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
      body = result ? (v2 ? renderV2(result) : render(result)) : undefined;
      // Tests only (no sink in production: the hot path parses nothing).
      if (body !== undefined && responseAuditSink())
        auditBody(`GET /licenses/check (fast path${v2 ? ', v2' : ''})`, 200, v2 ? v2CheckSchema : checkSchema, JSON.parse(body));
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
