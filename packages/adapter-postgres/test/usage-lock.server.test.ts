import { randomUUID } from 'node:crypto';
import type { Balance, CreditGrant } from '@tollgate/core';
import { createTestCore } from '@tollgate/core/testing';
import { createTestDatabase, type TestDatabase } from '../src';

// The group commit's lock (usage_lock_balances) on a PostgreSQL server (collected only with
// TEST_DATABASE_URL): locking and reading the grants in one round trip must still read them after
// the lock was granted, so a writer that waited sees what the previous holder committed.
let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase('postgres', { poolSize: 4 });
});
afterAll(async () => {
  await db?.drop();
});

it('a batch that waited for the row lock reads the grants its predecessor committed (draws and new grants)', async () => {
  const core = createTestCore({ uow: db.uow });
  const org = await core.apiKeys.ensureOrganisation('usage-lock');
  const tenant = { organisationId: org.id, isTest: false };
  await core.usage.createMeter(tenant, { slug: 'tokens', name: 'Tokens' });
  await core.usage.grant(tenant, { owner: 'waiter', meterSlug: 'tokens', amount: 10 });
  const meter = await core.usage.meter(tenant, 'tokens');
  const now = new Date();
  const fresh = (): Balance => ({
    id: randomUUID(),
    organisationId: org.id,
    isTest: false,
    owner: 'waiter',
    meterId: meter.id,
    periodStart: now,
    periodEnd: null,
    granted: 0n,
    used: 0n,
    reserved: 0n,
    cap: null,
    limited: false,
    closedAt: null,
    unreported: 0n,
    unreportedOps: 0,
    reportedAt: null,
    reportDueAt: null,
    createdAt: now,
    updatedAt: now,
  });

  let locked!: () => void;
  const isLocked = new Promise<void>((resolve) => (locked = resolve));
  let release!: () => void;
  const holding = new Promise<void>((resolve) => (release = resolve));
  const first = db.uow.run(async (r) => {
    const [l] = await r.usage.lockBalances([{ fresh: fresh(), holdIds: [] }], now);
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
  const [seen] = await second;
  expect({ granted: seen.balance.granted, used: seen.balance.used }).toEqual({ granted: 15n, used: 10n });
  expect(seen.grants.map((g) => [g.amount, g.drawn, g.priority])).toEqual([[5n, 0n, 10]]);
});
