/**
 * Domain errors carry a stable machine-readable `code` and never an HTTP status: each interface
 * generation maps codes to statuses in one table at its edge.
 */
export const ErrorCodes = {
  VALIDATION_FAILED: 'VALIDATION_FAILED',
  RATE_LIMITED: 'RATE_LIMITED',
  UNAUTHENTICATED: 'UNAUTHENTICATED',
  FORBIDDEN: 'FORBIDDEN',
  NOT_FOUND: 'NOT_FOUND',
  CONFLICT: 'CONFLICT',
  IDEMPOTENCY_KEY_REUSED: 'IDEMPOTENCY_KEY_REUSED',
  IDEMPOTENCY_KEY_IN_USE: 'IDEMPOTENCY_KEY_IN_USE',
  ORGANISATION_NOT_FOUND: 'ORGANISATION_NOT_FOUND',
  PRODUCT_NOT_FOUND: 'PRODUCT_NOT_FOUND',
  PRODUCT_ARCHIVED: 'PRODUCT_ARCHIVED',
  PRODUCT_HAS_SUBSCRIPTIONS: 'PRODUCT_HAS_SUBSCRIPTIONS',
  PLAN_NOT_FOUND: 'PLAN_NOT_FOUND',
  PLAN_ARCHIVED: 'PLAN_ARCHIVED',
  /** The plan is inactive (`active: false`): it is not sold to new customers. */
  PLAN_NOT_ON_SALE: 'PLAN_NOT_ON_SALE',
  PLAN_HAS_SUBSCRIPTIONS: 'PLAN_HAS_SUBSCRIPTIONS',
  PLAN_NOT_IN_PRODUCT: 'PLAN_NOT_IN_PRODUCT',
  PLAN_NOT_FREE_OR_EVALUATION: 'PLAN_NOT_FREE_OR_EVALUATION',
  PRICING_TABLE_NOT_FOUND: 'PRICING_TABLE_NOT_FOUND',
  SUBSCRIPTION_NOT_FOUND: 'SUBSCRIPTION_NOT_FOUND',
  SUBSCRIPTION_CANCELED: 'SUBSCRIPTION_CANCELED',
  SUBSCRIPTION_NOT_REACTIVATABLE: 'SUBSCRIPTION_NOT_REACTIVATABLE',
  SUBSCRIPTION_ALREADY_ON_PLAN: 'SUBSCRIPTION_ALREADY_ON_PLAN',
  SUBSCRIPTION_PERIOD_NOT_ENDED: 'SUBSCRIPTION_PERIOD_NOT_ENDED',
  SUBSCRIPTION_NOT_PER_SEAT: 'SUBSCRIPTION_NOT_PER_SEAT',
  SEATS_INVALID_COUNT: 'SEATS_INVALID_COUNT',
  SEATS_BELOW_MINIMUM: 'SEATS_BELOW_MINIMUM',
  SEATS_EXCEED_UNASSIGNED: 'SEATS_EXCEED_UNASSIGNED',
  SEATS_LIMIT_EXCEEDED: 'SEATS_LIMIT_EXCEEDED',
  LICENSE_NOT_FOUND: 'LICENSE_NOT_FOUND',
  LICENSE_CANCELED: 'LICENSE_CANCELED',
  EVENT_NOT_FOUND: 'EVENT_NOT_FOUND',
  CHECK_GRACE_INVALID: 'CHECK_GRACE_INVALID',
  CHECKOUT_PROMO_CODE_CONFLICT: 'CHECKOUT_PROMO_CODE_CONFLICT',
  CHECKOUT_INVALID_EMAIL: 'CHECKOUT_INVALID_EMAIL',
  CHECKOUT_INVALID_URL: 'CHECKOUT_INVALID_URL',
  CHECKOUT_CURRENCY_NOT_SUPPORTED: 'CHECKOUT_CURRENCY_NOT_SUPPORTED',
  CHECKOUT_QUANTITY_NOT_PER_SEAT: 'CHECKOUT_QUANTITY_NOT_PER_SEAT',
  CHECKOUT_QUANTITY_BELOW_MINIMUM: 'CHECKOUT_QUANTITY_BELOW_MINIMUM',
  CHECKOUT_QUANTITY_INVALID: 'CHECKOUT_QUANTITY_INVALID',
  CHECKOUT_SESSION_NOT_FOUND: 'CHECKOUT_SESSION_NOT_FOUND',
  CHECKOUT_ALREADY_COMPLETED: 'CHECKOUT_ALREADY_COMPLETED',
  CHECKOUT_CANCELED: 'CHECKOUT_CANCELED',
  PAYMENT_NOT_AVAILABLE: 'PAYMENT_NOT_AVAILABLE',
  PAYMENT_PROVIDER_FAILED: 'PAYMENT_PROVIDER_FAILED',
  /** The database does not answer (an outage); the message says what may have been written; retry after `Retry-After`. */
  DATABASE_UNAVAILABLE: 'DATABASE_UNAVAILABLE',
  METER_EXISTS: 'METER_EXISTS',
  HOLD_NOT_FOUND: 'HOLD_NOT_FOUND',
  HOLD_SETTLED: 'HOLD_SETTLED',
  /** The cart was abandoned or paid: it changes no more. */
  CART_NOT_ACTIVE: 'CART_NOT_ACTIVE',
  /** The database answers, but every connection of this instance stayed in use for too long: retry shortly. */
  BUSY: 'BUSY',
} as const;

/**
 * What an outage's message says of a change whose COMMIT got no answer (the PostgreSQL unit of
 * work's "commit in doubt"): a later step must keep that claim, not replace it.
 */
export const MAY_HAVE_BEEN_APPLIED = 'may have been applied';

export type ErrorCode = (typeof ErrorCodes)[keyof typeof ErrorCodes];

/** Seconds a client is asked to wait (`Retry-After`) before retrying while the database does not answer (DATABASE_UNAVAILABLE). */
export const DATABASE_RETRY_AFTER_SECONDS = 5;
/** Seconds a client is asked to wait (`Retry-After`) when every database connection was in use (BUSY: a burst, not an outage). */
export const BUSY_RETRY_AFTER_SECONDS = 1;

/** One offending input, for validation errors. */
export interface ErrorDetail {
  property: string;
  error: string;
}

export class DomainError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details: ErrorDetail[] = [],
  ) {
    super(message);
    this.name = 'DomainError';
  }
}

export const isDomainError = (e: unknown): e is DomainError => e instanceof DomainError;

export const fail = (code: ErrorCode, message: string, details?: ErrorDetail[]): never => {
  throw new DomainError(code, message, details);
};

/** A request that does not validate; `details` name each offending property. */
export const invalid = (property: string, error: string): never =>
  fail(ErrorCodes.VALIDATION_FAILED, `${property}: ${error}`, [{ property, error }]);

/** The database unreachable, or every connection in use: the change was not made (or is in doubt), and may be tried again. */
export const isOutage = (e: unknown): e is DomainError =>
  isDomainError(e) && (e.code === ErrorCodes.DATABASE_UNAVAILABLE || e.code === ErrorCodes.BUSY);

/**
 * An outage (or a full pool) met after an earlier step of the same change was done (`done`): the
 * same code, saying what was done and what to do (`then`) instead of the unit of work's "nothing
 * was changed"; a COMMIT in doubt keeps its own claim after `done`. Anything else (or an answer that
 * says so already) is returned as it is.
 */
export function outageAfter(e: unknown, done: string, then: string): unknown {
  if (!isOutage(e) || e.message.startsWith(done)) return e;
  if (e.message.includes(MAY_HAVE_BEEN_APPLIED)) return new DomainError(e.code, `${done}; then ${e.message}`, e.details);
  const why =
    e.code === ErrorCodes.BUSY
      ? 'every database connection stayed in use before the rest was written'
      : 'the database became unavailable before the rest was written';
  return new DomainError(e.code, `${done}, but ${why}: ${then}`, e.details);
}
