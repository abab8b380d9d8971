import { randomUUID } from 'node:crypto';
import type { Balance, CreditGrant } from '@tollgate/core';
import { aBalance, createTestCore } from '@tollgate/core/testing';
import { createTestDatabase, type TestDatabase } from '../src';

// The group commit's lock (usage_lock_balances) on a PostgreSQL server (collected only with
// TEST_DATABASE_URL): locking and reading the grants in one round trip must still read them after
// the lock was granted, so a writer that waited sees what the previous holder committed.
/** A balance of `waiter` not yet used (what the group commit asks to lock). */
const freshOf = (organisationId: string, meterId: string, now: Date): Balance =>
  aBalance({ organisationId, owner: 'waiter', meterId, periodStart: now, createdAt: now, updatedAt: now });
const lockedOf = <T>(x: T | null): T => {
  if (x === null) throw new Error('expected a locked balance');
  return x;
};
let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase('postgres', { poolSize: 4 });
});
afterAll(async () => {
  await db?.drop();
});

/** A fresh organisation with the meter `tokens` and `amount` granted to `owner`; `fresh(owner)` is an unused balance of it. */
async function grantedTo(name: string, owner: string, amount: number) {
  const core = createTestCore({ uow: db.uow });
  const org = await core.apiKeys.ensureOrganisation(name);
  const tenant = { organisationId: org.id, isTest: false };
  await core.usage.createMeter(tenant, { slug: 'tokens', name: 'Tokens' });
  await core.usage.grant(tenant, { owner, meterSlug: 'tokens', amount });
  const meter = await core.usage.meter(tenant, 'tokens');
  const now = new Date();
  return { tenant, now, fresh: (who = owner): Balance => ({ ...freshOf(org.id, meter.id, now), owner: who }) };
}

it('a batch that waited for the row lock reads the grants its predecessor committed (draws and new grants)', async () => {
  const { now, fresh } = await grantedTo('usage-lock', 'waiter', 10);

  let locked!: () => void;
  const isLocked = new Promise<void>((resolve) => (locked = resolve));
  let release!: () => void;
  const holding = new Promise<void>((resolve) => (release = resolve));
  const first = db.uow.run(async (r) => {
    const l = lockedOf((await r.usage.lockBalances([{ fresh: fresh(), holdIds: [] }], now))[0]);
    expect(l.grants.map((g) => [g.amount, g.drawn])).toEqual([[10n, 0n]]);
    locked();
    await holding;
    const added: CreditGrant = {
      id: randomUUID(),
      balanceId: l.balance.id,
      amount: 5n,
      drawn: 0n,
      expired: 0n,
      priority: 10,
      expiresAt: null,
      source: 'adjustment',
      createdAt: now,
    };
    // The whole first grant drawn, a second one added: the waiter must see exactly that.
    await r.usage.writeMany([
      {
        balance: { ...l.balance, used: l.balance.used + 10n, granted: l.balance.granted + 5n },
        meterSlug: 'tokens',
        grants: [{ ...l.grants[0], drawn: 10n }, added],
        holds: [],
        entries: [],
        keys: [],
      },
    ]);
  });
  await isLocked;
  let waited = true;
  const second = db.uow.run((r) => r.usage.lockBalances([{ fresh: fresh(), holdIds: [] }], now)).finally(() => (waited = false));
  await new Promise((resolve) => setTimeout(resolve, 300));
  expect(waited).toBe(true);
  release();
  await first;
  const seen = lockedOf((await second)[0]);
  expect({ granted: seen.balance.granted, used: seen.balance.used }).toEqual({ granted: 15n, used: 10n });
  expect(seen.grants.map((g) => [g.amount, g.drawn, g.priority])).toEqual([[5n, 0n, 10]]);
});

it("an item that may not create (the usage sweep's) gets null where no balance is open, and nothing is created", async () => {
  const { tenant, now, fresh } = await grantedTo('usage-lock-nocreate', 'open', 3);
  const item = (owner: string) => ({ fresh: fresh(owner), holdIds: [], create: false });
  const [absent, open] = await db.uow.run((r) => r.usage.lockBalances([item('gone'), item('open')], now));
  expect(absent).toBeNull();
  expect(open?.balance).toMatchObject({ owner: 'open', granted: 3n });
  expect(await db.uow.read((r) => r.usage.openBalances(tenant, 'gone'))).toEqual([]);
});
