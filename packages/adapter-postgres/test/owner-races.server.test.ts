/* Two requests making one new owner (a customer) or grantee at once, on a PostgreSQL server
   (collected only with TEST_DATABASE_URL). One transaction inserts the row and stays open; the other
   runs a use case that needs the same owner or grantee, waits for the first at the unique key, and
   must then take the committed row instead of failing with "a record with the same identity was
   written meanwhile" (the sandbox pay page's 400 of two checkouts of one new owner paid at once). */
import { randomUUID } from 'node:crypto';
import type { Customer, Grantee, Tenant } from '@tollgate/core';
import { buyPlan, createTestCore, rejectionOf, seedSample, type TestCore } from '@tollgate/core/testing';
import { sql } from 'kysely';
import { createTestDatabase, openDatabase, PostgresUnitOfWork, type TestDatabase } from '../src';

let db: TestDatabase;
let core: TestCore;
beforeAll(async () => {
  db = await createTestDatabase('postgres', { poolSize: 6 });
  core = createTestCore({ uow: db.uow });
});
afterAll(() => db?.drop());

const customerOf = (tenant: Tenant, value: string): Customer => ({
  id: randomUUID(),
  ...tenant,
  value,
  emailAddress: null,
  paymentCustomerId: null,
  createdAt: new Date(),
  updatedAt: new Date(),
});

/**
 * Until a statement of this database waits for a lock (`work` reached the unique key the open
 * transaction holds), or `work` settled without waiting (its own failure, answered as it is).
 */
async function untilWaiting(on: TestDatabase, settled: () => boolean): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const { rows } = await sql<{ n: number }>`
      select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`.execute(on.db);
    if (rows[0].n > 0 || settled()) return;
    if (Date.now() > deadline) throw new Error('the second transaction never waited for the first');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/**
 * Runs `insert` in a transaction held open until `work` waits for it (at the unique key), then
 * commits it (or, `rollback`, rolls it back); `work`'s outcome once settled.
 */
async function whileInserting<T>(
  insert: Parameters<TestDatabase['uow']['run']>[0],
  work: () => Promise<T>,
  { rollback = false }: { rollback?: boolean } = {},
): Promise<T> {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  let inserted!: () => void;
  const ready = new Promise<void>((resolve) => (inserted = resolve));
  const holder = db.uow.run(async (r) => {
    await insert(r);
    inserted();
    await gate;
    if (rollback) throw new Error('rolled back on purpose');
  });
  void holder.catch(() => undefined);
  await ready;
  let settled = false;
  const outcome = work();
  void outcome.then(
    () => (settled = true),
    () => (settled = true),
  );
  await untilWaiting(db, () => settled);
  release();
  await (rollback ? expect(holder).rejects.toThrow('rolled back on purpose') : holder);
  return outcome;
}

describe('one new owner or grantee made by two transactions at once', () => {
  it('a purchase of an owner being created meanwhile joins that customer (checkout completion)', async () => {
    const { tenant, keys } = await seedSample(core, `race-buy-${randomUUID()}`);
    const first = customerOf(tenant, 'buyer@example.com');
    const { subscription } = await whileInserting(
      (r) => r.customers.save(first),
      () => buyPlan(core, keys['plans.notes.team'], 2, 'alice'),
    );
    expect(subscription.customerId).toBe(first.id);
    const stored = await db.uow.read((r) => r.customers.findByValue(tenant, 'buyer@example.com'));
    expect(stored).toMatchObject({ id: first.id, emailAddress: 'buyer@example.com' });
  });

  it('a cart, a group and a direct subscription of an owner being created meanwhile take that customer', async () => {
    const { tenant, keys } = await seedSample(core, `race-owner-${randomUUID()}`);
    const cartOwner = customerOf(tenant, 'cart-owner');
    const cart = await whileInserting(
      (r) => r.customers.save(cartOwner),
      () => core.carts.create(tenant, { owner: 'cart-owner', interval: null, intervalCount: null }),
    );
    expect(cart.customerId).toBe(cartOwner.id);

    const groupOwner = customerOf(tenant, 'group-owner');
    const group = await whileInserting(
      (r) => r.customers.save(groupOwner),
      () => core.groups.create(tenant, { owner: 'group-owner', grantees: [{ granteeId: 'ann' }] }),
    );
    expect(group.customerId).toBe(groupOwner.id);

    const subscriber = customerOf(tenant, 'direct-owner');
    const view = await whileInserting(
      (r) => r.customers.save(subscriber),
      () =>
        core.subscriptionAdmin.create(tenant, { planId: keys['plans.notes.team'], owner: 'direct-owner', granteeId: 'bob', quantity: 2 }),
    );
    expect(view.subscription.customerId).toBe(subscriber.id);

    const next = customerOf(tenant, 'next-owner');
    const moved = await whileInserting(
      (r) => r.customers.save(next),
      () => core.subscriptionAdmin.updateOwner(tenant, view.subscription.id, 'next-owner'),
    );
    expect(moved.subscription.customerId).toBe(next.id);
  });

  it('a grantee being created meanwhile: a group takes it, a second POST /api/grantees is told it exists', async () => {
    const { tenant } = await seedSample(core, `race-grantee-${randomUUID()}`);
    const grantee = (granteeId: string): Grantee => ({
      id: randomUUID(),
      ...tenant,
      granteeId,
      name: null,
      createdAt: new Date(),
      updatedAt: new Date(),
    });
    const carol = grantee('carol');
    const group = await whileInserting(
      (r) => r.people.saveGrantee(carol),
      () => core.groups.create(tenant, { owner: 'team-owner', grantees: [{ granteeId: 'carol' }] }),
    );
    expect((await core.groups.get(tenant, group.id)).members.map((m) => m.grantee.id)).toEqual([carol.id]);

    const dave = grantee('dave');
    const refused = await rejectionOf(
      whileInserting(
        (r) => r.people.saveGrantee(dave),
        () => core.grantees.create(tenant, { granteeId: 'dave' }),
      ),
    );
    expect({ code: refused.code, message: refused.message, details: refused.details }).toEqual({
      code: 'CONFLICT',
      message: 'a grantee with this granteeId exists',
      details: [{ property: 'granteeId', error: 'is taken by another grantee' }],
    });
  });

  it('the first transaction rolls back: the waiting one inserts its own row (a customer, a grantee)', async () => {
    const { tenant, keys } = await seedSample(core, `race-rollback-${randomUUID()}`);
    const gone = customerOf(tenant, 'buyer@example.com');
    const { subscription } = await whileInserting(
      (r) => r.customers.save(gone),
      () => buyPlan(core, keys['plans.notes.team'], 2, 'alice'),
      { rollback: true },
    );
    const stored = await db.uow.read((r) => r.customers.findByValue(tenant, 'buyer@example.com'));
    expect(stored?.id).toBe(subscription.customerId);
    expect(stored?.id).not.toBe(gone.id);

    const ghost: Grantee = { id: randomUUID(), ...tenant, granteeId: 'erin', name: null, createdAt: new Date(), updatedAt: new Date() };
    const group = await whileInserting(
      (r) => r.people.saveGrantee(ghost),
      () => core.groups.create(tenant, { owner: 'team-owner', grantees: [{ granteeId: 'erin' }] }),
      { rollback: true },
    );
    const [member] = (await core.groups.get(tenant, group.id)).members;
    expect(member.grantee.granteeId).toBe('erin');
    expect(member.grantee.id).not.toBe(ghost.id);
  });

  it('a server or role whose default_transaction_isolation is REPEATABLE READ: the unit of work still reads what committed (READ COMMITTED named on BEGIN)', async () => {
    // Connections of their own, each starting with the operator's default (a connection option).
    const url = new URL(db.url as string);
    url.searchParams.set('options', '-c default_transaction_isolation=repeatable\\ read');
    const strict = openDatabase({ url: url.toString(), poolSize: 4 });
    try {
      const { rows } = await sql<{ level: string }>`select current_setting('default_transaction_isolation') as level`.execute(strict.db);
      expect(rows[0].level).toBe('repeatable read');
      const strictCore = createTestCore({ uow: new PostgresUnitOfWork(strict.db) });
      const { tenant, keys } = await seedSample(strictCore, `race-strict-${randomUUID()}`);
      const first = customerOf(tenant, 'buyer@example.com');
      const { subscription } = await whileInserting(
        (r) => r.customers.save(first),
        () => buyPlan(strictCore, keys['plans.notes.team'], 2, 'alice'),
      );
      expect(subscription.customerId).toBe(first.id);
    } finally {
      await strict.close();
    }
  });
});
