import type { IncomingMessage } from 'node:http';
import type { Request, RequestHandler, Response } from 'express';
import { ipKeyGenerator, MemoryStore, rateLimit } from 'express-rate-limit';
import { DomainError, ErrorCodes, hashApiKey, type ApiKeyHash } from '@tollgate/core';
import type { AuthContext, KeySource } from './auth';
import { clientAddress } from './client-address';

export interface RateLimitConfig {
  /** Off only for benchmarks and load tests. */
  enabled: boolean;
  /** Failed authentications (401) one client address, and one presented key, may cause per minute. */
  authFailuresPerMinute: number;
  /** Writes (POST, PUT, PATCH, DELETE) one API key may make per minute, metering aside. */
  writesPerMinute: number;
  /**
   * Metering writes (routes of the `usage` scope: record, consume, reserve, commit, release) one API
   * key may make per minute: their own budget, since a vendor meters as often as its own users act.
   */
  usageWritesPerMinute?: number;
  /** Reverse proxies in front of the instance (`TRUST_PROXY`): client addresses come from `X-Forwarded-For` only when above 0. */
  trustProxy?: number;
}

/** Metering writes per API key per minute unless set (10 000 a second, per instance). */
export const DEFAULT_USAGE_WRITES_PER_MINUTE = 600_000;

export const DEFAULT_RATE_LIMITS: RateLimitConfig = {
  enabled: true,
  authFailuresPerMinute: 30,
  writesPerMinute: 1200,
  usageWritesPerMinute: DEFAULT_USAGE_WRITES_PER_MINUTE,
};

/** The two write budgets of a key: metering (the `usage` scope's writes) and every other write. */
export type WriteBudget = 'writes' | 'usage';

/** Why a request is refused before authentication, and for how many more seconds. */
export interface AuthRefusal {
  reason: string;
  retryAfterSeconds: number;
}

/** The limiters one process shares across its generations (counters live in this process: per instance). */
export interface RateLimits {
  /**
   * Before authentication: refuses a presented key over its own failure budget, and any key not
   * known good from an address over its budget; counts the request's failure once its answer is
   * known (a 401), never while it is in flight. `source`: the header the routes behind it
   * authenticate with, the only one it reads (a request with the sender's own key in the other
   * header and a guess in this one is still the guess's).
   */
  authFailures(source: KeySource): RequestHandler;
  /** After authentication, on writes: an API key over its write budget is refused. */
  writes: RequestHandler;
  /** The same for metering writes (routes of the `usage` scope), against their own budget. */
  usageWrites: RequestHandler;
  /**
   * What `authFailures` would answer now (for handlers outside express: the check's fast path),
   * for the presented key's digest (`hashApiKey`, computed once per request; undefined: no key).
   */
  authRefusal(req: IncomingMessage, presented: ApiKeyHash | undefined): AuthRefusal | null;
  /** A key authenticated, by its digest (the fast path tells what express would have seen). */
  authSucceeded(presented: ApiKeyHash): void;
  /**
   * For writes answered outside express (the usage fast path): takes one write of the key's
   * budget and answers true, or, over the budget, takes nothing and answers false (the request is
   * then left to express, whose `writes` counts it and answers the 429).
   */
  claimWrite(keyId: string, budget?: WriteBudget): Promise<boolean>;
  /** Gives back a write `claimWrite` took, for a request left to express after all (which counts it itself). */
  releaseWrite(keyId: string, budget?: WriteBudget): Promise<void>;
}

const WINDOW_MS = 60_000;
/** How many counters (per map: addresses, keys) and known-good keys one process keeps at most (the oldest go first). */
const MAX_ENTRIES = 100_000;
const pass: RequestHandler = (_req, _res, next) => next();

/** The key a request presents in the header its routes authenticate with (`auth.ts` reads the same). */
function presentedKey(req: IncomingMessage, source: KeySource): string | undefined {
  if (source === 'x-api-key') {
    const x = req.headers['x-api-key'];
    return typeof x === 'string' ? x.trim() || undefined : undefined;
  }
  const m = /^Bearer\s+(.+)$/i.exec(req.headers.authorization ?? '');
  return m?.[1].trim() || undefined;
}

/** Whole seconds (at least 1) from `now` to `resetAt`. */
const secondsUntil = (resetAt: number, now: number) => Math.max(1, Math.ceil((resetAt - now) / 1000));

/** Fixed one-minute windows of counts, bounded in size. */
class Windows {
  private readonly entries = new Map<string, { count: number; resetAt: number }>();

  /** The key's window while its minute lasts, else undefined. */
  current(key: string, now: number): { count: number; resetAt: number } | undefined {
    const e = this.entries.get(key);
    return e && e.resetAt > now ? e : undefined;
  }

  count(key: string, now: number): { count: number; resetAt: number } {
    return this.current(key, now) ?? { count: 0, resetAt: now + WINDOW_MS };
  }

  add(key: string, now: number): void {
    const current = this.count(key, now);
    this.entries.delete(key);
    this.entries.set(key, { count: current.count + 1, resetAt: current.resetAt });
    if (this.entries.size > MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value as string);
  }
}

/** Keys that authenticated recently: an address over its failure budget does not lock them out. */
class KnownGood {
  private readonly until = new Map<string, number>();

  add(key: string, now: number): void {
    // Moved to the young end on every success, so the map's oldest (the first to go when it is
    // full) are the keys least recently seen, never a busy one.
    this.until.delete(key);
    this.until.set(key, now + WINDOW_MS);
    if (this.until.size > MAX_ENTRIES) this.until.delete(this.until.keys().next().value as string);
  }

  has(key: string, now: number): boolean {
    return (this.until.get(key) ?? 0) > now;
  }
}

/**
 * The failed-authentication budget: failures are counted when their answer is known (a 401), per
 * client address and per presented key, so requests in flight never count. A presented key is
 * refused past its own budget. An address past its budget is refused for keys it has not seen
 * authenticate in the last window; a key that did (a vendor's backend sharing the address with a
 * broken client) is limited by its own budget only, never by others' failures. An unknown key from
 * such an address learns nothing: it is refused before it is looked up.
 */
class AuthFailureBudget {
  /** Failures per client address and per presented key (its digest), in maps of their own (no prefixed key to build per request). */
  private readonly addressFailures = new Windows();
  private readonly keyFailures = new Windows();
  private readonly good = new KnownGood();

  constructor(
    private readonly budget: number,
    /** Reverse proxies in front (`TRUST_PROXY`): whose address counts. */
    private readonly trustProxy = 0,
  ) {}

  /** `key`: the presented key as the limiter remembers it, its digest (never the key). */
  refusal(req: IncomingMessage, key: ApiKeyHash | undefined): AuthRefusal | null {
    const now = Date.now();
    if (key !== undefined) {
      const own = this.keyFailures.current(key, now);
      if (own && own.count >= this.budget)
        return { reason: 'too many failed authentications with this API key', retryAfterSeconds: secondsUntil(own.resetAt, now) };
      if (this.good.has(key, now)) return null;
    }
    const address = this.addressFailures.current(ipKeyGenerator(clientAddress(req, this.trustProxy)), now);
    if (address && address.count >= this.budget)
      return { reason: 'too many failed authentications from this address', retryAfterSeconds: secondsUntil(address.resetAt, now) };
    return null;
  }

  failed(req: IncomingMessage, key: ApiKeyHash | undefined): void {
    const now = Date.now();
    this.addressFailures.add(ipKeyGenerator(clientAddress(req, this.trustProxy)), now);
    if (key !== undefined) this.keyFailures.add(key, now);
  }

  succeeded(key: ApiKeyHash): void {
    this.good.add(key, Date.now());
  }

  middleware(source: KeySource): RequestHandler {
    return (req, res, next) => {
      // Digested once for the request; the key itself is not kept.
      const raw = presentedKey(req, source);
      const presented = raw === undefined ? undefined : hashApiKey(raw);
      const refusal = this.refusal(req, presented);
      if (refusal) {
        res.setHeader('Retry-After', String(refusal.retryAfterSeconds));
        return next(new DomainError(ErrorCodes.RATE_LIMITED, `${refusal.reason}; retry in ${refusal.retryAfterSeconds} s`));
      }
      res.on('finish', () => {
        if (res.locals.auth && presented !== undefined) this.succeeded(presented);
        else if (res.statusCode === 401) this.failed(req, presented);
      });
      next();
    };
  }
}

/** 429 in the generation's shape (its error handler writes it), with `Retry-After` in seconds. */
const refuse = (what: string) => (req: Request, res: Response, next: (e: unknown) => void) => {
  const reset = (req as Request & { rateLimit?: { resetTime?: Date } }).rateLimit?.resetTime;
  const seconds = reset ? Math.max(1, Math.ceil((reset.getTime() - Date.now()) / 1000)) : 60;
  res.setHeader('Retry-After', String(seconds));
  next(new DomainError(ErrorCodes.RATE_LIMITED, `${what}; retry in ${seconds} s`));
};

/**
 * Limits of failed authentication per client address and presented key, and of writes per API
 * key, over one-minute windows kept in this process: with N instances behind a load balancer a
 * client gets up to N times the budget (docs/decisions.md).
 */
export function createRateLimits(config: RateLimitConfig): RateLimits {
  if (!config.enabled)
    return {
      authFailures: () => pass,
      writes: pass,
      usageWrites: pass,
      authRefusal: () => null,
      authSucceeded: () => undefined,
      claimWrite: async () => true,
      releaseWrite: async () => undefined,
    };
  const budget = new AuthFailureBudget(config.authFailuresPerMinute, config.trustProxy);
  // Each budget's counters, shared by the express limiter and the fast path (keyed by API key id).
  const budgets: Record<WriteBudget, { store: MemoryStore; limit: number; what: string }> = {
    writes: { store: new MemoryStore(), limit: config.writesPerMinute, what: 'too many writes with this API key' },
    usage: {
      store: new MemoryStore(),
      limit: config.usageWritesPerMinute ?? DEFAULT_USAGE_WRITES_PER_MINUTE,
      what: 'too many metering writes with this API key',
    },
  };
  const limiter = ({ store, limit, what }: (typeof budgets)[WriteBudget]) =>
    rateLimit({
      windowMs: WINDOW_MS,
      limit,
      store,
      skip: (req) => req.method === 'GET' || req.method === 'HEAD' || req.method === 'OPTIONS',
      keyGenerator: (_req, res) => (res.locals.auth as AuthContext | undefined)?.key.id ?? 'anonymous',
      standardHeaders: false,
      legacyHeaders: false,
      handler: refuse(what),
    });
  return {
    claimWrite: async (keyId, which = 'writes') => {
      const { store, limit } = budgets[which];
      if ((await store.increment(keyId)).totalHits <= limit) return true;
      await store.decrement(keyId);
      return false;
    },
    releaseWrite: (keyId, which = 'writes') => budgets[which].store.decrement(keyId),
    authFailures: (source) => budget.middleware(source),
    authRefusal: (req, presented) => budget.refusal(req, presented),
    authSucceeded: (presented) => budget.succeeded(presented),
    writes: limiter(budgets.writes),
    usageWrites: limiter(budgets.usage),
  };
}
