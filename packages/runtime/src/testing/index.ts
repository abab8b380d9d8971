import type { Container } from 'inversify';
import { ApiKeyService, CatalogFileImport, CheckoutService, type Tenant } from '@tollgate/core';
import { FixedClock, sampleCatalog } from '@tollgate/core/testing';
import { createTestDatabase, type TestDatabase } from '@tollgate/adapter-postgres';
import type { Config } from '../config';
import { createContainer, type ContainerOptions } from '../container';
import { TOKENS } from '../tokens';

export const testConfig = (over: Partial<Config> = {}): Config => ({
  port: 0,
  publicUrl: 'http://localhost:3000',
  databaseUrl: undefined,
  dataDir: '/nonexistent',
  signer: 'ecdsa',
  masterSecret: 'test master secret, not for production',
  workerIntervalMs: 1000,
  runWorker: false,
  logRequests: false,
  stripeSecretKey: undefined,
  stripeWebhookSecret: undefined,
  ...over,
});

export interface TestWorld {
  container: Container;
  db: TestDatabase;
  clock: FixedClock;
  close(): Promise<void>;
}

/** A container over a fresh migrated database (PGlite, or the server of TEST_DATABASE_URL). */
export async function createTestWorld(
  options: { kind?: 'pglite' | 'postgres'; config?: Partial<Config> } & Omit<ContainerOptions, 'database' | 'clock'> = {},
): Promise<TestWorld> {
  const db = await createTestDatabase(options.kind ?? 'pglite');
  const clock = new FixedClock(new Date());
  const silent = { info: () => undefined, error: () => undefined };
  const container = await createContainer(testConfig(options.config), { ...options, database: db, clock, logger: options.logger ?? silent });
  return { container, db, clock, close: () => db.drop() };
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
export async function seedOrganisation(container: Container, name: string): Promise<SeededOrg> {
  const apiKeys = container.get<ApiKeyService>(TOKENS.ApiKeys);
  const importer = container.get<CatalogFileImport>(TOKENS.CatalogImport);
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
    readOnlyKey: (await apiKeys.create({ organisation: name, scopes: ['products:read', 'plans:read', 'licenses:read'], isTest: false })).plaintext,
  };
}

/** A completed purchase of the plan for the grantee (as a payment provider would report it). */
export async function purchase(container: Container, planId: string, granteeId: string, quantity = 1) {
  return container.get<CheckoutService>(TOKENS.Checkout).completePurchase({
    planId, member: 'buyer@example.com', email: 'buyer@example.com', granteeId, quantity, currency: 'USD',
    paymentProvider: 'sandbox', paymentSubscriptionId: null, paymentCustomerId: null,
  });
}
