import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { sql } from 'kysely';
import type { SeatChange } from '@tollgate/core';
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
    const tables = await sql<{
      table_name: string;
    }>`select table_name from information_schema.tables where table_schema = 'public'`.execute(db.db);
    const names = tables.rows.map((r) => r.table_name);
    for (const t of [
      'organisations',
      'api_keys',
      'products',
      'plans',
      'line_items',
      'tiers',
      'subscriptions',
      'licenses',
      'events',
      'kysely_migration',
    ]) {
      expect(names).toContain(t);
    }
    expect(await migrateToLatest(db.db)).toEqual([]);
    const applied = await sql<{ n: number }>`select count(*)::int as n from kysely_migration`.execute(db.db);
    // One row per migration file: every lane's migration counted, whatever lands.
    expect(applied.rows[0].n).toBe(readdirSync(join(__dirname, '../src/migrations')).filter((f) => f.endsWith('.ts')).length);
  });

  it('leaves the database unchanged when a multi-row use case fails after its first write', async () => {
    const uow = new FaultInjectingUnitOfWork(db.uow);
    const core = createTestCore({ uow });
    const { tenant, keys } = await seedSample(core, `fault-${kind}`);
    const before = await core.licenses.count(tenant, {});
    uow.failAfterWrites = 1;
    await expect(
      core.checkout.completePurchase({
        planId: keys['plans.notes.team'],
        member: 'm@example.com',
        email: null,
        granteeId: 'g',
        quantity: 5,
        currency: 'USD',
        paymentProvider: 'fake',
        paymentSubscriptionId: null,
        paymentCustomerId: null,
      }),
    ).rejects.toThrow('injected fault');
    uow.failAfterWrites = undefined;
    expect(await core.licenses.count(tenant, {})).toEqual(before);
    const customers = await sql<{
      n: number;
    }>`select count(*)::int as n from customers where organisation_id = ${tenant.organisationId}`.execute(db.db);
    expect(customers.rows[0].n).toBe(0);
    // The same purchase without the fault goes through: the failure left no half-written rows in its way.
    const ok = await core.checkout.completePurchase({
      planId: keys['plans.notes.team'],
      member: 'm@example.com',
      email: null,
      granteeId: 'g',
      quantity: 5,
      currency: 'USD',
      paymentProvider: 'fake',
      paymentSubscriptionId: null,
      paymentCustomerId: null,
    });
    expect(await core.licenses.list(tenant, { subscriptionId: ok.subscription.id })).toHaveLength(5);
  });

  it('applies 50 concurrent seat changes through two pools with no lost update', async () => {
    // Two "instances": separate pools on one database (PGlite, being embedded, has one).
    const second = kind === 'postgres' ? openDatabase({ url: db.url, poolSize: 12 }) : undefined;
    try {
      const a = createTestCore({ uow: db.uow });
      const b = createTestCore({ uow: second ? new PostgresUnitOfWork(second.db) : db.uow });
      const { tenant, keys } = await seedSample(a, `seats-${kind}`);
      const { subscription } = await a.checkout.completePurchase({
        planId: keys['plans.notes.business'],
        member: 'm@example.com',
        email: null,
        granteeId: 'g',
        quantity: 60,
        currency: 'USD',
        paymentProvider: 'fake',
        paymentSubscriptionId: null,
        paymentCustomerId: null,
      });
      const changes: SeatChange[] = Array.from({ length: 50 }, (_, i) =>
        i % 5 < 3
          ? { type: 'seats.increment', count: 1 + (i % 2), proration: 'none' }
          : { type: 'seats.decrement', count: 1, proration: 'none' },
      );
      await Promise.all(changes.map((change, i) => (i % 2 === 0 ? a : b).seats.apply(subscription.id, change)));
      const expected = 60 + changes.reduce((n, c) => n + (c.type === 'seats.increment' ? c.count : -c.count), 0);
      expect((await a.subscriptions.get(tenant, subscription.id)).subscription.quantity).toBe(expected);
      expect(await a.licenses.count(tenant, { subscriptionId: subscription.id })).toEqual({
        count: expected,
        assigned: 1,
        unassigned: expected - 1,
      });
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
      const { subscription } = await a.checkout.completePurchase({
        planId: keys['plans.notes.business'],
        member: 'm@example.com',
        email: null,
        granteeId: 'g',
        quantity: 1,
        currency: 'USD',
        paymentProvider: 'fake',
        paymentSubscriptionId: null,
        paymentCustomerId: null,
      });
      const events = [];
      for (let i = 0; i < 20; i++)
        events.push(await a.seats.request(tenant, subscription.id, { type: 'seats.increment', count: 1, proration: 'none' }));
      const [na, nb] = await Promise.all([a.worker.drain(), b.worker.drain()]);
      expect(na + nb).toBeGreaterThanOrEqual(20);
      for (const e of events) expect((await a.worker.get(tenant, e.id)).status).toBe('success');
      expect((await a.subscriptions.get(tenant, subscription.id)).subscription.quantity).toBe(21);
      expect((await a.licenses.count(tenant, { subscriptionId: subscription.id })).count).toBe(21);
    } finally {
      await second?.close();
    }
  });

  it('takes a purchase and an increment up to the seat bound in batched inserts, and refuses one seat more', async () => {
    const core = createTestCore({ uow: db.uow });
    const { tenant, keys } = await seedSample(core, `bound-${kind}`);
    // 3 600 seats of 18 columns each would pass PostgreSQL's 65 535 parameters in one statement.
    const { subscription } = await core.checkout.completePurchase({
      planId: keys['plans.notes.business'],
      member: 'm@example.com',
      email: null,
      granteeId: 'g',
      quantity: 3600,
      currency: 'USD',
      paymentProvider: 'fake',
      paymentSubscriptionId: null,
      paymentCustomerId: null,
    });
    await core.seats.apply(subscription.id, { type: 'seats.increment', count: 10_000 - 3600, proration: 'none' });
    expect(await core.licenses.count(tenant, { subscriptionId: subscription.id })).toEqual({
      count: 10_000,
      assigned: 1,
      unassigned: 9_999,
    });
    await expect(
      core.seats.request(tenant, subscription.id, { type: 'seats.increment', count: 1, proration: 'none' }),
    ).rejects.toMatchObject({ code: 'SEATS_LIMIT_EXCEEDED' });
  });

  if (kind === 'postgres') {
    it('keeps a later event of a subscription waiting while another worker holds the earlier one', async () => {
      const second = openDatabase({ url: db.url, poolSize: 2 });
      try {
        const a = createTestCore({ uow: db.uow });
        const b = createTestCore({ uow: new PostgresUnitOfWork(second.db) });
        const { tenant, keys } = await seedSample(a, `order-${kind}`);
        const { subscription } = await a.checkout.completePurchase({
          planId: keys['plans.notes.business'],
          member: 'm@example.com',
          email: null,
          granteeId: 'g',
          quantity: 1,
          currency: 'USD',
          paymentProvider: 'fake',
          paymentSubscriptionId: null,
          paymentCustomerId: null,
        });
        const first = await a.seats.request(tenant, subscription.id, { type: 'seats.increment', count: 1, proration: 'none' });
        const later = await a.seats.request(tenant, subscription.id, { type: 'seats.increment', count: 1, proration: 'none' });
        let release!: () => void;
        let claimed!: () => void;
        const wasClaimed = new Promise<void>((res) => {
          claimed = res;
        });
        // A holds the first event's row inside its claiming transaction, then gives it up (rolls back).
        const holding = a.uow
          .run(async (r) => {
            const e = await r.events.claimNext(new Date(Date.now() + 60_000), new Date(Date.now() + 120_000));
            expect(e?.id).toBe(first.id);
            claimed();
            await new Promise<void>((res) => {
              release = res;
            });
            throw new Error('give the claim up');
          })
          .catch(() => undefined);
        await wasClaimed;
        const seenByB = await b.uow
          .run(async (r) => {
            const e = await r.events.claimNext(new Date(Date.now() + 60_000), new Date(Date.now() + 120_000));
            // Whatever B claims here it gives up too, so that the drain below starts from nothing leased.
            if (e) throw Object.assign(new Error('give it up'), { claimed: e });
            return e;
          })
          .catch((e: { claimed?: { id: string } }) => e.claimed);
        expect(seenByB?.id).not.toBe(later.id);
        release();
        await holding;
        expect(await b.worker.drain()).toBeGreaterThanOrEqual(2);
        expect((await a.worker.get(tenant, later.id)).status).toBe('success');
      } finally {
        await second.close();
      }
    });
  }
});
