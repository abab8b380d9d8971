import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  assertCleanText,
  ErrorCodes,
  hashApiKey,
  hasScope,
  type ApiKey,
  type ApiKeyService,
  type Logger,
  type Tenant,
  type UsageService,
} from '@tollgate/core';
import {
  auditBody,
  BUSY_RETRY_AFTER_SECONDS,
  clientAddress,
  compile,
  DATABASE_RETRY_AFTER_SECONDS,
  ERROR_STATUS,
  jsonDepthExceeds,
  loggableRequestPath,
  MAX_JSON_DEPTH,
  requestIdOf,
  responseAuditSink,
  setPrereadBody,
  toHttpError,
  type RateLimits,
} from '@tollgate/http';
import { catalogErrorSchema, objectOf } from './response-schemas';
import { consumeBody, recordBody } from './routes/usage';
import { answerSchema, answerView } from './routes/usage-views';
import { catalogErrorBody, objectEnvelope } from './views';

/** The paths the fast path answers (exactly these spellings; any other goes to the routers). */
export const USAGE_FAST_PATHS = ['/api/usage/consume', '/api/usage/record'] as const;
/** Bodies the fast path reads itself: a usage body is well under 1 KB; anything longer goes to express. */
const MAX_FAST_BODY = 4096;

export interface UsageFastPathOptions {
  apiKeys: Pick<ApiKeyService, 'authenticateHash'>;
  usage: Pick<UsageService, 'consume' | 'record'>;
  rateLimits?: RateLimits;
  logger: Logger;
  logRequests: boolean;
  /** Proxies in front of the server (the request log's client address, as express logs it). */
  trustProxy?: number;
}

/** What the fast path did with the consumes and records it was offered. */
export interface UsageFastPathStats {
  served: number;
  passed: number;
}

export interface UsageFastPath {
  /** Is this a consume or a record (POST `/api/usage/consume`, `/api/usage/record`)? Others go straight to the routers. */
  wants(req: IncomingMessage): boolean;
  /** Answers the request and resolves true, or leaves it to the routers (resolves false); never rejects. */
  handle(req: IncomingMessage, res: ServerResponse): Promise<boolean>;
  stats(): UsageFastPathStats;
}

const answerBodySchema = objectOf(answerSchema);

/** One operation the fast path answers: its body check and its work, answering as the route does. */
interface FastOperation {
  validate(body: unknown): unknown;
  run(usage: UsageFastPathOptions['usage'], tenant: Tenant, body: unknown, key: string | undefined, req: IncomingMessage): Promise<Answer>;
}
type Answer = { status: number; body?: unknown };

/** RFC 7240, as the record route reads it: `Prefer: return=representation` asks for the balance. */
const wantsRepresentation = (req: IncomingMessage) => /\breturn=representation\b/i.test(String(req.headers['prefer'] ?? ''));

const OPERATIONS: Record<(typeof USAGE_FAST_PATHS)[number], FastOperation> = {
  '/api/usage/consume': {
    validate: compile<{ owner: string; meterSlug: string; quantity: number }>(consumeBody),
    run: async (usage, tenant, body, key) => ({
      status: 200,
      body: objectEnvelope(answerView(await usage.consume(tenant, body as { owner: string; meterSlug: string; quantity: number }, key))),
    }),
  },
  '/api/usage/record': {
    validate: compile<{ owner: string; meterSlug: string; increment: number }>(recordBody),
    run: async (usage, tenant, body, key, req) => {
      const b = body as { owner: string; meterSlug: string; increment: number };
      const a = await usage.record(tenant, { owner: b.owner, meterSlug: b.meterSlug, quantity: b.increment }, key, 'increment');
      return wantsRepresentation(req) ? { status: 200, body: objectEnvelope(answerView(a)) } : { status: 204 };
    },
  },
};
const operationOf = (url: string | undefined) =>
  url !== undefined && Object.hasOwn(OPERATIONS, url) ? OPERATIONS[url as keyof typeof OPERATIONS] : undefined;

/** The body's bytes, all `length` of them, or undefined if the client sent otherwise or went away. */
function readBody(req: IncomingMessage, length: number): Promise<Buffer | undefined> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let got = 0;
    const done = (b: Buffer | undefined) => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('aborted', onError);
      resolve(b);
    };
    const onData = (c: Buffer) => {
      chunks.push(c);
      got += c.length;
    };
    const onEnd = () => done(got === length ? (chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, got)) : undefined);
    const onError = () => done(undefined);
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('aborted', onError);
  });
}

/**
 * `POST /api/usage/consume` and `POST /api/usage/record` outside express (the usage counterpart of
 * the check's fast path, DESIGN section 11): each route's happy path with the same key, scope, write budget, body rules
 * and bytes (status, `x-request-id`, `Content-Type`, `Content-Length`, body). Before the body is
 * read, anything unusual (another content type, no `Content-Length`, a large or chunked body, a
 * missing, unknown or scopeless key, an address over its failed-authentication budget, a key over
 * its write budget) is left to the routers untouched. Once the body is read, a body the route
 * would refuse (not JSON, too deep, invalid, unclean text) is left to them too, with the bytes read
 * (`setPrereadBody`): they parse them as they would have and answer exactly as before. The
 * operation itself runs once, here: its answer, or its error in the catalog's shape, is sent from
 * here (never retried by the routers: a consume or a record is not read-only).
 * `usage-fast-path.test.ts` in the server compares both paths byte for byte.
 */
export function createUsageFastPath(o: UsageFastPathOptions): UsageFastPath {
  const stats: UsageFastPathStats = { served: 0, passed: 0 };
  const pass = () => {
    stats.passed++;
    return false;
  };
  const wants = (req: IncomingMessage) => req.method === 'POST' && operationOf(req.url) !== undefined;

  const send = (req: IncomingMessage, res: ServerResponse, status: number, body: unknown, start: bigint, extra?: [string, string]) => {
    if (res.headersSent || res.destroyed) return;
    const path = req.url as string;
    const id = requestIdOf(req.headers['x-request-id']);
    res.statusCode = status;
    res.setHeader('x-request-id', id);
    if (extra) res.setHeader(extra[0], extra[1]);
    // The metrics' route label, as express would have set it.
    (req as IncomingMessage & { route?: { path: string } }).route = { path };
    if (body === undefined) {
      res.setHeader('Content-Length', '0');
      res.end();
    } else {
      const text = JSON.stringify(body);
      res.setHeader('Content-Type', 'application/json');
      res.setHeader('Content-Length', Buffer.byteLength(text));
      res.end(text);
    }
    stats.served++;
    if (o.logRequests)
      o.logger.info('request', {
        requestId: id,
        method: 'POST',
        path, // one of the fast path's two fixed paths: nothing to redact
        status,
        address: clientAddress(req, o.trustProxy ?? 0),
        ms: Number((process.hrtime.bigint() - start) / 1000n) / 1000,
      });
  };

  /** The consume's error as the catalog's error handler answers it. */
  const sendError = (req: IncomingMessage, res: ServerResponse, err: unknown, start: bigint) => {
    const h = toHttpError(err, ERROR_STATUS);
    if (h.status >= 500 && h.code !== ErrorCodes.DATABASE_UNAVAILABLE && h.code !== ErrorCodes.BUSY)
      o.logger.error('request failed', {
        requestId: requestIdOf(req.headers['x-request-id']),
        method: 'POST',
        path: loggableRequestPath(req),
        error: err instanceof Error ? err.stack : String(err),
      });
    const retry: [string, string] | undefined =
      h.code === ErrorCodes.DATABASE_UNAVAILABLE
        ? ['Retry-After', String(DATABASE_RETRY_AFTER_SECONDS)]
        : h.code === ErrorCodes.BUSY
          ? ['Retry-After', String(BUSY_RETRY_AFTER_SECONDS)]
          : undefined;
    const body = catalogErrorBody(h);
    if (responseAuditSink()) auditBody(`POST ${req.url} (fast path)`, h.status, catalogErrorSchema, body);
    send(req, res, h.status, body, start, retry);
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<boolean> => {
    const operation = req.method === 'POST' ? operationOf(req.url) : undefined;
    if (!operation) return false;
    const start = o.logRequests ? process.hrtime.bigint() : 0n;
    const h = req.headers;
    if (h['transfer-encoding'] !== undefined || h['content-type'] !== 'application/json') return pass();
    const length = Number(h['content-length']);
    if (!Number.isInteger(length) || length < 2 || length > MAX_FAST_BODY) return pass();
    const m = /^Bearer\s+(.+)$/i.exec(h['authorization'] ?? '');
    const presented = m?.[1].trim();
    if (!presented) return pass();
    // One digest of the key for the limiter and the lookup.
    const digest = hashApiKey(presented);
    if (o.rateLimits?.authRefusal(req, digest)) return pass();
    let key: ApiKey;
    try {
      key = await o.apiKeys.authenticateHash(digest);
    } catch {
      return pass();
    }
    o.rateLimits?.authSucceeded(digest);
    if (!hasScope(key, 'usage', 'write')) return pass();
    if (o.rateLimits && !(await o.rateLimits.claimWrite(key.id, 'usage'))) return pass();
    // From here the request is this path's: its body is read off the socket.
    const raw = await readBody(req, length);
    if (raw === undefined) {
      // The client went away or sent another length: nothing was done; the socket is Node's to close.
      if (!res.headersSent) res.destroy();
      return true;
    }
    let body: unknown;
    try {
      if (jsonDepthExceeds(raw, MAX_JSON_DEPTH)) throw new Error('deep');
      const parsed: unknown = JSON.parse(raw.toString('utf8'));
      assertCleanText(parsed, 'body');
      body = operation.validate(parsed);
    } catch {
      // A body the route refuses: the routers answer it from the same bytes (the write budget they count themselves).
      await o.rateLimits?.releaseWrite(key.id, 'usage');
      setPrereadBody(req, raw);
      return pass();
    }
    let answer: Answer;
    try {
      const k = h['idempotency-key'];
      answer = await operation.run(
        o.usage,
        { organisationId: key.organisationId, isTest: key.isTest },
        body,
        typeof k === 'string' ? k : undefined,
        req,
      );
    } catch (e) {
      sendError(req, res, e, start);
      return true;
    }
    if (answer.body !== undefined && responseAuditSink())
      auditBody(`POST ${req.url} (fast path)`, answer.status, answerBodySchema, answer.body);
    send(req, res, answer.status, answer.body, start);
    return true;
  };
  return { wants, handle, stats: () => ({ ...stats }) };
}
