import express, { type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import {
  DomainError,
  ErrorCodes,
  type ApiKeyService,
  type IdempotencyService,
  type Logger,
  type ScopeResource,
  type Tenant,
} from '@tollgate/core';
import { authenticate, requireScope, tenantOf, type AuthContext, type KeySource } from './auth';
import { ClientLeft, errorHandler, type ErrorBodyShape, type ErrorStatusTable, type HttpError } from './errors';
import { idempotent } from './idempotency';
import { sendEmpty, sendJson } from './json';
import { jsonBody } from './middleware';
import { cleanInput } from './input';
import type { RateLimits } from './rate-limits';
import { compile } from './validation';
import { fileUpload } from './upload';
import { auditAnswer, auditError } from './response-audit';

export type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';

/** What a route answers; the kit sends it (JSON with the exact content type, or an empty body). */
export interface Answer {
  status: number;
  body?: unknown;
  /**
   * A JSON array written batch by batch as it is read (instead of `body`): memory stays bounded by
   * one batch however long the list is.
   */
  stream?: AsyncIterable<unknown[]>;
  /** Extra response headers (e.g. `Location`). */
  headers?: Record<string, string>;
  /** A text body of another type than JSON (e.g. a YAML export), instead of `body`. */
  text?: { contentType: string; content: string };
  /** What an idempotent replay answers instead of `body`: the answer without a secret it shows once. */
  kept?: unknown;
}

/** One request as a handler sees it: query and body already validated against the route's schemas. */
export interface RouteContext<Q = Record<string, string | undefined>, B = unknown> {
  req: Request;
  res: Response;
  /** Path parameters (ids already checked as UUIDs). */
  params: Record<string, string>;
  query: Q;
  body: B;
  /** The caller's organisation and mode (routes with a scope only). */
  tenant: Tenant;
}

/** One answer a route may give: its status, the JSON Schema of its body, and a line for the docs. */
export interface ResponseSpec {
  status: number;
  /** The body's JSON Schema (absent: no body, e.g. 204 or a redirect). Tests validate every answer against it. */
  schema?: object;
  description?: string;
  /** A body of another type than JSON (e.g. `application/yaml`); `schema` then describes the text. */
  contentType?: string;
}

/** A resource of a generation: the OpenAPI tag its operations are grouped under in `/docs`. */
export interface Resource {
  name: string;
  description: string;
}

/**
 * One operation of a generation, declared once: its router entry, its share of the server's
 * dispatch and its OpenAPI entry are all derived from this.
 */
export interface Route {
  method: Method;
  /** Express syntax: `/products/:productUuid/plans`. */
  path: string;
  /** Stable name of the operation for generated clients (`listProducts`), unique in its generation. */
  operationId: string;
  summary: string;
  /** What the operation does and when to use it (a sentence or two for the docs). */
  description: string;
  /** The resource it belongs to (its module): the OpenAPI tag. */
  tag: Resource;
  /** The scope a key needs; absent: a public route (no key). */
  scope?: [ScopeResource, 'read' | 'write'];
  /** Path parameters that are not UUIDs (every other one must be a UUID: 400 before any query). */
  textParams?: string[];
  /** JSON Schema of the query string (values are strings); validated before the handler. */
  query?: object;
  /** JSON Schema of the body; validated before the handler. */
  body?: object;
  /**
   * A JSON `null` body reaches the handler as `null`, not validated (the handler answers it, e.g.
   * the import's "file not provided"); the documented schema stays `body`'s.
   */
  nullBody?: boolean;
  /** The success answer. */
  response: ResponseSpec;
  /** Other success answers it may give (e.g. 200 beside 201, 204 beside 200). */
  otherResponses?: ResponseSpec[];
  /** An example of the success body for the docs (default: one made from the schema). */
  example?: unknown;
  /** Extra OpenAPI header parameters or notes of the generation (e.g. v1's version header). */
  meta?: Record<string, unknown>;
  /** A long list: each key may read only a few at once on this instance (429 beyond). */
  list?: boolean;
  /**
   * The handler claims `idempotency-key` itself, in the transaction of its work (usage: the key is
   * part of the ledger's write), so the kit's separate claim is skipped.
   */
  ownIdempotency?: boolean;
  /** Also accepts `multipart/form-data` with one file part of this name: the body is then `{ [upload]: text }`. */
  upload?: string;
  // The table holds routes of every query and body type; `route()` types each handler.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  handle(ctx: RouteContext<any, any>): Promise<Answer> | Answer;
}

/** A route as its module declares it: the module's `resource()` gives it its tag. */
export type RouteDef = Omit<Route, 'tag'>;

/** A JSON Schema that carries the type of what it accepts (declared once, beside the schema). */
export type Schema<T> = object & { readonly __accepts?: T };

/** A request schema with the type of the values it lets through: `typed<PlanInput>({...})`. */
export const typed = <T>(schema: object): Schema<T> => schema as Schema<T>;

type QueryValue<P> = P extends { enum: readonly (infer E)[] } ? E : P extends { const: infer C } ? C : string;
type RequiredOf<S> = S extends { required: readonly (infer R)[] } ? R : never;

/**
 * What a query schema lets through, read from the schema itself (declared `as const`): each
 * property a string (or one of its `enum` values), optional unless `required`.
 */
export type QueryOf<S> =
  S extends Schema<infer T>
    ? unknown extends T
      ? S extends { properties: infer P }
        ? { [K in keyof P as K extends RequiredOf<S> ? K : never]: QueryValue<P[K]> } & {
            [K in keyof P as K extends RequiredOf<S> ? never : K]?: QueryValue<P[K]>;
          }
        : Record<string, string | undefined>
      : T
    : Record<string, string | undefined>;

/**
 * The type of the JSON a schema (declared `as const`, or through `bodySchema`) lets through: the
 * keywords our request schemas use (`type`, `enum`, `const`, `properties`, `required`, `items`).
 * Anything else reads as `unknown`; a schema beyond that says its type with `typed<T>()`.
 */
export type JsonOf<S> = S extends { enum: readonly (infer E)[] }
  ? E
  : S extends { const: infer C }
    ? C
    : S extends { type: readonly (infer T)[] }
      ? JsonOfType<T, S>
      : S extends { type: infer T }
        ? JsonOfType<T, S>
        : unknown;
type JsonOfType<T, S> = T extends 'string'
  ? string
  : T extends 'integer' | 'number'
    ? number
    : T extends 'boolean'
      ? boolean
      : T extends 'null'
        ? null
        : T extends 'array'
          ? S extends { items: infer I }
            ? JsonOf<I>[]
            : unknown[]
          : T extends 'object'
            ? S extends { properties: infer P }
              ? { [K in keyof P as K extends RequiredOf<S> ? K : never]: JsonOf<P[K]> } & {
                  [K in keyof P as K extends RequiredOf<S> ? never : K]?: JsonOf<P[K]>;
                }
              : Record<string, unknown>
            : unknown;

/** What a body schema lets through: the type `typed<T>()` gave it, else the type read from the schema itself. */
export type BodyOf<S> = S extends Schema<infer T> ? (unknown extends T ? JsonOf<S> : T) : unknown;

/** A request-body schema whose handler type is read from it (literal types kept, as `as const` would). */
export const bodySchema = <const S extends object>(schema: S): S => schema;

/**
 * A typed route: the handler's `query` and `body` take their types from the route's `query` and
 * `body` schemas (one source).
 */
export const route = <QS extends object = Record<string, never>, BS extends object = Record<string, never>>(
  r: Omit<RouteDef, 'handle' | 'query' | 'body'> & {
    query?: QS;
    body?: BS;
    handle(ctx: RouteContext<QueryOf<QS>, BodyOf<BS>>): Promise<Answer> | Answer;
  },
): RouteDef => r as RouteDef;

/**
 * A query-string schema whose handler type is read from it: each property a string (or one of its
 * `enum` values), optional unless named in `required`. Unknown parameters are let through (v1's
 * clients send extra ones); spread `additionalProperties: false` over it to refuse them.
 */
export const querySchema = <const P extends Record<string, object>, const R extends readonly (keyof P & string)[] = []>(
  properties: P,
  required?: R,
) => ({ type: 'object', properties, required: (required ?? []) as R }) as { type: 'object'; properties: P; required: R };

/** A 200 answer with a JSON body. */
export const ok = (body: unknown): Answer => ({ status: 200, body });

/** A 204 answer. */
export const noContent: Answer = { status: 204 };

/** A resource's routes, tagged with it (each route module ends with one). */
export const resource = (tag: Resource, routes: RouteDef[]): Route[] => routes.map((r) => ({ ...r, tag }));

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[1-8][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i;

/** Path parameters of an express path. */
export const pathParams = (path: string): string[] => [...path.matchAll(/:(\w+)/g)].map((m) => m[1]);

/** Does `path` (express syntax) match the request path? */
export function pathPattern(path: string): RegExp {
  const body = path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/:(\w+)/g, '[^/]+');
  return new RegExp(`^${body}/?$`);
}

/** Sends an answer (the one place route answers are written). */
export async function sendAnswer(res: Response, a: Answer): Promise<void> {
  if (a.stream) return sendStream(res, a.status, a.stream, a.headers ?? {});
  for (const [k, v] of Object.entries(a.headers ?? {})) res.setHeader(k, v);
  if (a.text) {
    res.status(a.status);
    res.setHeader('Content-Type', a.text.contentType);
    res.setHeader('Content-Length', Buffer.byteLength(a.text.content));
    res.end(a.text.content);
  } else if (a.body === undefined) sendEmpty(res, a.status);
  else sendJson(res, a.status, a.body);
}

/**
 * A JSON array written as its batches arrive, waiting for the client to take each chunk (so a slow
 * reader holds one batch, not the list). The first batch is read before the status and `[` are
 * written, so a failure there (bad input, the database down) is answered in the generation's error
 * shape. A failure after the first byte cuts the connection: the client sees a broken body, never a
 * well-formed partial list.
 */
async function sendStream(
  res: Response,
  status: number,
  batches: AsyncIterable<unknown[]>,
  headers: Record<string, string>,
): Promise<void> {
  const it = batches[Symbol.asyncIterator]();
  let next = await it.next();
  let first = true;
  const drained = () =>
    new Promise<void>((resolve) => {
      const done = () => {
        res.off('drain', done);
        res.off('close', done);
        resolve();
      };
      res.on('drain', done);
      res.on('close', done);
    });
  const write = async (chunk: string) => {
    if (res.destroyed) throw new ClientLeft();
    if (!res.write(chunk)) await drained();
    // Closed while waiting for the client to take the chunk: read no further batch.
    if (res.destroyed) throw new ClientLeft();
  };
  try {
    for (const [k, v] of Object.entries(headers)) res.setHeader(k, v);
    res.status(status);
    res.setHeader('Content-Type', 'application/json');
    await write('[');
    while (!next.done) {
      let chunk = '';
      for (const item of next.value) {
        chunk += (first ? '' : ',') + JSON.stringify(item);
        first = false;
      }
      if (chunk) await write(chunk);
      next = await it.next();
    }
  } catch (e) {
    // Stopped half-way (the client went away): the reader gives back what it holds (a connection).
    await Promise.resolve(it.return?.()).catch(() => undefined);
    throw e;
  }
  res.end(']');
}

/** Lists a key may read at once on one instance; more answer 429 with `Retry-After`. */
export const LISTS_PER_KEY = 2;

/** Counts a key's lists in flight (per instance: a list holds a connection and a batch of memory here). */
function listLimit(max: number): RequestHandler {
  const inFlight = new Map<string, number>();
  return (_req, res, next) => {
    const key = (res.locals.auth as AuthContext).key.id;
    const n = inFlight.get(key) ?? 0;
    if (n >= max) {
      res.setHeader('Retry-After', '1');
      throw new DomainError(ErrorCodes.RATE_LIMITED, `at most ${max} lists at once per API key; retry in a second`);
    }
    inFlight.set(key, n + 1);
    let done = false;
    const release = () => {
      if (done) return;
      done = true;
      const left = (inFlight.get(key) ?? 1) - 1;
      if (left > 0) inFlight.set(key, left);
      else inFlight.delete(key);
    };
    res.once('finish', release);
    res.once('close', release);
    next();
  };
}

export interface GenerationOptions {
  /** Where keys are read: `x-api-key` (legacy, v1) or `Authorization: Bearer` (catalog). */
  keySource: KeySource;
  apiKeys: ApiKeyService;
  /** The generation's error table and body shape: every error it answers uses them. */
  statusTable: ErrorStatusTable;
  errorShape: ErrorBodyShape;
  /** The JSON Schema of that error body (the OpenAPI documents show it; the response audit checks every error against it). */
  errorSchema?: object;
  logger: Logger;
  /** What an unknown path answers; null: pass it on to what is mounted next. */
  notFound: ((req: Request) => string) | null;
  /**
   * A known path's other methods (catalog: the published API documents 405 on every operation):
   * an unmatched request whose path other methods take answers 405 with `Allow` naming them,
   * rather than the 404 (needs `notFound`). Only unmatched requests pay for the scan; before
   * authentication, as the 404 is.
   */
  methodNotAllowed?: boolean;
  /** `idempotency-key` on POST, PUT and PATCH (catalog). */
  idempotency?: IdempotencyService;
  /** Runs before every route of the generation (v1: the version header rule). */
  before?: RequestHandler[];
  /** Long lists a key may read at once (default LISTS_PER_KEY). */
  listsPerKey?: number;
  /** Failed-authentication and write limits, shared by the process's generations (absent: none). */
  rateLimits?: RateLimits;
}

export interface GenerationRouter {
  router: express.Router;
  /** Does the generation serve this method and path? (the server's dispatch) */
  serves(method: string, path: string): boolean;
}

/**
 * A generation's router from its route table: body parsing, authentication, scope, validation and
 * the handler for each route, then 404 and the error handler, all in the generation's shape.
 */
export function generationRouter(routes: Route[], options: GenerationOptions): GenerationRouter {
  const r = express.Router();
  const errorShape: ErrorBodyShape = (h) => {
    const body = options.errorShape(h);
    auditError(options.errorSchema, h.status, body);
    return body;
  };
  for (const mw of options.before ?? []) r.use(mw);
  const auth = authenticate(options.apiKeys, options.keySource);
  const lists = listLimit(options.listsPerKey ?? LISTS_PER_KEY);
  for (const def of routes) {
    const query = def.query ? compile<Record<string, string | undefined>>(def.query) : undefined;
    const body = def.body ? compile<unknown>(def.body) : undefined;
    const uuidParams = pathParams(def.path).filter((p) => !def.textParams?.includes(p));
    // The key first (an unknown caller's body is never read), then the body: parsed for matched
    // routes only, so a router that passes a path on never answers for it.
    const limits = options.rateLimits;
    const chain: RequestHandler[] = def.scope
      ? [
          ...(limits ? [limits.authFailures(options.keySource)] : []),
          auth,
          requireScope(def.scope[0], def.scope[1]),
          // Metering (the usage scope) has its own budget: a vendor meters as often as its users act.
          ...(limits ? [def.scope[0] === 'usage' ? limits.usageWrites : limits.writes] : []),
        ]
      : [];
    if (def.list && def.scope) chain.push(lists);
    if (def.upload) chain.push(fileUpload(def.upload));
    chain.push(jsonBody, cleanInput);
    const work = async (req: Request, res: Response): Promise<Answer> => {
      for (const p of uuidParams) {
        if (!UUID.test(String(req.params[p])))
          throw new DomainError(ErrorCodes.VALIDATION_FAILED, `${p} must be a UUID`, [{ property: p, error: 'must be a UUID' }]);
      }
      const ctx: RouteContext = {
        req,
        res,
        params: req.params as Record<string, string>,
        query: query ? query({ ...(req.query as object) }) : (req.query as Record<string, string>),
        // A request without a body is an empty one (the published createApiKey and resends send none);
        // a JSON `null` is a body, and the schema refuses it where it wants an object.
        body: body && !(def.nullBody && req.body === null) ? body(req.body === undefined ? {} : req.body) : req.body,
        get tenant(): Tenant {
          return tenantOf(res);
        },
      };
      return auditAnswer(def, await def.handle(ctx), options.errorSchema);
    };
    const write = def.method === 'post' || def.method === 'put' || def.method === 'patch';
    chain.push(
      options.idempotency && write && def.scope && !def.ownIdempotency
        ? idempotent(options.idempotency, work, sendAnswer, def.path)
        : async (req, res) => {
            await sendAnswer(res, await work(req, res));
          },
    );
    r[def.method](def.path, ...chain);
  }
  const patterns = routes.map((d) => ({ method: d.method.toUpperCase(), re: pathPattern(d.path) }));
  const serves = (method: string, path: string) => patterns.some((p) => p.method === method.toUpperCase() && p.re.test(path));
  const notFound = options.notFound;
  if (notFound)
    r.use((req, res) => {
      const allowed = options.methodNotAllowed ? methodsNotTaken(serves, req) : [];
      if (allowed.length > 0) {
        res.setHeader('Allow', allowed.join(', '));
        const message = `${req.method} is not an operation of ${req.path}: it takes ${allowed.join(', ')}`;
        return sendJson(res, 405, errorShape({ status: 405, code: 'METHOD_NOT_ALLOWED', message, details: [] }));
      }
      sendJson(res, 404, errorShape({ status: 404, code: 'ROUTE_NOT_FOUND', message: notFound(req), details: [] }));
    });
  r.use(errorHandler(options.statusTable, errorShape, options.logger));
  return { router: r, serves };
}

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

/** The methods a path takes when the request's own is not one of them (none: the path is unknown, or its method is served). */
function methodsNotTaken(serves: GenerationRouter['serves'], req: Request): string[] {
  if (serves(req.method === 'HEAD' ? 'GET' : req.method, req.path)) return [];
  return METHODS.filter((m) => serves(m, req.path));
}

export type { AuthContext, HttpError, NextFunction };

/** Each batch of a streamed list through a presenter. */
export async function* mapBatches<T, U>(batches: AsyncIterable<T[]>, view: (item: T) => U): AsyncGenerator<U[]> {
  for await (const batch of batches) yield batch.map(view);
}
