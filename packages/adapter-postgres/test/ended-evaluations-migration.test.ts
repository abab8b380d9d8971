import { sql } from 'kysely';
import type { License, Tenant } from '@tollgate/core';
import { aCustomer, aLicense, aSubscription, createTestCore, seedSample } from '@tollgate/core/testing';
import { createTestDatabase, type TestDatabase } from '../src';
import * as endedEvaluations from '../src/migrations/2026-11-29T10-04-ended-evaluations';

const kinds: ('pglite' | 'postgres')[] = process.env.TEST_DATABASE_URL ? ['pglite', 'postgres'] : ['pglite'];
const DAY = 86_400_000;

/** Polls until `ok()` (a bound on waiting, not a speed assertion). */
async function until(ok: () => Promise<boolean>, what: string, ms = 10_000): Promise<void> {
  for (const end = Date.now() + ms; !(await ok());) {
    if (Date.now() > end) throw new Error(`${what} not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe.each(kinds)('%s: evaluations ended before the upgrade (migration 2026-11-29T10-04)', (kind) => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase(kind);
  });
  afterAll(async () => {
    await db?.drop();
  });

  const statusOf = async (id: string) =>
    (
      await sql<{ status: string; cancel_at_period_end: boolean; end_time: Date; updated_at: Date }>`
      select status, cancel_at_period_end, end_time, updated_at from licenses where id = ${id}`.execute(db.db)
    ).rows[0];
  const outboxRows = async (ids: string[]) =>
    (await sql<{ n: number }>`select count(*)::int as n from outbox_events where ordering_key = any(${ids}::uuid[])`.execute(db.db)).rows[0]
      .n;
  const indexValid = async () =>
    (
      await sql<{
        valid: boolean;
      }>`select indisvalid as valid from pg_index where indexrelid = to_regclass('licenses_evaluation_end')`.execute(db.db)
    ).rows.map((r) => r.valid);

  /** Licenses as the previous version left them: an ad hoc evaluation ended long ago, one ending later, a subscription's seats ended too. */
  async function storedBefore(name: string): Promise<{ tenant: Tenant; old: License; future: License; seats: License[] }> {
    const core = createTestCore({ uow: db.uow });
    const { tenant, keys } = await seedSample(core, `${name}-${kind}`);
    const plan = await db.uow.read(async (r) => (await r.plans.get(keys['plans.notes.team']))!);
    const ended = new Date('2025-12-01T00:00:00Z');
    const old = aLicense(plan, { status: 'EVALUATION', granteeId: 'olga', endTime: ended, cancelAtPeriodEnd: true });
    const future = aLicense(plan, { status: 'EVALUATION', granteeId: 'fred', endTime: new Date(Date.now() + 365 * DAY) });
    const customer = aCustomer(tenant);
    const subscription = aSubscription(plan, customer, { status: 'TRIALING', currentPeriodEnd: ended });
    const seats = [
      aLicense(plan, { subscriptionId: subscription.id, status: 'EVALUATION', endTime: ended, granteeId: 'sam' }),
      aLicense(plan, { subscriptionId: subscription.id, status: 'TRIALING', endTime: ended, granteeId: 'tina' }),
    ];
    await db.uow.run(async (r) => {
      await r.customers.save(customer);
      await r.subscriptions.save(subscription);
      await r.licenses.saveMany([old, future, ...seats]);
    });
    return { tenant, old, future, seats };
  }

  it('writes evaluations that had ended CANCELED, without a webhook event; a later one and a subscription’s seats stay', async () => {
    const { old, future, seats } = await storedBefore('ended-before');
    await endedEvaluations.down(db.db);
    const before = Date.now();
    await endedEvaluations.up(db.db);

    const ended = await statusOf(old.id);
    // As the sweep writes it: CANCELED, the end kept, no longer canceling at period end, updated now.
    expect(ended).toMatchObject({ status: 'CANCELED', cancel_at_period_end: false, end_time: old.endTime });
    expect(ended.updated_at.getTime()).toBeGreaterThanOrEqual(before - 60_000);
    expect(await outboxRows([old.id, future.id, ...seats.map((s) => s.id)])).toBe(0);
    expect((await statusOf(future.id)).status).toBe('EVALUATION');
    expect((await statusOf(seats[0].id)).status).toBe('EVALUATION');
    expect((await statusOf(seats[1].id)).status).toBe('TRIALING');
    expect(await indexValid()).toEqual([true]);
  });

  it('tells listening instances through the change feed: their check stops granting the ended evaluation with grace', async () => {
    const { tenant, old } = await storedBefore('ended-feed');
    const b = createTestCore({ uow: db.uow, changes: db.changeFeed() });
    await b.listen();
    try {
      // The test clock (2026-01-15) is 45 days after its end: 60 days of grace still grant it.
      const check = () => b.checks.check(tenant, { productId: old.productId, granteeIds: ['olga'], graceDays: 60, encoding: 'der' });
      expect((await check())?.capabilities).toEqual(['edit', 'export']);
      await endedEvaluations.up(db.db);
      await until(async () => (await check()) === null, "B's check of the ended evaluation");
    } finally {
      await b.stopListening();
    }
  });

  it('keeps an index built beforehand (CREATE INDEX CONCURRENTLY) without locking out license writes', async () => {
    await endedEvaluations.down(db.db);
    await sql`create index licenses_evaluation_end on licenses (end_time, id) where status = 'EVALUATION'`.execute(db.db);
    const modes = await db.db.transaction().execute(async (trx) => {
      await endedEvaluations.up(trx);
      return (
        await sql<{ mode: string }>`select mode from pg_locks where relation = 'licenses'::regclass and pid = pg_backend_pid()`.execute(trx)
      ).rows.map((r) => r.mode);
    });
    // The update's lock only: no SHARE lock (which `create index if not exists` takes even when the index exists).
    expect(modes).not.toContain('ShareLock');
    expect(await indexValid()).toEqual([true]);
  });

  it('refuses an index left invalid by a failed concurrent build, by name', async () => {
    await sql`update pg_index set indisvalid = false where indexrelid = to_regclass('licenses_evaluation_end')`.execute(db.db);
    await expect(endedEvaluations.up(db.db)).rejects.toThrow(/licenses_evaluation_end exists but is invalid/);
    await endedEvaluations.down(db.db);
    await endedEvaluations.up(db.db);
    expect(await indexValid()).toEqual([true]);
  });
});
