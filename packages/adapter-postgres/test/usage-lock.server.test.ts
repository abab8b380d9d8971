import { randomUUID } from 'node:crypto';
import type { Balance, CreditGrant } from '@tollgate/core';
import { aBalance, createTestCore } from '@tollgate/core/testing';
import { sql, type Transaction } from 'kysely';
import { createTestDatabase, type TestDatabase } from '../src';
import type { DB } from '../src/schema';
import { usageRepository } from '../src/repositories/usage';

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

/**
 * The updates of credit_grants, and how many were HOT, made by `work` in the transaction `trx`.
 * `pg_stat_xact_user_tables` also holds what earlier transactions of the same connection did until
 * the backend reports its statistics, hence the difference.
 */
async function grantUpdates<T>(trx: Transaction<DB>, work: () => Promise<T>) {
  const read = async () =>
    (
      await sql<{ updated: number; hot: number }>`select n_tup_upd::int as updated, n_tup_hot_upd::int as hot
        from pg_stat_xact_user_tables where relname = 'credit_grants'`.execute(trx)
    ).rows[0] ?? { updated: 0, hot: 0 };
  const before = await read();
  const result = await work();
  const after = await read();
  return { result, updated: after.updated - before.updated, hot: after.hot - before.hot };
}

it('a batch that draws from a grant updates the grant in place (a HOT update: no new index entries)', async () => {
  const { now, fresh } = await grantedTo('usage-lock-hot', 'drawer', 10);
  // The write path itself, inside one transaction whose own statistics count its updates.
  const counts = await db.db.transaction().execute(async (trx) => {
    const usage = usageRepository(trx);
    const l = lockedOf((await usage.lockBalances([{ fresh: fresh(), holdIds: [] }], now))[0]);
    const { updated, hot } = await grantUpdates(trx, () =>
      usage.writeMany([
        {
          balance: { ...l.balance, used: l.balance.used + 3n },
          meterSlug: 'tokens',
          grants: [{ ...l.grants[0], drawn: 3n }],
          holds: [],
          entries: [],
          keys: [],
        },
      ]),
    );
    return { updated, hot };
  });
  // With an index whose predicate names `drawn` (2026-11-28T10-00 dropped it), the update is not HOT.
  expect(counts).toEqual({ updated: 1, hot: 1 });
});

it('the draw that empties a grant is its one non-HOT update (its `live` flips), and the next lock reads the grant no more', async () => {
  const { now, fresh } = await grantedTo('usage-lock-empty', 'emptier', 10);
  const draw = (trx: Transaction<DB>, drawn: bigint) =>
    usageRepository(trx)
      .lockBalances([{ fresh: fresh(), holdIds: [] }], now)
      .then(async ([l]) => {
        const locked = lockedOf(l);
        await usageRepository(trx).writeMany([
          {
            balance: { ...locked.balance, used: drawn },
            meterSlug: 'tokens',
            grants: locked.grants.map((g) => ({ ...g, drawn })),
            holds: [],
            entries: [],
            keys: [],
          },
        ]);
        return locked.grants.length;
      });
  const stats = await db.db.transaction().execute(async (trx) => {
    const {
      result: live,
      updated,
      hot,
    } = await grantUpdates(trx, async () => [await draw(trx, 4n), await draw(trx, 10n), await draw(trx, 10n)]);
    return { live, updated, hot };
  });
  // Two draws of the live grant (4, then the last 6); the third lock finds no live grant to write.
  expect(stats).toEqual({ live: [1, 1, 0], updated: 2, hot: 1 });
});

it("the group commit's functions keep one generic plan per statement (no planning on every call)", async () => {
  const functions = await sql<{ name: string; config: string[] | null }>`select p.proname as name, p.proconfig as config
    from pg_proc p where p.pronamespace = current_schema()::regnamespace
      and p.proname in ('usage_lock_balances', 'usage_write_batch', 'outbox_append') order by 1`.execute(db.db);
  // Every overload, the previous usage_write_batch (rolling upgrades) included.
  expect(functions.rows.map((f) => f.name)).toEqual(['outbox_append', 'usage_lock_balances', 'usage_write_batch', 'usage_write_batch']);
  for (const f of functions.rows) expect(f.config).toEqual(['plan_cache_mode=force_generic_plan']);
});

it('a locked balance reads as the plain read gives it, every time to the millisecond', async () => {
  const { tenant, fresh } = await grantedTo('usage-lock-times', 'timed', 5);
  const [open] = await db.uow.read((r) => r.usage.openBalances(tenant, 'timed'));
  // Times with milliseconds, and every optional one set, written by the write path.
  const times = {
    periodEnd: new Date('2031-02-03T04:05:06.789Z'),
    reportedAt: new Date('2026-11-24T10:11:12.345Z'),
    reportDueAt: new Date('2026-11-24T10:12:12.346Z'),
    updatedAt: new Date('2026-11-24T10:11:12.999Z'),
  };
  await db.uow.run((r) =>
    r.usage.writeMany([{ balance: { ...open, ...times }, meterSlug: 'tokens', grants: [], holds: [], entries: [], keys: [] }]),
  );
  const [read] = await db.uow.read((r) => r.usage.openBalances(tenant, 'timed'));
  const [locked] = await db.uow.run((r) => r.usage.lockBalances([{ fresh: fresh(), holdIds: [] }], new Date()));
  expect(read).toMatchObject(times);
  expect(lockedOf(locked).balance).toEqual(read);
});
