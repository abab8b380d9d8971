import { sql } from 'kysely';
import { createTestCore, FaultInjectingUnitOfWork, seedSample } from '@tollgate/core/testing';
import { createTestDatabase, migrateToLatest, openDatabase, PostgresUnitOfWork, type TestDatabase } from '../src';

const kinds: ('pglite' | 'postgres')[] = process.env.TEST_DATABASE_URL ? ['pglite', 'postgres'] : ['pglite'];

describe.each(kinds)('%s persistence', (kind) => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase(kind, { poolSize: 12 });
  });
  afterAll(async () => {
    await db?.drop();
  });

  it('migrates up from empty, and a second run is a no-op', async () => {
    // createTestDatabase already migrated from empty; every table exists.
    const tables = await sql<{ table_name: string }>`select table_name from information_schema.tables where table_schema = 'public'`.execute(db.db);
    const names = tables.rows.map((r) => r.table_name);
    for (const t of ['organisations', 'api_keys', 'products', 'plans', 'line_items', 'tiers', 'subscriptions', 'licenses', 'events', 'kysely_migration']) {
      expect(names).toContain(t);
    }
    expect(await migrateToLatest(db.db)).toEqual([]);
    const applied = await sql<{ n: number }>`select count(*)::int as n from kysely_migration`.execute(db.db);
    expect(applied.rows[0].n).toBe(4);
  });

  it('leaves the database unchanged when a multi-row use case fails after its first write', async () => {
    const uow = new FaultInjectingUnitOfWork(db.uow);
    const core = createTestCore({ uow });
    const { tenant, keys } = await seedSample(core, `fault-${kind}`);
    const before = await core.licenses.count(tenant, {});
    uow.failAfterWrites = 1;
    await expect(
      core.checkout.completePurchase({ planId: keys['plans.notes.team'], member: 'm@example.com', email: null, granteeId: 'g', quantity: 5, currency: 'USD', paymentProvider: 'fake', paymentSubscriptionId: null, paymentCustomerId: null }),
    ).rejects.toThrow('injected fault');
    uow.failAfterWrites = undefined;
    expect(await core.licenses.count(tenant, {})).toEqual(before);
    const customers = await sql<{ n: number }>`select count(*)::int as n from customers where organisation_id = ${tenant.organisationId}`.execute(db.db);
    expect(customers.rows[0].n).toBe(0);
    // The same purchase without the fault goes through: the failure left no half-written rows in its way.
    const ok = await core.checkout.completePurchase({ planId: keys['plans.notes.team'], member: 'm@example.com', email: null, granteeId: 'g', quantity: 5, currency: 'USD', paymentProvider: 'fake', paymentSubscriptionId: null, paymentCustomerId: null });
    expect(ok.licenses).toHaveLength(5);
  });

  it('applies 50 concurrent seat changes through two pools with no lost update', async () => {
    // Two "instances": separate pools on one database (PGlite, being embedded, has one).
    const second = kind === 'postgres' ? openDatabase({ url: db.url, poolSize: 12 }) : undefined;
    try {
      const a = createTestCore({ uow: db.uow });
      const b = createTestCore({ uow: second ? new PostgresUnitOfWork(second.db) : db.uow });
      const { tenant, keys } = await seedSample(a, `seats-${kind}`);
      const { subscription } = await a.checkout.completePurchase({ planId: keys['plans.notes.business'], member: 'm@example.com', email: null, granteeId: 'g', quantity: 60, currency: 'USD', paymentProvider: 'fake', paymentSubscriptionId: null, paymentCustomerId: null });
      const changes: ({ increment: number } | { decrement: number })[] = Array.from({ length: 50 }, (_, i) => (i % 5 < 3 ? { increment: 1 + (i % 2) } : { decrement: 1 }));
      await Promise.all(changes.map((change, i) => {
        const core = i % 2 === 0 ? a : b;
        return core.uow.run((r) => core.subscriptions.applySeatChange(r, subscription.id, change, 'none'));
      }));
      const expected = 60 + changes.reduce((n, c) => n + ('increment' in c ? c.increment : -c.decrement), 0);
      expect((await a.subscriptions.get(tenant, subscription.id)).subscription.quantity).toBe(expected);
      expect(await a.licenses.count(tenant, { subscriptionId: subscription.id })).toEqual({ count: expected, assigned: 1, unassigned: expected - 1 });
    } finally {
      await second?.close();
    }
  });

  it('lets two workers drain queued seat events, each applied exactly once', async () => {
    const second = kind === 'postgres' ? openDatabase({ url: db.url, poolSize: 4 }) : undefined;
    try {
      const a = createTestCore({ uow: db.uow });
      const b = createTestCore({ uow: second ? new PostgresUnitOfWork(second.db) : db.uow });
      const { tenant, keys } = await seedSample(a, `worker-${kind}`);
      const { subscription } = await a.checkout.completePurchase({ planId: keys['plans.notes.business'], member: 'm@example.com', email: null, granteeId: 'g', quantity: 1, currency: 'USD', paymentProvider: 'fake', paymentSubscriptionId: null, paymentCustomerId: null });
      const events = [];
      for (let i = 0; i < 20; i++) events.push(await a.subscriptions.requestSeatChange(tenant, subscription.id, { increment: 1 }, 'none'));
      const [na, nb] = await Promise.all([a.worker.drain(), b.worker.drain()]);
      expect(na + nb).toBeGreaterThanOrEqual(20);
      for (const e of events) expect((await a.worker.get(tenant, e.id)).status).toBe('success');
      expect((await a.subscriptions.get(tenant, subscription.id)).subscription.quantity).toBe(21);
      expect((await a.licenses.count(tenant, { subscriptionId: subscription.id })).count).toBe(21);
    } finally {
      await second?.close();
    }
  });
});
