/* A grantee change and a change of a subscription's seats at once, on a PostgreSQL server (collected
   only with TEST_DATABASE_URL). Every writer of seats holds the subscription's row lock, taken before
   any license lock: a grantee change (v1 PUT /licenses, v2 PUT /licenses/:uuid, a grantee renamed)
   waits for a seat change decided on its read of the licenses, and never lands between that read and
   its write. Each test stops one transaction just after its read, lets the other run, and checks
   who waited and what was kept. */
import type { License, Repositories, UnitOfWork } from '@tollgate/core';
import { buyPlan, createTestCore, seedSample, type TestCore } from '@tollgate/core/testing';
import { createTestDatabase, type TestDatabase } from '../src';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase('postgres', { poolSize: 6 });
});
afterAll(() => db?.drop());

type Read = 'list' | 'listBySubscription';
/** Runs (once: it disarms itself by returning true) after a read of licenses; `locked`: the transaction locked a subscription before it. */
type Hook = (read: Read, locked: boolean, licenses: License[]) => Promise<boolean>;

/** The database's unit of work, with a hook after each read of licenses. */
class Hooked implements UnitOfWork {
  hook: Hook | undefined;
  constructor(private readonly inner: UnitOfWork) {}
  read<T>(work: (r: Repositories) => Promise<T>): Promise<T> {
    return this.inner.read(work);
  }
  run<T>(work: (r: Repositories) => Promise<T>): Promise<T> {
    return this.inner.run((r) => {
      let locked = false;
      const after = async (read: Read, licenses: License[]) => {
        const hook = this.hook;
        if (hook && (await hook(read, locked, licenses))) this.hook = undefined;
        return licenses;
      };
      const subscriptions = {
        ...r.subscriptions,
        getForUpdate: async (id: string) => {
          locked = true;
          return r.subscriptions.getForUpdate(id);
        },
      };
      const licenses = {
        ...r.licenses,
        list: async (...a: Parameters<Repositories['licenses']['list']>) => after('list', await r.licenses.list(...a)),
        listBySubscription: async (id: string) => after('listBySubscription', await r.licenses.listBySubscription(id)),
      };
      return work(
        new Proxy(r, {
          get: (t, k) => (k === 'licenses' ? licenses : k === 'subscriptions' ? subscriptions : Reflect.get(t, k)),
        }),
      );
    });
  }
}

/** The promise's outcome once settled, and whether it had settled `ms` after it started. */
async function settledWithin<T>(p: Promise<T>, ms: number) {
  let settled = false;
  const outcome = p.then(
    (value) => ({ ok: true as const, value }),
    (error: unknown) => ({ ok: false as const, error }),
  );
  void outcome.then(() => (settled = true));
  await new Promise((resolve) => setTimeout(resolve, ms));
  return { settledBefore: settled, outcome };
}

async function setUp(name: string, quantity: number) {
  const uow = new Hooked(db.uow);
  const core: TestCore = createTestCore({ uow });
  const { tenant, keys } = await seedSample(core, name);
  const { subscription: s } = await buyPlan(core, keys['plans.notes.team'], quantity, 'alice');
  return { uow, core, tenant, s };
}

/** The seat a decrement by one removes: the newest unassigned seat of the first plan (docs/decisions.md). */
const newestUnassigned = (seats: License[], planId: string) =>
  seats
    .filter((l) => l.planId === planId && l.granteeId === null && l.status !== 'CANCELED')
    .sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime() || (a.id < b.id ? 1 : -1))[0];

it('a seat decrement that read a seat as unassigned is not overtaken by its assignment (v2 PUT /licenses/:uuid)', async () => {
  const { uow, core, tenant, s } = await setUp('license-locks-decrement', 5);
  await core.seats.request(tenant, s.id, { type: 'seats.decrement', count: 1, proration: 'none' });
  let target: License | undefined;
  let assignment: Awaited<ReturnType<typeof settledWithin<unknown>>> | undefined;
  // The worker, on the locked subscription, has read the seats and chosen the one to remove: bob is given it now.
  uow.hook = async (read, locked, seats) => {
    if (read !== 'listBySubscription' || !locked) return false;
    target = newestUnassigned(seats, s.planId);
    assignment = await settledWithin(core.licenses.update(tenant, target.id, { granteeId: 'bob' }), 300);
    return true;
  };
  expect(await core.worker.processNext()).toBe(true);
  expect(target).toBeDefined();
  const outcome = await assignment!.outcome;
  const seats = await db.uow.read((r) => r.licenses.listBySubscription(s.id));
  // Never both: bob told he has the seat, and the seat removed.
  if (outcome.ok) expect(seats.find((l) => l.id === target!.id)?.granteeId).toBe('bob');
  // The assignment waited for the seat change (its subscription's lock), then found its seat removed.
  expect(assignment?.settledBefore).toBe(false);
  expect(outcome).toMatchObject({ ok: false, error: { code: 'NOT_FOUND' } });
  expect(seats.map((l) => l.id)).not.toContain(target!.id);
  expect(seats.filter((l) => l.granteeId === 'bob')).toEqual([]);
  expect((await core.subscriptions.get(tenant, s.id)).subscription.quantity).toBe(4);
  // And the other order: a seat assigned first is one the decrement leaves (it removes another).
  const next = newestUnassigned(seats, s.planId);
  await core.licenses.update(tenant, next.id, { granteeId: 'bob' });
  await core.seats.request(tenant, s.id, { type: 'seats.decrement', count: 1, proration: 'none' });
  expect(await core.worker.processNext()).toBe(true);
  expect((await core.licenses.get(tenant, next.id)).granteeId).toBe('bob');
  expect((await core.subscriptions.get(tenant, s.id)).subscription.quantity).toBe(3);
});

it('an unassignment (v1 PUT /licenses) is not written over by a cancellation that read the seats before it', async () => {
  const { uow, core, tenant, s } = await setUp('license-locks-cancel', 3);
  const seat = (await db.uow.read((r) => r.licenses.listBySubscription(s.id))).find((l) => l.granteeId === 'alice') as License;
  let unassignment: Awaited<ReturnType<typeof settledWithin<unknown>>> | undefined;
  // The cancellation at the period's end, on the locked subscription, has read alice's seat: she is unassigned now.
  uow.hook = async (read, locked) => {
    if (read !== 'listBySubscription' || !locked) return false;
    unassignment = await settledWithin(core.licenses.batchUpdate(tenant, [{ uuid: seat.id, granteeId: null }]), 300);
    return true;
  };
  await core.subscriptions.cancel(tenant, s.id, 'end');
  const outcome = await unassignment!.outcome;
  const after = await core.licenses.get(tenant, seat.id);
  // Never both: the unassignment answered as done, and alice still holding the seat.
  if (outcome.ok) expect(after.granteeId).toBeNull();
  expect(unassignment?.settledBefore).toBe(false);
  expect(outcome).toMatchObject({ ok: true });
  // Both changes kept: alice no longer holds the seat, which ends with the period.
  expect(after.granteeId).toBeNull();
  expect(after.cancelAtPeriodEnd).toBe(true);
});

it('a grantee renamed while its seat is canceled does not bring the seat back', async () => {
  const { uow, core, tenant, s } = await setUp('license-locks-rename', 2);
  const alice = await core.grantees.create(tenant, { granteeId: 'alice' });
  const seat = (await db.uow.read((r) => r.licenses.listBySubscription(s.id))).find((l) => l.granteeId === 'alice') as License;
  let canceled = false;
  // The rename has read alice's running licenses (plainly): the subscription is canceled now, and commits.
  uow.hook = async (read) => {
    if (read !== 'list') return false;
    uow.hook = undefined;
    await core.subscriptions.cancel(tenant, s.id, 'now');
    canceled = true;
    return true;
  };
  await core.grantees.update(tenant, alice.id, { granteeId: 'alice-2' });
  expect(canceled).toBe(true);
  const after = await core.licenses.get(tenant, seat.id);
  expect(after.status).toBe('CANCELED');
  expect(after.granteeId).toBe('alice');
  expect((await core.subscriptions.get(tenant, s.id)).subscription.status).toBe('CANCELED');
});
