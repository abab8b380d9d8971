import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { DEFAULT_MAX_SEATS } from '@tollgate/core';

export interface Config {
  port: number;
  /** Address customers and vendors reach the service at (links, hosted pages). */
  publicUrl: string;
  /** A PostgreSQL server; unset: embedded PGlite in `dataDir`. */
  databaseUrl: string | undefined;
  /** A read replica for the check's snapshot loads (`DATABASE_READ_URL`, optional, server only). */
  databaseReadUrl: string | undefined;
  /** A bearer token `/metrics` requires (`METRICS_TOKEN`); absent: `/metrics` is open (keep it off the public network). */
  metricsToken?: string;
  /** Entitlement snapshots one instance keeps (`CHECK_CACHE_ENTRIES`). */
  checkCacheEntries: number;
  dataDir: string;
  signer: 'ecdsa' | 'hmac';
  /** Encrypts signing keys at rest. */
  masterSecret: string;
  /** How often the event worker and the period-end sweep look for work when not woken. */
  workerIntervalMs: number;
  /** Run the event worker and sweep in this process. */
  runWorker: boolean;
  logRequests: boolean;
  /** Stripe: with both set, payments go to Stripe instead of the sandbox. */
  stripeSecretKey: string | undefined;
  stripeWebhookSecret: string | undefined;
  /** Seats one subscription may hold (`MAX_SEATS`). */
  maxSeats: number;
  /** How long a worker holds an event before another may take it over (`EVENT_LEASE_SECONDS`). */
  eventLeaseSeconds: number;
  /** Failed-authentication and write limits per instance (`RATE_LIMIT`, `RATE_LIMIT_AUTH_FAILURES`, `RATE_LIMIT_WRITES`). */
  rateLimits: { enabled: boolean; authFailuresPerMinute: number; writesPerMinute: number };
}

export class ConfigError extends Error {}

/**
 * Reads the configuration from the environment. With PGlite and no `TOLLGATE_SECRET`, a secret is
 * generated once and kept in the data directory; with a server the secret must be given, since
 * every instance must share it.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const port = Number(env.PORT ?? 3000);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new ConfigError(`PORT must be a port number, got ${env.PORT}`);
  const dataDir = path.resolve(env.DATA_DIR ?? './data');
  const databaseUrl = env.DATABASE_URL || undefined;
  const databaseReadUrl = env.DATABASE_READ_URL || undefined;
  if (databaseReadUrl && !databaseUrl) throw new ConfigError('DATABASE_READ_URL needs DATABASE_URL (a replica of that server)');
  const signer = (env.SIGNER ?? 'ecdsa').toLowerCase();
  if (signer !== 'ecdsa' && signer !== 'hmac') throw new ConfigError(`SIGNER must be ecdsa or hmac, got ${env.SIGNER}`);
  let masterSecret = env.TOLLGATE_SECRET;
  if (!masterSecret) {
    if (databaseUrl)
      throw new ConfigError('TOLLGATE_SECRET is required with DATABASE_URL (every instance must share it; at least 16 characters)');
    masterSecret = persistedSecret(dataDir);
  }
  if (masterSecret.length < 16) throw new ConfigError('TOLLGATE_SECRET must be at least 16 characters');
  const maxSeats = Number(env.MAX_SEATS ?? DEFAULT_MAX_SEATS);
  if (!Number.isSafeInteger(maxSeats) || maxSeats < 1 || maxSeats > 1_000_000)
    throw new ConfigError(`MAX_SEATS must be a whole number from 1 to 1000000, got ${env.MAX_SEATS}`);
  const positive = (name: string, fallback: number) => {
    const v = Number(env[name] ?? fallback);
    if (!Number.isSafeInteger(v) || v < 1) throw new ConfigError(`${name} must be a whole number of 1 or more, got ${env[name]}`);
    return v;
  };
  const rateLimit = (env.RATE_LIMIT ?? 'on').toLowerCase();
  if (rateLimit !== 'on' && rateLimit !== 'off') throw new ConfigError(`RATE_LIMIT must be on or off, got ${env.RATE_LIMIT}`);
  if (!!env.STRIPE_SECRET_KEY !== !!env.STRIPE_WEBHOOK_SECRET) {
    throw new ConfigError('set both STRIPE_SECRET_KEY and STRIPE_WEBHOOK_SECRET to use Stripe (or neither for the sandbox)');
  }
  return {
    port,
    publicUrl: (env.PUBLIC_URL ?? `http://localhost:${port}`).replace(/\/$/, ''),
    databaseUrl,
    databaseReadUrl,
    checkCacheEntries: positive('CHECK_CACHE_ENTRIES', 200_000),
    metricsToken: env.METRICS_TOKEN || undefined,
    dataDir,
    signer,
    masterSecret,
    workerIntervalMs: Number(env.WORKER_INTERVAL_MS ?? 1000),
    runWorker: env.RUN_WORKER !== 'false',
    logRequests: env.LOG_REQUESTS !== 'false',
    stripeSecretKey: env.STRIPE_SECRET_KEY || undefined,
    stripeWebhookSecret: env.STRIPE_WEBHOOK_SECRET || undefined,
    maxSeats,
    eventLeaseSeconds: positive('EVENT_LEASE_SECONDS', 120),
    rateLimits: {
      enabled: rateLimit === 'on',
      authFailuresPerMinute: positive('RATE_LIMIT_AUTH_FAILURES', 30),
      writesPerMinute: positive('RATE_LIMIT_WRITES', 1200),
    },
  };
}

function persistedSecret(dataDir: string): string {
  const file = path.join(dataDir, 'secret');
  fs.mkdirSync(dataDir, { recursive: true });
  if (fs.existsSync(file)) return fs.readFileSync(file, 'utf8').trim();
  const secret = randomBytes(32).toString('hex');
  fs.writeFileSync(file, secret, { mode: 0o600 });
  return secret;
}
