import { DomainError, ErrorCodes, type EventWorker, type Sweeps } from '@tollgate/core';
import { BackgroundWork } from '../src';
import { createTestWorld, purchase, seedOrganisation, type TestWorld } from '../src/testing';

let world: TestWorld;
beforeAll(async () => {
  world = await createTestWorld();
});
afterAll(() => world?.close());

/** Waits for a condition, polling; fails after `ms` (a bound on waiting, not a speed assertion). */
async function eventually(check: () => Promise<boolean>, ms = 10_000): Promise<void> {
  const until = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > until) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}

it('applies queued seat changes in the background when woken, and stops cleanly', async () => {
  const org = await seedOrganisation(world, 'worker-org');
  const { subscription } = await purchase(world, org.keys['plans.notes.team'], 'w', 2);
  const subscriptions = world.core.subscriptions;
  const worker = world.core.worker;
  const errors: unknown[] = [];
  const background = new BackgroundWork(
    worker,
    world.core.sweeps,
    world.wake,
    { info: () => undefined, error: (_m, f) => errors.push(f) },
    60_000,
  );
  background.start();
  try {
    const event = await world.core.seats.request(org.tenant, subscription.id, { type: 'seats.increment', count: 3, proration: 'none' });
    await eventually(async () => (await worker.get(org.tenant, event.id)).status === 'success');
    expect((await subscriptions.get(org.tenant, subscription.id)).subscription.quantity).toBe(5);
  } finally {
    await background.stop();
  }
  expect(errors).toEqual([]);
});

it("applies a seat change queued inside an idempotent request in the worker's own transaction, after the request commits", async () => {
  const org = await seedOrganisation(world, 'worker-joined-org');
  const { subscription } = await purchase(world, org.keys['plans.notes.team'], 'wj', 2);
  const worker = world.core.worker;
  const background = new BackgroundWork(worker, world.core.sweeps, world.wake, { info: () => undefined, error: () => undefined }, 60_000);
  background.start();
  try {
    // The worker's first pass over: the wake below finds it idle.
    await eventually(async () => !background.busy());
    let seenInside: string | undefined;
    let eventId = '';
    await world.core.idempotency.perform({ ...org.tenant, key: 'joined-wake', route: 'PUT /test' }, 'fp', async () => {
      // The request wakes the worker from inside its transaction; the worker must not join it.
      const event = await world.core.seats.request(org.tenant, subscription.id, { type: 'seats.increment', count: 1, proration: 'none' });
      eventId = event.id;
      await new Promise((r) => setTimeout(r, 300));
      seenInside = (await worker.get(org.tenant, event.id)).status;
      return { status: 204 };
    });
    expect(seenInside).toBe('queued');
    await eventually(async () => (await worker.get(org.tenant, eventId)).status === 'success');
    expect((await world.core.subscriptions.get(org.tenant, subscription.id)).subscription.quantity).toBe(3);
  } finally {
    await background.stop();
  }
});

it('cancels subscriptions whose scheduled cancellation is due on its next pass', async () => {
  const org = await seedOrganisation(world, 'sweep-org');
  const { subscription } = await purchase(world, org.keys['plans.notes.business'], 's');
  const subscriptions = world.core.subscriptions;
  await subscriptions.cancel(org.tenant, subscription.id, 'end');
  world.clock.advanceDays(40);
  const background = new BackgroundWork(
    world.core.worker,
    world.core.sweeps,
    world.wake,
    { info: () => undefined, error: () => undefined },
    60_000,
  );
  await background.tick();
  await background.stop();
  const licenses = await world.db.uow.run((r) => r.licenses.listBySubscription(subscription.id));
  expect(licenses.every((l) => l.status === 'CANCELED')).toBe(true);
});

it('runs the usage meter-event relay in a lane of its own, batch after batch while more wait', async () => {
  const passes: boolean[] = [true, true, false];
  let calls = 0;
  const meterRelay = {
    pass: async () => ({ ran: true, sent: 1, passed: 0, refused: 0, planned: 0, failed: false, more: passes[calls++] ?? false }),
  };
  const background = new BackgroundWork(
    world.core.worker,
    world.core.sweeps,
    world.wake,
    { info: () => undefined, error: () => undefined },
    60_000,
    undefined,
    meterRelay,
  );
  await background.tick();
  await background.stop();
  // Two full batches, then one that found the rest: three passes, then the lane waits for the next tick.
  expect(calls).toBe(3);
});

describe('one failing step of the background work', () => {
  /** Sweeps that record their calls; `endedEvaluations` throws `failure`. */
  function recording(failure: unknown) {
    const calls: string[] = [];
    const call =
      (name: string, result: unknown = 0) =>
      async () => {
        calls.push(name);
        return result;
      };
    const sweeps = {
      cancellations: call('cancellations'),
      renewals: call('renewals'),
      endedEvaluations: async () => {
        calls.push('endedEvaluations');
        throw failure;
      },
      usageHolds: call('usageHolds'),
      usageLedger: call('usageLedger', { created: [], dropped: [] }),
    } as unknown as Sweeps;
    const worker = { drain: call('drain') } as unknown as EventWorker;
    const errors: { message: string; fields: unknown }[] = [];
    const background = new BackgroundWork(
      worker,
      sweeps,
      world.wake,
      { info: () => undefined, error: (message, fields) => errors.push({ message, fields }) },
      60_000,
    );
    return { calls, errors, background };
  }

  it('is logged, and the steps after it still run in the same pass', async () => {
    const { calls, errors, background } = recording(new Error('a broken license'));
    await background.tick();
    await background.stop();
    expect(calls).toEqual(['drain', 'cancellations', 'renewals', 'endedEvaluations', 'usageHolds', 'usageLedger']);
    expect(errors).toEqual([
      { message: 'background work: ended evaluations failed; the other steps go on', fields: { error: 'a broken license' } },
    ]);
  });

  it('an outage ends the pass, logged once (the next pass tries again)', async () => {
    const { calls, errors, background } = recording(new DomainError(ErrorCodes.DATABASE_UNAVAILABLE, 'the database is unavailable'));
    await background.tick();
    await background.stop();
    expect(calls).toEqual(['drain', 'cancellations', 'renewals', 'endedEvaluations']);
    expect(errors).toEqual([{ message: 'background work failed', fields: { error: 'the database is unavailable' } }]);
  });
});
