import type { Request, RequestHandler, Response } from 'express';
import { ipKeyGenerator, MemoryStore, rateLimit } from 'express-rate-limit';
import { DomainError, ErrorCodes } from '@tollgate/core';
import type { AuthContext } from './auth';
import { clientAddress } from './client-address';
import type { IncomingMessage } from 'node:http';

export interface RateLimitConfig {
  /** Off only for benchmarks and load tests. */
  enabled: boolean;
  /** Failed authentications (401) one client address may cause per minute. */
  authFailuresPerMinute: number;
  /** Writes (POST, PUT, PATCH, DELETE) one API key may make per minute. */
  writesPerMinute: number;
  /** Reverse proxies in front of the instance (`TRUST_PROXY`): client addresses come from `X-Forwarded-For` only when above 0. */
  trustProxy?: number;
}

export const DEFAULT_RATE_LIMITS: RateLimitConfig = { enabled: true, authFailuresPerMinute: 30, writesPerMinute: 1200 };

/** The limiters one process shares across its generations (counters live in this process: per instance). */
export interface RateLimits {
  /** Before authentication: a client address over its failed-authentication budget is refused at once. */
  authFailures: RequestHandler;
  /** After authentication, on writes: an API key over its write budget is refused. */
  writes: RequestHandler;
  /** Would `authFailures` refuse this client address now? (for handlers outside express: the check's fast path) */
  overAuthFailureBudget(address: string | undefined): Promise<boolean>;
  /** The client address these limits count by (`clientAddress` with the configured proxies). */
  addressOf(req: IncomingMessage): string;
}

const WINDOW_MS = 60_000;
const pass: RequestHandler = (_req, _res, next) => next();

/** 429 in the generation's shape (its error handler writes it), with `Retry-After` in seconds. */
const refuse = (what: string) => (req: Request, res: Response, next: (e: unknown) => void) => {
  const reset = (req as Request & { rateLimit?: { resetTime?: Date } }).rateLimit?.resetTime;
  const seconds = reset ? Math.max(1, Math.ceil((reset.getTime() - Date.now()) / 1000)) : 60;
  res.setHeader('Retry-After', String(seconds));
  next(new DomainError(ErrorCodes.RATE_LIMITED, `${what}; retry in ${seconds} s`));
};

/**
 * Limits of failed authentication per client address and of writes per API key, over a one-minute
 * window kept in this process (express-rate-limit's memory store): with N instances behind a load
 * balancer a client gets up to N times the budget (docs/decisions.md).
 */
export function createRateLimits(config: RateLimitConfig): RateLimits {
  const addressOf = (req: IncomingMessage) => clientAddress(req, config.trustProxy);
  if (!config.enabled) return { authFailures: pass, writes: pass, overAuthFailureBudget: async () => false, addressOf };
  const failures = new MemoryStore();
  const addressKey = (address: string | undefined) => ipKeyGenerator(address ?? 'unknown');
  return {
    addressOf,
    overAuthFailureBudget: async (address) => ((await failures.get(addressKey(address)))?.totalHits ?? 0) >= config.authFailuresPerMinute,
    authFailures: rateLimit({
      store: failures,
      windowMs: WINDOW_MS,
      limit: config.authFailuresPerMinute,
      skipSuccessfulRequests: true,
      requestWasSuccessful: (_req, res) => res.statusCode !== 401,
      // Written out (not through addressKey): express-rate-limit checks that the generator calls ipKeyGenerator.
      keyGenerator: (req) => ipKeyGenerator(clientAddress(req, config.trustProxy)),
      standardHeaders: false,
      legacyHeaders: false,
      handler: refuse('too many failed authentications from this address'),
    }),
    writes: rateLimit({
      windowMs: WINDOW_MS,
      limit: config.writesPerMinute,
      skip: (req) => req.method === 'GET' || req.method === 'HEAD' || req.method === 'OPTIONS',
      keyGenerator: (_req, res) => (res.locals.auth as AuthContext | undefined)?.key.id ?? 'anonymous',
      standardHeaders: false,
      legacyHeaders: false,
      handler: refuse('too many writes with this API key'),
    }),
  };
}
