/* The ended-evaluations sweep (`Sweeps.endedEvaluations`): ad hoc EVALUATION licenses whose end has
   come are written CANCELED, keeping their end, each with its `license.cancelled` event; nothing
   else is touched. */
import { createCore, RENEWAL_RETRY_MS, type License, type OutboxEvent, type Repositories, type Tenant, type UnitOfWork } from '../src';
import { aCustomer, aLicense, aSubscription, createTestCore, InMemoryUnitOfWork, seedSample, type TestCore } from '../src/testing';

const DAY = 86_400_000;

/** The in-memory database, with a license whose save fails (a fault of that license's own). */
class PoisonedUnitOfWork implements UnitOfWork {
  poisoned = new Set<string>();
  constructor(private readonly inner: UnitOfWork = new InMemoryUnitOfWork()) {}
  read<T>(work: (r: Repositories) => Promise<T>): Promise<T> {
    return this.inner.read(work);
  }
  run<T>(work: (r: Repositories) => Promise<T>): Promise<T> {
    return this.inner.run((r) =>
      work({
        ...r,
        licenses: {
          ...r.licenses,
          saveMany: async (ls: License[]) => {
            if (ls.some((l) => this.poisoned.has(l.id))) throw new Error('this license cannot be saved');
            return r.licenses.saveMany(ls);
          },
        },
      }),
    );
  }
}

async function setUp(uow?: UnitOfWork) {
  const core = createTestCore(uow ? { uow } : {});
  const { tenant, keys } = await seedSample(core, 'evaluations');
  return { core, tenant, keys };
}

/** Ad hoc licenses on the team plan (an evaluation of 14 days), made now. */
const evaluations = async (core: TestCore, tenant: Tenant, teamPlan: string, grantees: (string | null)[]) =>
  (
    await core.licenses.createAdHoc(
      tenant,
      grantees.map((granteeId) => ({ planUuid: teamPlan, member: 'm@example.com', granteeId })),
    )
  ).licenses;

const cancelledEvents = async (core: TestCore, tenant: Tenant): Promise<OutboxEvent[]> =>
  (await core.webhookEvents.list(tenant, { limit: 1000, types: ['license.cancelled'] })).items;

const advanceDays = (core: TestCore, days: number) => core.clock.set(new Date(core.clock.now().getTime() + days * DAY));

it('writes an ended evaluation CANCELED keeping its end, with one license.cancelled each; lists, filters and counts follow', async () => {
  const { core, tenant, keys } = await setUp();
  const [ended, unassigned] = await evaluations(core, tenant, keys['plans.notes.team'], ['alice', null]);
  expect(ended.status).toBe('EVALUATION');
  const [free] = await evaluations(core, tenant, keys['plans.notes.free'], ['alice']);
  expect(free).toMatchObject({ status: 'ACTIVE', endTime: null });
  // Made later: its end comes a day after the others'.
  advanceDays(core, 1);
  const [later] = await evaluations(core, tenant, keys['plans.notes.team'], ['bob']);
  // Not yet ended: nothing to do.
  expect(await core.sweeps.endedEvaluations()).toBe(0);
  advanceDays(core, 13);
  expect(core.clock.now().getTime()).toBe((ended.endTime as Date).getTime());
  const before = await core.licenses.count(tenant, { status: 'EVALUATION' });
  expect(before.count).toBe(3);

  expect(await core.sweeps.endedEvaluations()).toBe(2);
  for (const l of [ended, unassigned]) {
    const now = await core.licenses.get(tenant, l.id);
    expect(now).toMatchObject({ status: 'CANCELED', endTime: l.endTime, cancelAtPeriodEnd: false, granteeId: l.granteeId });
  }
  expect(await core.licenses.get(tenant, later.id)).toMatchObject({ status: 'EVALUATION', endTime: later.endTime });
  expect(await core.licenses.get(tenant, free.id)).toMatchObject({ status: 'ACTIVE', endTime: null });
  expect(await core.licenses.count(tenant, { status: 'EVALUATION' })).toMatchObject({ count: 1 });
  expect((await core.licenses.list(tenant, { status: 'CANCELED' })).map((l) => l.id).sort()).toEqual([ended.id, unassigned.id].sort());
  const events = await cancelledEvents(core, tenant);
  expect(events.map((e) => e.orderingKey).sort()).toEqual([ended.id, unassigned.id].sort());
  expect(events.find((e) => e.orderingKey === ended.id)?.payload.data).toMatchObject({
    uuid: ended.id,
    status: 'CANCELED',
    endTime: (ended.endTime as Date).toISOString(),
  });

  // Again: nothing left to end, no event more.
  expect(await core.sweeps.endedEvaluations()).toBe(0);
  advanceDays(core, 1);
  expect(await core.sweeps.endedEvaluations()).toBe(1);
  expect(await core.sweeps.endedEvaluations()).toBe(0);
  expect((await cancelledEvents(core, tenant)).map((e) => e.orderingKey).sort()).toEqual([ended.id, unassigned.id, later.id].sort());
  expect(await core.licenses.get(tenant, free.id)).toMatchObject({ status: 'ACTIVE' });
});

it('the check: no access once the end passed, before the sweep or after; with `grace`, access ends with the sweep', async () => {
  const { core, tenant, keys } = await setUp();
  const [l] = await evaluations(core, tenant, keys['plans.notes.team'], ['gina']);
  const check = (graceDays: number) =>
    core.checks.check(tenant, { productId: keys['products.notes'], granteeIds: ['gina'], graceDays, encoding: 'der' });
  expect((await check(0))?.capabilities).toEqual(['edit', 'export']);
  core.clock.set(new Date((l.endTime as Date).getTime() + DAY));
  expect(await check(0)).toBeNull();
  // Its end plus 3 days is ahead: while it is EVALUATION, `grace` grants it still.
  expect((await check(3))?.capabilities).toEqual(['edit', 'export']);
  expect(await core.sweeps.endedEvaluations()).toBe(1);
  // CANCELED grants nothing, grace or not (as a subscription's seats once it ended; docs/decisions.md).
  expect(await check(0)).toBeNull();
  expect(await check(3)).toBeNull();
});

it("leaves a subscription's seats alone: a trial's TRIALING seats, and an EVALUATION seat", async () => {
  const { core, tenant, keys } = await setUp();
  const plan = await core.uow.read(async (r) => (await r.plans.get(keys['plans.notes.team']))!);
  const customer = aCustomer(tenant);
  const ended = new Date(core.clock.now().getTime() - DAY);
  const trial = aSubscription(plan, customer, { status: 'TRIALING', currentPeriodEnd: ended });
  const seats = [
    aLicense(plan, { subscriptionId: trial.id, status: 'TRIALING', endTime: ended, granteeId: 'alice' }),
    aLicense(plan, { subscriptionId: trial.id, status: 'EVALUATION', endTime: ended }),
  ];
  await core.uow.run(async (r) => {
    await r.customers.save(customer);
    await r.subscriptions.save(trial);
    await r.licenses.saveMany(seats);
  });
  expect(await core.sweeps.endedEvaluations()).toBe(0);
  expect((await core.licenses.list(tenant, { subscriptionId: trial.id })).map((l) => l.status).sort()).toEqual(['EVALUATION', 'TRIALING']);
  expect(await cancelledEvents(core, tenant)).toEqual([]);
});

it('ends at most `limit` a pass, the earliest ends first; two sweeps at once end each once', async () => {
  const { core, tenant, keys } = await setUp();
  const made: License[] = [];
  for (let n = 0; n < 5; n++) {
    made.push(
      ...(await evaluations(
        core,
        tenant,
        keys['plans.notes.team'],
        Array.from({ length: 50 }, (_, i) => `g${n}-${i}`),
      )),
    );
    advanceDays(core, 0.01);
  }
  advanceDays(core, 15);
  expect(await core.sweeps.endedEvaluations(120)).toBe(120);
  const canceled = new Set((await core.licenses.list(tenant, { status: 'CANCELED' })).map((l) => l.id));
  expect(made.slice(0, 100).every((l) => canceled.has(l.id))).toBe(true);
  expect(made.slice(150).some((l) => canceled.has(l.id))).toBe(false);
  const [a, b] = await Promise.all([core.sweeps.endedEvaluations(), core.sweeps.endedEvaluations()]);
  expect(a + b).toBe(130);
  expect(await core.licenses.count(tenant, { status: 'CANCELED' })).toMatchObject({ count: 250 });
  const keysOf = (await cancelledEvents(core, tenant)).map((e) => e.orderingKey);
  expect(keysOf).toHaveLength(250);
  expect(new Set(keysOf).size).toBe(250);
});

/** The core on `uow`, and the same database's sweeps with a logger that keeps what it is told. */
async function withLog(uow: PoisonedUnitOfWork) {
  const { core, tenant, keys } = await setUp(uow);
  const errors: { message: string; fields: unknown }[] = [];
  const { sweeps } = createCore({
    ...core.deps,
    logger: { info: () => undefined, error: (message, fields) => errors.push({ message, fields }) },
  });
  return { core, tenant, keys, errors, sweeps };
}

it('a license that cannot be saved is logged and passed over for a while; the others of its batch end', async () => {
  const uow = new PoisonedUnitOfWork();
  const { core, tenant, keys, errors, sweeps } = await withLog(uow);
  const made = await evaluations(core, tenant, keys['plans.notes.team'], ['a', 'b', 'c']);
  uow.poisoned.add(made[1].id);
  advanceDays(core, 15);
  expect(await sweeps.endedEvaluations()).toBe(2);
  const statuses = new Map((await core.licenses.list(tenant, {})).map((l) => [l.id, l.status]));
  expect(made.map((l) => statuses.get(l.id))).toEqual(['CANCELED', 'EVALUATION', 'CANCELED']);
  expect(errors).toEqual([
    {
      message: 'ending an evaluation license failed; passed over for now, the others go on',
      fields: { license: made[1].id, retryAfterMinutes: RENEWAL_RETRY_MS / 60_000, error: 'this license cannot be saved' },
    },
  ]);
  // Passed over: the next passes do not try it (no second log line), even once it could be saved ...
  expect(await sweeps.endedEvaluations()).toBe(0);
  uow.poisoned.clear();
  core.clock.set(new Date(core.clock.now().getTime() + RENEWAL_RETRY_MS - 1));
  expect(await sweeps.endedEvaluations()).toBe(0);
  expect(errors).toHaveLength(1);
  // ... until RENEWAL_RETRY_MS has passed: then it ends.
  core.clock.set(new Date(core.clock.now().getTime() + 1));
  expect(await sweeps.endedEvaluations()).toBe(1);
  expect(await core.licenses.get(tenant, made[1].id)).toMatchObject({ status: 'CANCELED' });
});

it('licenses that always fail, first in line, do not fill every pass: the ones behind them end on the next', async () => {
  const uow = new PoisonedUnitOfWork();
  const { core, tenant, keys, errors, sweeps } = await withLog(uow);
  // Two that cannot be saved end first; a third ends a day later.
  const broken = await evaluations(core, tenant, keys['plans.notes.team'], ['x', 'y']);
  for (const l of broken) uow.poisoned.add(l.id);
  advanceDays(core, 1);
  const [behind] = await evaluations(core, tenant, keys['plans.notes.team'], ['z']);
  advanceDays(core, 15);
  // A pass of two: both broken ones, logged.
  expect(await sweeps.endedEvaluations(2)).toBe(0);
  expect(errors.map((e) => (e.fields as { license: string }).license).sort()).toEqual(broken.map((l) => l.id).sort());
  // The next pass of two passes them over and reaches the one behind.
  expect(await sweeps.endedEvaluations(2)).toBe(1);
  expect(await core.licenses.get(tenant, behind.id)).toMatchObject({ status: 'CANCELED' });
  expect(errors).toHaveLength(2);
});
