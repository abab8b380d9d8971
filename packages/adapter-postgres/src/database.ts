import { Kysely, Migrator, PostgresDialect, sql, type Migration, type MigrationProvider } from 'kysely';
import { Pool, types, type QueryConfig } from 'pg';
import { PGlite } from '@electric-sql/pglite';
import { PGlitePool } from './pglite-pool';
import type { ChangeFeed } from '@tollgate/core';
import { PGliteChangeFeed, PostgresChangeFeed, type ChangeFeedTiming } from './change-feed';
import type { DB } from './schema';
import { markConnectFailure } from './unit-of-work';
import * as initial from './migrations/2026-11-22T00-initial';
import * as signingKeys from './migrations/2026-11-22T01-signing-keys';
import * as billing from './migrations/2026-11-22T02-billing';
import * as idempotency from './migrations/2026-11-22T03-idempotency';
import * as hardening from './migrations/2026-11-22T04-hardening';
import * as changeFeed from './migrations/2026-11-22T05-change-feed';
import * as webhooks from './migrations/2026-11-22T06-webhooks';
import * as tierTags from './migrations/2026-11-22T07-tier-tags';
import * as idempotencyScope from './migrations/2026-11-23T01-idempotency-scope';
import * as deferredCheckouts from './migrations/2026-11-23T02-00-deferred-checkouts';
import * as webhookFairness from './migrations/2026-11-23T02-01-webhook-fairness';
import * as usage from './migrations/2026-11-23T04-usage';
import * as usagePlans from './migrations/2026-11-24T10-00-00-usage-plans';
import * as people from './migrations/2026-11-24T30-00-people';
import * as subscriptionLineItems from './migrations/2026-11-24T30-01-subscription-line-items';
import * as receipts from './migrations/2026-11-24T40-00-receipts';
import * as carts from './migrations/2026-11-24T40-01-carts';
import * as usageLock from './migrations/2026-11-25T10-00-usage-lock';
import * as checkoutGroups from './migrations/2026-11-25T20-00-checkout-groups';
import * as subscriptionPlans from './migrations/2026-11-25T20-01-subscription-plans';
import * as checkoutItems from './migrations/2026-11-25T20-02-checkout-items';
import * as meterRelay from './migrations/2026-11-25T30-00-meter-relay';
import * as meterScale from './migrations/2026-11-25T30-01-meter-scale';
import * as subscriptionPlanItems from './migrations/2026-11-25T50-00-subscription-plan-items';
import * as usageWriteFunctions from './migrations/2026-11-26T10-00-usage-write-functions';
import * as meterSends from './migrations/2026-11-26T60-00-meter-sends';
import * as usageReports from './migrations/2026-11-27T10-00-usage-reports';
import * as creditGrantsHot from './migrations/2026-11-28T10-00-credit-grants-hot';
import * as usageGenericPlans from './migrations/2026-11-28T10-01-usage-generic-plans';
import * as signingKeysPerMode from './migrations/2026-11-29T10-00-signing-keys-per-mode';
import * as openCheckoutSessions from './migrations/2026-11-29T10-01-open-checkout-sessions';
import * as creditGrantsDue from './migrations/2026-11-29T10-02-credit-grants-due';
import * as webhookAttemptsSucceeded from './migrations/2026-11-29T10-03-webhook-attempts-succeeded';
import * as endedEvaluations from './migrations/2026-11-29T10-04-ended-evaluations';

/** Every migration, by dated name; new ones are added here in order. */
const MIGRATIONS: Record<string, Migration> = {
  '2026-11-22T00-initial': initial,
  '2026-11-22T01-signing-keys': signingKeys,
  '2026-11-22T02-billing': billing,
  '2026-11-22T03-idempotency': idempotency,
  '2026-11-22T04-hardening': hardening,
  '2026-11-22T05-change-feed': changeFeed,
  '2026-11-22T06-webhooks': webhooks,
  '2026-11-22T07-tier-tags': tierTags,
  '2026-11-23T01-idempotency-scope': idempotencyScope,
  '2026-11-23T02-00-deferred-checkouts': deferredCheckouts,
  '2026-11-23T02-01-webhook-fairness': webhookFairness,
  '2026-11-23T04-usage': usage,
  '2026-11-24T10-00-00-usage-plans': usagePlans,
  '2026-11-24T30-00-people': people,
  '2026-11-24T30-01-subscription-line-items': subscriptionLineItems,
  '2026-11-24T40-00-receipts': receipts,
  '2026-11-24T40-01-carts': carts,
  '2026-11-25T10-00-usage-lock': usageLock,
  '2026-11-25T20-00-checkout-groups': checkoutGroups,
  '2026-11-25T20-01-subscription-plans': subscriptionPlans,
  '2026-11-25T20-02-checkout-items': checkoutItems,
  '2026-11-25T30-00-meter-relay': meterRelay,
  '2026-11-25T30-01-meter-scale': meterScale,
  '2026-11-25T50-00-subscription-plan-items': subscriptionPlanItems,
  '2026-11-26T10-00-usage-write-functions': usageWriteFunctions,
  '2026-11-26T60-00-meter-sends': meterSends,
  '2026-11-27T10-00-usage-reports': usageReports,
  '2026-11-28T10-00-credit-grants-hot': creditGrantsHot,
  '2026-11-28T10-01-usage-generic-plans': usageGenericPlans,
  '2026-11-29T10-00-signing-keys-per-mode': signingKeysPerMode,
  '2026-11-29T10-01-open-checkout-sessions': openCheckoutSessions,
  '2026-11-29T10-02-credit-grants-due': creditGrantsDue,
  '2026-11-29T10-03-webhook-attempts-succeeded': webhookAttemptsSucceeded,
  '2026-11-29T10-04-ended-evaluations': endedEvaluations,
};

class StaticMigrationProvider implements MigrationProvider {
  constructor(private readonly migrations: Record<string, Migration> = MIGRATIONS) {}
  async getMigrations(): Promise<Record<string, Migration>> {
    return this.migrations;
  }
}

/**
 * The migrator over `migrations` (every migration this build knows; tests pass an older build's
 * set). Unordered migrations are allowed: a migration added later under a name that sorts before
 * one a deployment already ran (main did this: `2026-11-25T10-00-usage-lock` after
 * `2026-11-25T30-01-meter-scale` had shipped) is applied after it, instead of refusing to start
 * ("corrupted migrations"). Each migration stands on its own, so either order works; a fresh
 * database applies them in name order, as before.
 */
function migratorOf(db: Kysely<DB>, migrations?: Record<string, Migration>): Migrator {
  return new Migrator({ db, provider: new StaticMigrationProvider(migrations), allowUnorderedMigrations: true });
}

/** The names of every migration this build knows, in the order a new database applies them. */
export const migrationNames = (): string[] => Object.keys(MIGRATIONS).sort();

/** The migrations named (tests: an older build's set, to upgrade from). */
export const migrationsNamed = (names: readonly string[]): Record<string, Migration> =>
  Object.fromEntries(names.map((n) => [n, MIGRATIONS[n]]));

// int8 (count(*), bigint columns) as a JS number: every count and amount we keep fits in 2^53.
types.setTypeParser(20, (v) => Number(v));

export interface DatabaseOptions {
  /** A PostgreSQL server (`postgres://...`); when absent, embedded PGlite is used. */
  url?: string;
  /** PGlite's data directory; absent: in memory. */
  dataDir?: string;
  /** pg pool size for a server. */
  poolSize?: number;
  /** Told when the server closes an idle pooled connection (the pool replaces it). */
  onIdleError?: (err: Error) => void;
}

export interface DatabaseHandle {
  db: Kysely<DB>;
  kind: 'postgres' | 'pglite';
  /** A new change feed over this database: a LISTEN connection of its own (server), or PGlite's in-process channel. */
  changeFeed(options?: { onError?: (e: unknown) => void; applicationName?: string } & ChangeFeedTiming): ChangeFeed;
  /** Connections of the pool (server only; PGlite is one in-process connection). */
  poolStats?(): { total: number; idle: number; waiting: number };
  close(): Promise<void>;
}

/** The pg pool of each server database (`pingDatabase` asks it directly, with a statement timeout). */
const pools = new WeakMap<object, Pool>();

export function openDatabase(options: DatabaseOptions = {}): DatabaseHandle {
  if (options.url) {
    // A server that does not answer must not hold requests forever: a connection attempt gives up
    // after 10 s, and the request answers 503 (database unavailable) instead of hanging. TCP
    // keepalive (probes after 10 s idle) lets the OS find a connection whose peer vanished (a
    // failover, a dropped NAT entry) instead of a statement waiting on it for hours. No statement
    // timeout for all: long transactions (migrations, exports) are legitimate; the readiness
    // probe caps its own (`pingDatabase`).
    const pool = new Pool({
      connectionString: options.url,
      max: options.poolSize ?? 10,
      connectionTimeoutMillis: 10_000,
      keepAlive: true,
      keepAliveInitialDelayMillis: 10_000,
    });
    // An idle connection the server closes (restart, failover) is dropped by the pool and replaced
    // on next use; without a listener pg would raise it as an uncaught error and end the process.
    pool.on('error', (err) => options.onIdleError?.(err));
    // A connection that dies while checked out (between the statements of a transaction, the
    // server crashing or restarting) emits 'error' on its client, which the pool no longer
    // listens to then: without a listener of its own the process would end. The statement that
    // was running, or the next one, fails with the error (503 DATABASE_UNAVAILABLE to a client).
    pool.on('connect', (client) => client.on('error', (err) => options.onIdleError?.(err)));
    // Whatever fails while taking a connection is an outage (marked for the unit of work): the
    // server's refusals at connect carry codes that would otherwise read as statement errors.
    const connecting = {
      connect: () => pool.connect().catch((e: unknown) => Promise.reject(markConnectFailure(e))),
      end: () => pool.end(),
    };
    const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool: connecting }) });
    pools.set(db, pool);
    const url = options.url;
    return {
      db,
      kind: 'postgres',
      changeFeed: (o) => new PostgresChangeFeed(url, o),
      poolStats: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }),
      close: () => db.destroy(),
    };
  }
  const pglite = new PGlite(options.dataDir);
  const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool: new PGlitePool(pglite) }) });
  return { db, kind: 'pglite', changeFeed: () => new PGliteChangeFeed(pglite), close: () => db.destroy() };
}

/** The migrations this build knows that the database has not applied (empty: current). */
export async function pendingMigrations(db: Kysely<DB>): Promise<string[]> {
  return (await migratorOf(db).getMigrations()).filter((m) => m.executedAt === undefined).map((m) => m.name);
}

/**
 * Answers when the database takes a query (readiness). With `timeoutMs`, fails once that long has
 * passed: a database that hangs (a stalled network, a frozen server) makes a probe answer "not
 * ready" in time for its caller's own timeout, and on a server the hung connection is closed by
 * the statement's own timeout rather than kept out of the pool.
 */
export async function pingDatabase(db: Kysely<DB>, options: { timeoutMs?: number } = {}): Promise<void> {
  const { timeoutMs } = options;
  if (timeoutMs === undefined) return void (await sql`select 1`.execute(db));
  const pool = pools.get(db);
  // pg reads `query_timeout` from a query's config too (its types only list it for the client):
  // the query fails then, and the pool closes the connection it hung on.
  const config = { text: 'select 1', query_timeout: timeoutMs } as QueryConfig;
  const ping: Promise<unknown> = pool ? pool.query(config) : sql`select 1`.execute(db);
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    await Promise.race([ping, late]);
  } finally {
    clearTimeout(timer);
    ping.catch(() => undefined);
  }
}

/** Applies every pending migration; applying them again is a no-op. Returns the names applied now. */
export async function migrateToLatest(db: Kysely<DB>, migrations?: Record<string, Migration>): Promise<string[]> {
  const { error, results } = await migratorOf(db, migrations).migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

/**
 * One secret sealed with the deployment's `TOLLGATE_SECRET` (a signing key's, live or test), if
 * any is stored: what start-up opens to prove the secret is the one the database was written with.
 */
export async function anySealedSecret(db: Kysely<DB>): Promise<string | undefined> {
  // Before the first migration (`tollgate migrate` on a new database) there is nothing to open.
  const { rows } = await sql<{ live: string | null; test: string | null }>`
    select to_regclass('signing_keys')::text as live, to_regclass('test_signing_keys')::text as test`.execute(db);
  if (!rows[0]?.live || !rows[0]?.test) return undefined;
  const live = await db.selectFrom('signing_keys').select('secret_ciphertext').limit(1).executeTakeFirst();
  if (live) return live.secret_ciphertext;
  const test = await db.selectFrom('test_signing_keys').select('secret_ciphertext').limit(1).executeTakeFirst();
  return test?.secret_ciphertext;
}
