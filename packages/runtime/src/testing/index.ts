import { DEFAULT_HTTP_SERVER_LIMITS } from '@tollgate/http';
import type { Core, Tenant } from '@tollgate/core';
import { buyPlan, FixedClock, sampleCatalog } from '@tollgate/core/testing';
import { createTestDatabase, type TestDatabase } from '@tollgate/adapter-postgres';
import type { Config } from '../config';
import { createRuntime, type Runtime, type RuntimeOptions } from '../container';

export const testConfig = (over: Partial<Config> = {}): Config => ({
  port: 0,
  publicUrl: 'http://localhost:3000',
  databaseUrl: undefined,
  databaseReadUrl: undefined,
  checkCacheEntries: 200_000,
  checkIndexMaxLicenses: 1_000_000,
  changeFeedBoundMs: 1000,
  checkOutageGraceSeconds: 60,
  dataDir: '/nonexistent',
  signer: 'ecdsa',
  masterSecret: 'test master secret, not for production',
  workerIntervalMs: 1000,
  runWorker: false,
  // Tests' receivers listen on 127.0.0.1.
  webhookAllowPrivate: true,
  webhookEventRetentionDays: 30,
  usageLedgerRetentionMonths: 0,
  usageGroupCommit: true,
  // No waiting: a test's usage goes to the (nock'd) provider on the next passes.
  usageMeterWindowSeconds: 0,
  usageEventWindowSeconds: 0,
  webhookConcurrency: 16,
  logRequests: false,
  logLevel: 'silent',
  stripeSecretKey: undefined,
  stripeWebhookSecret: undefined,
  maxSeats: 10_000,
  eventLeaseSeconds: 120,
  // Off in tests, which fire many requests from one address; the hardening tests turn them on.
  rateLimits: { enabled: false, authFailuresPerMinute: 30, writesPerMinute: 1200, usageWritesPerMinute: 600_000, trustProxy: 0 },
  http: DEFAULT_HTTP_SERVER_LIMITS,
  ...over,
});

/** A runtime over a fresh migrated database, with a clock that stands still until moved. */
export interface TestWorld extends Runtime {
  db: TestDatabase;
  clock: FixedClock;
}

/** A runtime over a fresh migrated database (PGlite, or the server of TEST_DATABASE_URL). */
export async function createTestWorld(
  options: { kind?: 'pglite' | 'postgres'; config?: Partial<Config> } & Omit<RuntimeOptions, 'database' | 'clock'> = {},
): Promise<TestWorld> {
  const db = await createTestDatabase(options.kind ?? 'pglite');
  const clock = new FixedClock(new Date());
  const silent = { info: () => undefined, error: () => undefined };
  const runtime = await createRuntime(testConfig(options.config), { ...options, database: db, clock, logger: options.logger ?? silent });
  return {
    ...runtime,
    db,
    clock,
    close: async () => {
      await runtime.core.stopListening();
      await db.drop();
    },
  };
}

export interface SeededOrg {
  tenant: Tenant;
  testTenant: Tenant;
  keys: Record<string, string>;
  testKeys: Record<string, string>;
  /** API keys: full live, full test, read-only live. */
  liveKey: string;
  testKey: string;
  readOnlyKey: string;
}

/** An organisation with the sample catalog in live and test mode and three API keys. */
export async function seedOrganisation({ core }: { core: Core }, name: string): Promise<SeededOrg> {
  const { apiKeys, importer } = core;
  const org = await apiKeys.ensureOrganisation(name);
  const live = await importer.apply(sampleCatalog(name, false));
  const test = await importer.apply(sampleCatalog(name, true));
  return {
    tenant: { organisationId: org.id, isTest: false },
    testTenant: { organisationId: org.id, isTest: true },
    keys: live.keys,
    testKeys: test.keys,
    liveKey: (await apiKeys.create({ organisation: name, scopes: ['*'], isTest: false })).plaintext,
    testKey: (await apiKeys.create({ organisation: name, scopes: ['*'], isTest: true })).plaintext,
    readOnlyKey: (await apiKeys.create({ organisation: name, scopes: ['products:read', 'plans:read', 'licenses:read'], isTest: false }))
      .plaintext,
  };
}

/** A completed purchase of the plan for the grantee (as a payment provider would report it). */
export async function purchase({ core }: { core: Core }, planId: string, granteeId: string, quantity = 1) {
  return buyPlan(core, planId, quantity, granteeId, 'sandbox');
}
export * from './down-after';
export * from './receiver';
export * from './processes';
