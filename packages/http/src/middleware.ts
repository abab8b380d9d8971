import { randomUUID } from 'node:crypto';
import { STATUS_CODES, type IncomingMessage, type Server } from 'node:http';
import { Readable, type Duplex } from 'node:stream';
import { parse as parseQueryString, type ParsedUrlQuery } from 'node:querystring';
import { parse as parseLegacyUrl } from 'node:url';
import express, { type Request, type RequestHandler, type Response } from 'express';
import { DomainError, ErrorCodes, pageSecurityHeaders, type Logger, type PagePolicy } from '@tollgate/core';

export { cspHash, type PagePolicy } from '@tollgate/core';
import { clientAddress, loggableRequestPath } from './client-address';
import { jsonDepthExceeds, MAX_JSON_BYTES, MAX_JSON_DEPTH } from './input';
import { lastRequestPath } from './server';
import { finalErrorHandler, legacyErrorBody, type ErrorBodyShape } from './errors';

/** The request id for a given `x-request-id` header: the caller's if sane, else a new one. */
export const requestIdOf = (given: string | string[] | undefined): string =>
  typeof given === 'string' && /^[\w.-]{1,100}$/.test(given) ? given : randomUUID();

/** A request id from `x-request-id` (if sane) or a new one, echoed back. */
export const requestId: RequestHandler = (req, res, next) => {
  const id = requestIdOf(req.header('x-request-id'));
  res.locals.requestId = id;
  res.setHeader('x-request-id', id);
  next();
};

/**
 * JSON bodies up to 1 MB and 32 levels deep (checked on the raw bytes, before parsing); any other
 * body is refused by the generation's error table (400, 413, 415 in its shape).
 */
const parseJson = express.json({
  limit: MAX_JSON_BYTES,
  strict: false,
  verify: (_req, _res, raw) => {
    if (jsonDepthExceeds(raw, MAX_JSON_DEPTH)) {
      throw new DomainError(ErrorCodes.VALIDATION_FAILED, `the body nests deeper than ${MAX_JSON_DEPTH} levels`, [
        { property: 'body', error: `nests deeper than ${MAX_JSON_DEPTH} levels` },
      ]);
    }
  },
});

/** The body a handler outside express already read off the socket, for express to parse as it would have. */
const PREREAD = Symbol('tollgate.prereadBody');

/**
 * Hands express a request whose body a fast path already read (and then left to the routers):
 * `jsonBody` parses these bytes exactly as it would have parsed the stream, same answers and errors.
 */
export function setPrereadBody(req: IncomingMessage, raw: Buffer): void {
  (req as IncomingMessage & { [PREREAD]?: Buffer })[PREREAD] = raw;
}

/**
 * JSON bodies up to 1 MB and 32 levels deep (checked on the raw bytes, before parsing); any other
 * body is refused by the generation's error table (400, 413, 415 in its shape).
 */
export const jsonBody: RequestHandler = (req, res, next) => {
  const raw = (req as IncomingMessage & { [PREREAD]?: Buffer })[PREREAD];
  if (raw === undefined) return parseJson(req, res, next);
  // The same parser over the same bytes, replayed from memory with the request's headers.
  const replay = Object.assign(Readable.from([raw], { objectMode: false }), { headers: req.headers, body: undefined as unknown });
  parseJson(replay as unknown as Request, res, (err?: unknown) => {
    if (err) return next(err);
    req.body = replay.body;
    next();
  });
};

/**
 * One log line per request: method, path (without signed tokens), status, time, client address.
 * Never headers (they hold API keys) nor query strings (signed links carry tokens there).
 */
export function requestLog(logger: Logger, trustProxy = 0): RequestHandler {
  return (req, res, next) => {
    const start = process.hrtime.bigint();
    res.on('finish', () => {
      logger.info('request', {
        requestId: res.locals.requestId,
        method: req.method,
        path: loggableRequestPath(req),
        status: res.statusCode,
        address: clientAddress(req, trustProxy),
        ms: Number((process.hrtime.bigint() - start) / 1000n) / 1000,
      });
    });
    next();
  };
}

/** The query string value of a parameter given once; arrays (repeated parameters) are refused later by validation. */
export const queryOf = (q: unknown): Record<string, unknown> => (q && typeof q === 'object' ? { ...(q as Record<string, unknown>) } : {});

/**
 * No content sniffing: an answer is only ever what its Content-Type says (pages, their scripts and
 * styles). Not set by `createHttpApp` on every answer: the fast paths answer outside express with
 * exactly the routers' headers, and would need it too.
 */
export const noSniff: RequestHandler = (_req, res, next) => {
  res.setHeader('X-Content-Type-Options', 'nosniff');
  next();
};

/** The security headers of an HTML page (core's `pageSecurityHeaders`), set on the answer. */
export function setPageSecurity(res: Response, policy: PagePolicy): void {
  for (const [name, value] of Object.entries(pageSecurityHeaders(policy))) res.setHeader(name, value);
}

/**
 * A query string as the generations the real service's Node clients call (legacy, v1, v2, v3) read
 * it: express's `'simple'` parser (`querystring.parse`: repeated keys as arrays, a bad `%` kept as
 * written, an object without a prototype) but `+` is a literal plus (RFC 3986), not a space. Those
 * clients interpolate values unencoded (`granteeIds=${ids}`), so a grantee `ann+test@example.com`
 * arrives with its `+` as is; a space arrives as `%20`. Only a string holding a `+` pays for the
 * replacement. The catalog (`/api`, whose clients form-encode) keeps `+` as a space.
 */
export function parseLiteralPlusQuery(search: string | null | undefined): ParsedUrlQuery {
  return parseQueryString(typeof search === 'string' && search.includes('+') ? search.replace(/\+/g, '%2B') : (search ?? ''));
}

/**
 * A URL `parseurl` (express's and the router's URL parser) reads with Node's legacy `url.parse`
 * rather than as `path?query`: one not starting with `/`, or holding a fragment (`#`, which a raw
 * request line may carry) or whitespace.
 */
const NOT_PLAIN_URL = /[#\t\n\f\r \u00a0\ufeff]/;

/** The query string of a request URL exactly as express's `req.query` takes it (`parseurl(req).query`). */
export function rawQueryOf(url: string): string | null {
  if (url.charCodeAt(0) !== 0x2f || NOT_PLAIN_URL.test(url)) return parseLegacyUrl(url).query as string | null;
  const q = url.indexOf('?');
  return q < 0 ? null : url.slice(q + 1);
}

/**
 * Runs first in the routers of legacy, v1, v2 and v3: the request's `req.query` reads `+` as a
 * literal plus (`parseLiteralPlusQuery`). Like express's own, it is read anew from `req.url` each
 * time it is asked (v2's router rewrites `req.url` before reading it). The app's parser (the
 * catalog's, pages') is untouched.
 */
export const literalPlusQuery: RequestHandler = (req, _res, next) => {
  Object.defineProperty(req, 'query', {
    configurable: true,
    enumerable: true,
    get(this: Request) {
      return parseLiteralPlusQuery(rawQueryOf(this.url));
    },
  });
  next();
};

export interface HttpAppOptions {
  logger: Logger;
  logRequests: boolean;
  /** Reverse proxies in front (`TRUST_PROXY`): the log's client address comes from `X-Forwarded-For` only when above 0. */
  trustProxy?: number;
  /**
   * The error body shape of the generation a path belongs to, for errors no router answered itself
   * (default: the legacy/v1/v2 shape; the combined server gives `/api` the catalog's).
   */
  errorShape?: (path: string) => ErrorBodyShape;
}

/**
 * The plumbing every app shares: request ids and the request log, then what `mount` adds, then
 * the last-resort error handler. Bodies are parsed by each generation's router (so their errors come
 * in its shape) or kept raw (signed webhooks).
 */
export function createHttpApp(options: HttpAppOptions, mount: (app: express.Express) => void): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('query parser', 'simple');
  app.use(requestId);
  if (options.logRequests) app.use(requestLog(options.logger, options.trustProxy));
  mount(app);
  // Last: an error nothing mounted answered gets the JSON shape of its path's generation, never
  // Express's own HTML page (with the stack when NODE_ENV is not `production`).
  app.use(finalErrorHandler(options.errorShape ?? (() => legacyErrorBody), options.logger));
  return app;
}

/**
 * Requests Node's HTTP parser refuses before any route sees them (a malformed request line, headers
 * over the limit) get an answer with a body in the shape of the generation the path belongs to,
 * instead of Node's empty 400 / 431.
 */
export function answerClientErrors(server: Server, bodyFor: (path: string, status: number, message: string) => unknown): void {
  server.on('clientError', (err: NodeJS.ErrnoException & { rawPacket?: Buffer }, socket: Duplex) => {
    if (err.code === 'ECONNRESET' || !socket.writable) return void socket.destroy();
    const status = err.code === 'HPE_HEADER_OVERFLOW' ? 431 : err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
    const message =
      status === 431 ? 'the request headers are too large' : status === 408 ? 'the request took too long' : 'the request is not valid HTTP';
    const path = /^[A-Z]+ (\S+)/.exec(err.rawPacket?.toString('latin1', 0, 2048) ?? '')?.[1] ?? lastRequestPath(socket) ?? '/';
    const body = JSON.stringify(bodyFor(path, status, message));
    socket.end(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  });
}
