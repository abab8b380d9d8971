import type { ErrorRequestHandler } from 'express';
import {
  BUSY_RETRY_AFTER_SECONDS,
  DATABASE_RETRY_AFTER_SECONDS,
  DomainError,
  ErrorCodes,
  isDomainError,
  type ErrorCode,
  type ErrorDetail,
  type Logger,
} from '@tollgate/core';
import { loggableRequestPath } from './client-address';
import { sendJson } from './json';

/** Domain error code -> HTTP status. `Record` makes it exhaustive. */
export type ErrorStatusTable = Record<ErrorCode, number>;

/**
 * The status every generation gives each domain error (the contract: 400 input, 401, 403, 404).
 * One table for all three: the generations differ in the body shape of an error, not its status
 * (docs/decisions.md, "One error table").
 */
export const ERROR_STATUS: ErrorStatusTable = {
  VALIDATION_FAILED: 400,
  RATE_LIMITED: 429,
  UNAUTHENTICATED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  CONFLICT: 409,
  IDEMPOTENCY_KEY_REUSED: 409,
  IDEMPOTENCY_KEY_IN_USE: 409,
  ORGANISATION_NOT_FOUND: 404,
  PRODUCT_NOT_FOUND: 404,
  PRODUCT_ARCHIVED: 400,
  PRODUCT_HAS_SUBSCRIPTIONS: 409,
  PLAN_NOT_FOUND: 404,
  PLAN_ARCHIVED: 400,
  PLAN_NOT_ON_SALE: 400,
  PLAN_HAS_SUBSCRIPTIONS: 409,
  PLAN_NOT_IN_PRODUCT: 400,
  PLAN_NOT_FREE_OR_EVALUATION: 400,
  PRICING_TABLE_NOT_FOUND: 404,
  SUBSCRIPTION_NOT_FOUND: 404,
  SUBSCRIPTION_CANCELED: 400,
  SUBSCRIPTION_NOT_REACTIVATABLE: 400,
  SUBSCRIPTION_ALREADY_ON_PLAN: 400,
  SUBSCRIPTION_PERIOD_NOT_ENDED: 400,
  SUBSCRIPTION_NOT_PER_SEAT: 400,
  SEATS_INVALID_COUNT: 400,
  SEATS_BELOW_MINIMUM: 400,
  SEATS_EXCEED_UNASSIGNED: 400,
  SEATS_LIMIT_EXCEEDED: 400,
  LICENSE_NOT_FOUND: 404,
  LICENSE_CANCELED: 400,
  EVENT_NOT_FOUND: 404,
  CHECK_GRACE_INVALID: 400,
  CHECKOUT_PROMO_CODE_CONFLICT: 400,
  CHECKOUT_INVALID_EMAIL: 400,
  CHECKOUT_INVALID_URL: 400,
  CHECKOUT_CURRENCY_NOT_SUPPORTED: 400,
  CHECKOUT_QUANTITY_NOT_PER_SEAT: 400,
  CHECKOUT_QUANTITY_BELOW_MINIMUM: 400,
  CHECKOUT_QUANTITY_INVALID: 400,
  CHECKOUT_SESSION_NOT_FOUND: 404,
  CHECKOUT_ALREADY_COMPLETED: 409,
  CHECKOUT_CANCELED: 409,
  PAYMENT_NOT_AVAILABLE: 400,
  PAYMENT_PROVIDER_FAILED: 502,
  DATABASE_UNAVAILABLE: 503,
  METER_EXISTS: 409,
  HOLD_NOT_FOUND: 404,
  HOLD_SETTLED: 409,
  CART_NOT_ACTIVE: 400,
  BUSY: 503,
};

/** Retry-After seconds of an outage and of a burst: core's, so the sandbox's pages ask the same. */
export { BUSY_RETRY_AFTER_SECONDS, DATABASE_RETRY_AFTER_SECONDS };

/** What an error becomes before a generation shapes its body. */
export interface HttpError {
  status: number;
  code: ErrorCode | 'INTERNAL' | 'PAYLOAD_TOO_LARGE' | 'UNSUPPORTED_MEDIA_TYPE' | 'ROUTE_NOT_FOUND' | 'METHOD_NOT_ALLOWED' | 'RATE_LIMITED';
  message: string;
  details: ErrorDetail[];
}

export type ErrorBodyShape = (e: HttpError) => unknown;

/** Legacy and v1: `{error, code}` plus `validationErrors` for bad input. */
export const legacyErrorBody: ErrorBodyShape = (e) => ({
  error: e.message,
  code: e.code,
  ...(e.details.length ? { validationErrors: e.details } : {}),
});

export type { Logger } from '@tollgate/core';

/** Turns anything thrown into a status and message; unknown errors leak nothing. */
export function toHttpError(err: unknown, table: ErrorStatusTable): HttpError {
  if (isDomainError(err)) return { status: table[err.code] ?? 500, code: err.code, message: err.message, details: err.details };
  const e = err as { type?: string; status?: number; message?: string };
  if (e?.type === 'entity.parse.failed') {
    return {
      status: 400,
      code: ErrorCodes.VALIDATION_FAILED,
      message: 'the body is not valid JSON',
      details: [{ property: 'body', error: 'is not valid JSON' }],
    };
  }
  if (e?.type === 'entity.too.large') return { status: 413, code: 'PAYLOAD_TOO_LARGE', message: 'the body is too large', details: [] };
  if (e?.type === 'charset.unsupported' || e?.type === 'encoding.unsupported') {
    return { status: 415, code: 'UNSUPPORTED_MEDIA_TYPE', message: 'the body must be UTF-8 JSON', details: [] };
  }
  // A path whose percent-escapes do not decode (express: "Failed to decode param '%ff'", status 400).
  // Any other URIError (a handler's own `decodeURIComponent`) is a fault, not the path's.
  if (isPathNotDecoded(err)) {
    return {
      status: 400,
      code: ErrorCodes.VALIDATION_FAILED,
      message: 'the path is not valid: a percent-escape in it does not decode',
      details: [{ property: 'path', error: 'has a percent-escape that does not decode' }],
    };
  }
  // Any other refusal of the request a library gave a 4xx (a body that does not decompress, a length
  // that does not match): that status, without the library's wording.
  const status = clientStatus(err);
  if (status !== undefined) return { status, code: ErrorCodes.VALIDATION_FAILED, message: 'the request is not valid', details: [] };
  return { status: 500, code: 'INTERNAL', message: 'internal error', details: [] };
}

/** Express's refusal of a path whose percent-escapes do not decode: a URIError it gave status 400. */
const isPathNotDecoded = (err: unknown): boolean => err instanceof URIError && (err as { status?: unknown }).status === 400;

/**
 * The 4xx status of a refusal of the request itself, if `err` is one: an error that says its status
 * may be shown (`expose: true`, as http-errors, body-parser and raw-body set it), or express's
 * URIError for a path that does not decode. Another error's `status`/`statusCode` is not the
 * request's fault (Stripe's authentication error carries `statusCode: 401`, an HTTP client's error
 * the upstream's status): a fault, logged and answered 500.
 */
export function clientStatus(err: unknown): number | undefined {
  if (!err || typeof err !== 'object') return undefined;
  const e = err as { status?: unknown; statusCode?: unknown; expose?: unknown };
  if (e.expose !== true && !isPathNotDecoded(err)) return undefined;
  const status = typeof e.status === 'number' ? e.status : e.statusCode;
  return typeof status === 'number' && Number.isInteger(status) && status >= 400 && status < 500 ? status : undefined;
}

/**
 * The client closed the connection before its answer was written (a streamed list it stopped
 * reading): not a fault of the server, nothing left to answer.
 */
export class ClientLeft extends Error {
  constructor() {
    super('the client went away');
    this.name = 'ClientLeft';
  }
}

/** The last middleware of every app: one table, one body shape, no stack traces out. */
export function errorHandler(table: ErrorStatusTable, shape: ErrorBodyShape, logger: Logger): ErrorRequestHandler {
  return (err, req, res, _next) => {
    if (err instanceof ClientLeft) {
      // An information line (no stack, not a 5xx): the answer never finished, so no status is counted.
      logger.info('client left before the answer ended', {
        requestId: res.locals.requestId,
        method: req.method,
        path: loggableRequestPath(req),
      });
      return void res.destroy();
    }
    const h = toHttpError(err, table);
    if (h.status >= 500 && h.code !== ErrorCodes.DATABASE_UNAVAILABLE && h.code !== ErrorCodes.BUSY) {
      logger.error('request failed', {
        requestId: res.locals.requestId,
        method: req.method,
        path: loggableRequestPath(req),
        error: err instanceof Error ? err.stack : String(err),
      });
    }
    // A streamed list that fails half-way: cut the connection rather than end a truncated body well-formed.
    if (res.headersSent) return void res.destroy();
    if (h.code === ErrorCodes.DATABASE_UNAVAILABLE) res.setHeader('Retry-After', String(DATABASE_RETRY_AFTER_SECONDS));
    if (h.code === ErrorCodes.BUSY) res.setHeader('Retry-After', String(BUSY_RETRY_AFTER_SECONDS));
    sendJson(res, h.status, shape(h));
  };
}

/**
 * The app's last handler (`createHttpApp` adds it after everything mounted): what no router answered
 * itself (a path that does not decode before any route, a webhook body refused by its parser, a
 * page's fault) in the JSON error shape of the path's generation, never Express's HTML page or a
 * stack. 5xx are logged once, with the stack.
 */
export function finalErrorHandler(shapeFor: (path: string) => ErrorBodyShape, logger: Logger): ErrorRequestHandler {
  return (err, req, res, next) => errorHandler(ERROR_STATUS, shapeFor(req.path), logger)(err, req, res, next);
}

export { DomainError };
