import { randomUUID } from 'node:crypto';
import { DomainError, ErrorCodes, type ErrorCode, type Repositories, type UnitOfWork } from '../src';
import { buyPlan, createTestCore, InMemoryUnitOfWork, seedSample, type TestCore } from '../src/testing';

/** The PostgreSQL unit of work's answers in an outage: a transaction that never reached COMMIT, a full pool, a COMMIT cut off. */
const NOTHING = 'the database is unavailable; nothing was changed, retry later';
const FULL = 'every database connection stayed in use; nothing was changed, retry shortly';
const IN_DOUBT =
  'the database became unreachable while this change was being committed, so it may have been applied: read it back before writing it again (or retry with the same idempotency-key, on the catalog API)';

/** An in-memory unit of work that goes down when told (`down`), or from its n-th transaction on (`downFromRun`). */
class Outage implements UnitOfWork {
  down = false;
  /** Transactions still to refuse, one after the other (the database back after them). */
  failRuns = 0;
  runs = 0;
  downFromRun = Infinity;
  answer: [ErrorCode, string] = [ErrorCodes.DATABASE_UNAVAILABLE, NOTHING];
  constructor(private readonly inner = new InMemoryUnitOfWork()) {}
  private gone() {
    return Promise.reject(new DomainError(...this.answer));
  }
  read<T>(work: (r: Repositories) => Promise<T>): Promise<T> {
    return this.down ? this.gone() : this.inner.read(work);
  }
  /** A statement that fails inside a transaction (`table.method`), once: the connection lost mid-transaction. */
  failStatement: string | undefined;
  run<T>(work: (r: Repositories) => Promise<T>): Promise<T> {
    if (++this.runs >= this.downFromRun) this.down = true;
    if (this.failRuns > 0) {
      this.failRuns--;
      return this.gone();
    }
    return this.down ? this.gone() : this.inner.run((r) => work(this.watched(r)));
  }
  private watched(repos: Repositories): Repositories {
    const wrapped: Record<string, unknown> = {};
    for (const [table, repo] of Object.entries(repos))
      wrapped[table] = new Proxy(repo as object, {
        get: (target, method) => {
          const fn = Reflect.get(target, method) as unknown;
          if (typeof fn !== 'function') return fn;
          return (...args: unknown[]) => {
            if (this.failStatement === `${table}.${String(method)}`) {
              this.failStatement = undefined;
              return this.gone();
            }
            return (fn as (...a: unknown[]) => unknown).apply(target, args);
          };
        },
      });
    return wrapped as unknown as Repositories;
  }
  changeFeed() {
    return this.inner.changeFeed();
  }
}

type Provider = Record<string, (...a: unknown[]) => Promise<unknown>>;

/** While `armed`, the transaction after the payment provider took a change fails in an outage (the database back after it). */
function downWhenProviderTold(core: TestCore, uow: Outage): { armed: boolean } {
  const state = { armed: false };
  const provider = core.payments as unknown as Provider;
  for (const op of ['changePlan', 'addPlan', 'setPlanSeats', 'cancel', 'reactivate', 'applyCoupon', 'changeSeats']) {
    if (!provider[op]) continue;
    const told = provider[op].bind(provider);
    provider[op] = async (...args) => {
      const out = await told(...args);
      if (state.armed) uow.failRuns = 1;
      return out;
    };
  }
  return state;
}

async function world(test = false) {
  const uow = new Outage();
  const core = createTestCore({ uow: uow as unknown as UnitOfWork });
  const { tenant, keys } = await seedSample(core, `org-${randomUUID()}`, test);
  const { subscription } = await buyPlan(core, keys['plans.notes.team'], 2, 'alice');
  const trap = downWhenProviderTold(core, uow);
  /** Runs `change` with the trap armed; the database is back afterwards. */
  const downAfterProvider = async (change: () => Promise<unknown>) => {
    trap.armed = true;
    try {
      return await refusal(change());
    } finally {
      trap.armed = false;
    }
  };
  return { uow, core, tenant, keys, s: subscription, trap, downAfterProvider };
}

const refusal = async (p: Promise<unknown>) => {
  const e = await p.then(
    () => undefined,
    (x: unknown) => x,
  );
  expect(e).toBeInstanceOf(DomainError);
  return e as DomainError;
};

const TOLD =
  /^the payment provider was told of this change, but the database became unavailable before the rest was written: it may be partly applied, so read the subscription back before retrying$/;

describe('a change whose earlier step is done answers an outage of its last step truthfully', () => {
  it('every change the provider took (plan change, cancel, reactivate, added plan and its seats, coupon, seats): 503 says so, never "nothing was changed"', async () => {
    const { core, tenant, keys, s, downAfterProvider } = await world();
    const business = keys['plans.notes.business'];
    const addBusiness = () => core.subscriptionItems.change(tenant, s.id, [{ kind: 'add', planId: business, at: 'items[0]' }], 'none');
    const cases: [string, () => Promise<unknown>, (() => Promise<unknown>)?][] = [
      ['changePlan', () => core.subscriptions.changePlan(tenant, s.id, business, 'none')],
      ['cancel', () => core.subscriptions.cancel(tenant, s.id, 'now')],
      // Reactivating a cancellation scheduled at the period's end.
      ['reactivate', () => core.subscriptions.reactivate(tenant, s.id), () => core.subscriptions.cancel(tenant, s.id, 'end')],
      ['addPlan', addBusiness],
      ['changeSeats', () => core.seats.apply(s.id, { type: 'seats.increment', count: 1, proration: 'none' })],
      ['applyCoupon', () => core.coupons.apply(tenant, s.id, 'SAVE10')],
      // The added plan's seats (the fake provider takes them as the plan's seats added).
      ['addPlan', () => core.subscriptionItems.setAddedSeats(tenant, s.id, business, 3, 'none'), addBusiness],
    ];
    for (const [op, change, before] of cases) {
      await before?.();
      const calls = core.payments.calls.length;
      const e = await downAfterProvider(change);
      expect([op, e.code, e.message]).toEqual([op, ErrorCodes.DATABASE_UNAVAILABLE, expect.stringMatching(TOLD)]);
      expect(core.payments.calls.slice(calls)[0]).toMatchObject({ op });
    }
    // None of it was written here (the plan added before the seats' case stays).
    const now = (await core.subscriptions.get(tenant, s.id)).subscription;
    expect([now.planId, now.status, now.quantity, now.addedPlans.map((a) => [a.planId, a.quantity])]).toEqual([
      keys['plans.notes.team'],
      'ACTIVE',
      2,
      [[business, 1]],
    ]);
  });

  it('a full pool says so; a last COMMIT in doubt keeps its claim after what was done', async () => {
    const { uow, core, tenant, keys, s, downAfterProvider } = await world();
    uow.answer = [ErrorCodes.BUSY, FULL];
    const busy = await downAfterProvider(() => core.subscriptions.changePlan(tenant, s.id, keys['plans.notes.business'], 'none'));
    expect([busy.code, busy.message]).toEqual([
      ErrorCodes.BUSY,
      'the payment provider was told of this change, but every database connection stayed in use before the rest was written: it may be partly applied, so read the subscription back before retrying',
    ]);
    uow.answer = [ErrorCodes.DATABASE_UNAVAILABLE, IN_DOUBT];
    const doubt = await downAfterProvider(() => core.subscriptions.cancel(tenant, s.id, 'now'));
    expect(doubt.message).toBe(`the payment provider was told of this change; then ${IN_DOUBT}`);
  });

  it('a plan the provider added is removed there again when the write after it fails in an outage', async () => {
    const { core, tenant, keys, s, downAfterProvider } = await world();
    const provider = core.payments as unknown as Provider;
    const added = provider.addPlan;
    provider.addPlan = async (...args) => ({ ...((await added(...args)) as object), paymentItemId: 'si_added' });
    const e = await downAfterProvider(() =>
      core.subscriptionItems.change(tenant, s.id, [{ kind: 'add', planId: keys['plans.notes.business'], at: 'items[0]' }], 'none'),
    );
    expect(e.message).toMatch(TOLD);
    expect(core.payments.calls.slice(-2)).toMatchObject([
      { op: 'addPlan' },
      { op: 'removePlan', request: { paymentItemId: 'si_added', proration: 'none' } },
    ]);
  });

  it('keeps the unit of work\'s own answer ("nothing was changed") before the provider is told, and for a subscription no provider bills', async () => {
    const { uow, core, tenant, keys, s, downAfterProvider } = await world();
    const calls = core.payments.calls.length;
    uow.down = true;
    const before = await refusal(core.subscriptions.changePlan(tenant, s.id, keys['plans.notes.business'], 'none'));
    uow.down = false;
    expect(before.message).toBe(NOTHING);
    expect(core.payments.calls.length).toBe(calls);
    // Started without payment: the provider keeps nothing of it, so nothing was changed anywhere.
    const free = await core.subscriptionAdmin.create(tenant, {
      planId: keys['plans.notes.team'],
      granteeId: 'bo',
      owner: 'bo',
      quantity: 2,
    });
    const e = await downAfterProvider(() => core.subscriptions.cancel(tenant, free.subscription.id, 'now'));
    expect(e.message).toBe(NOTHING);
  });

  it('a seat change the provider took whose write met an outage is retried by the event worker, not failed for good', async () => {
    const { core, tenant, s, trap } = await world();
    const event = await core.seats.request(tenant, s.id, { type: 'seats.increment', count: 1, proration: 'none' });
    trap.armed = true;
    await core.worker.processNext();
    trap.armed = false;
    expect(await core.worker.get(tenant, event.id)).toMatchObject({ status: 'pending', attempts: 1, errorCode: 'DATABASE_UNAVAILABLE' });
    core.clock.advanceDays(1);
    await core.worker.processNext();
    expect((await core.worker.get(tenant, event.id)).status).toBe('success');
    expect((await core.subscriptions.get(tenant, s.id)).subscription.quantity).toBe(3);
    // The provider was told the same quantity both times.
    expect(core.payments.calls.filter((c) => c.op === 'changeSeats')).toMatchObject([{ quantity: 3 }, { quantity: 3 }]);
  });

  it("a seat count whose write met an outage after the provider took it is not added again when the provider's re-sync wrote it first", async () => {
    const { core, tenant, s, trap } = await world();
    await core.uow.run(async (r) => r.subscriptions.save({ ...s, paymentSubscriptionId: 'sub_resynced' }));
    const event = await core.seats.request(tenant, s.id, { type: 'seats.increment', count: 2, proration: 'none' });
    trap.armed = true;
    await core.worker.processNext();
    trap.armed = false;
    expect(await core.worker.get(tenant, event.id)).toMatchObject({ status: 'pending', errorCode: 'DATABASE_UNAVAILABLE' });
    // The provider's update arrives first and re-syncs the quantity it took (2 + 2).
    const held = (await core.subscriptions.get(tenant, s.id)).subscription;
    const snapshot = {
      status: held.status,
      currentPeriodStart: held.currentPeriodStart,
      currentPeriodEnd: held.currentPeriodEnd,
      cancelAtPeriodEnd: false,
      canceledAt: null,
      quantity: 4,
    };
    expect(await core.providerSync.sync('sub_resynced', snapshot)).toBe('applied');
    core.clock.advanceDays(1);
    await core.worker.processNext();
    expect((await core.worker.get(tenant, event.id)).status).toBe('success');
    // 4, as the provider bills: the retry aimed at the number the first try decided, not 2 more.
    expect((await core.subscriptions.get(tenant, s.id)).subscription.quantity).toBe(4);
    expect(core.payments.calls.filter((c) => c.op === 'changeSeats')).toMatchObject([{ quantity: 4 }]);
  });

  it('a test-mode delete canceled but not deleted says the subscription was canceled, and its retry completes it', async () => {
    const { uow, core, tenant, s } = await world(true);
    // Transactions of the delete: the cancel's decision, the cancel's write, then the delete.
    uow.runs = 0;
    uow.downFromRun = 3;
    const e = await refusal(core.subscriptionDirectory.delete(tenant, s.id));
    expect([e.code, e.message]).toEqual([
      ErrorCodes.DATABASE_UNAVAILABLE,
      'the subscription was canceled, but the database became unavailable before the rest was written: retry the delete to remove it',
    ]);
    uow.down = false;
    uow.downFromRun = Infinity;
    expect((await core.subscriptions.get(tenant, s.id)).subscription.status).toBe('CANCELED');
    await core.subscriptionDirectory.delete(tenant, s.id);
    await expect(core.subscriptions.get(tenant, s.id)).rejects.toMatchObject({ code: ErrorCodes.NOT_FOUND });
  });

  it('a usage record that made its meter and then met an outage says the meter was made; the retry records once', async () => {
    const { uow, core, tenant, s } = await world();
    const [license] = await core.licenses.list(tenant, { subscriptionId: s.id });
    const record = () =>
      core.usage.recordForLicense(tenant, { licenseId: license.id, featureVariableName: 'projects', increment: 2 }, 'u-1');
    uow.failStatement = 'usage.lockBalances';
    const e = await refusal(record());
    expect([e.code, e.message]).toEqual([
      ErrorCodes.DATABASE_UNAVAILABLE,
      'the meter projects was made for this feature, but the database became unavailable before the rest was written: retry the usage (with the same unique-key)',
    ]);
    await record();
    await record();
    expect(await core.usage.licenseUsage(tenant, license.id)).toMatchObject([{ unitCount: 2 }]);
  });

  it("an added plan's seats set by two identical requests at once: the seats move once, and one charge is kept", async () => {
    const { core, tenant, keys, s } = await world();
    const business = keys['plans.notes.business'];
    await core.subscriptionItems.change(tenant, s.id, [{ kind: 'add', planId: business, at: 'items[0]' }], 'none');
    // The provider bills each change it is told as a document (as the sandbox's proration invoices).
    const provider = core.payments as unknown as Provider;
    const add = provider.addPlan;
    provider.addPlan = async (...args) => ({
      ...((await add(...args)) as object),
      documents: [
        { id: randomUUID(), organisationId: tenant.organisationId, subscriptionId: s.id, kind: 'invoice', body: {}, createdAt: new Date() },
      ],
    });
    await Promise.all([1, 2].map(() => core.subscriptionItems.setAddedSeats(tenant, s.id, business, 3, 'none')));
    const now = (await core.subscriptions.get(tenant, s.id)).subscription;
    expect(now.addedPlans.map((a) => [a.planId, a.quantity])).toEqual([[business, 3]]);
    // Both requests told the provider (each decided on the same read), but only the change made keeps its charge.
    expect(core.payments.calls.filter((c) => c.op === 'addPlan')).toHaveLength(3);
    expect(await core.uow.read((r) => r.billingDocuments.list(s.id, 'invoice'))).toHaveLength(1);
  });

  describe('inside an idempotent request (the catalog idempotency-key: its use cases join one transaction)', () => {
    const scope = (tenant: { organisationId: string; isTest: boolean }, key: string) => ({ ...tenant, key, route: 'POST /test' });

    it('a transaction that fails after the provider was told says so, and the key stays free for a retry', async () => {
      const { uow, core, tenant, s } = await world();
      const calls = core.payments.calls.length;
      // The subscription's write goes through; the key's answer (the last statement) meets the outage.
      uow.failStatement = 'idempotency.complete';
      const e = await refusal(
        core.idempotency.perform(scope(tenant, 'k1'), 'fp', async () => {
          await core.subscriptions.cancel(tenant, s.id, 'now');
          return { status: 204 };
        }),
      );
      expect([e.code, e.message]).toEqual([ErrorCodes.DATABASE_UNAVAILABLE, expect.stringMatching(TOLD)]);
      expect(core.payments.calls.slice(calls)).toMatchObject([{ op: 'cancel' }]);
      // Rolled back here with the key: the retry runs (no answer was kept).
      expect((await core.subscriptions.get(tenant, s.id)).subscription.status).toBe('ACTIVE');
      const retried = await core.idempotency.perform(scope(tenant, 'k1'), 'fp', async () => {
        await core.subscriptions.cancel(tenant, s.id, 'now');
        return { status: 204 };
      });
      expect(retried.kind).toBe('ran');
      expect((await core.subscriptions.get(tenant, s.id)).subscription.status).toBe('CANCELED');
    });

    it("a plan the provider added is removed there again when the request's transaction fails after the change was written", async () => {
      const { uow, core, tenant, keys, s } = await world();
      const provider = core.payments as unknown as Provider;
      const added = provider.addPlan;
      provider.addPlan = async (...args) => ({ ...((await added(...args)) as object), paymentItemId: 'si_joined' });
      uow.failStatement = 'idempotency.complete';
      const e = await refusal(
        core.idempotency.perform(scope(tenant, 'k2'), 'fp', async () => {
          await core.subscriptionItems.change(
            tenant,
            s.id,
            [{ kind: 'add', planId: keys['plans.notes.business'], at: 'items[0]' }],
            'none',
          );
          return { status: 204 };
        }),
      );
      expect(e.message).toMatch(TOLD);
      expect(core.payments.calls.slice(-2)).toMatchObject([
        { op: 'addPlan' },
        { op: 'removePlan', request: { paymentItemId: 'si_joined', proration: 'none' } },
      ]);
      expect((await core.subscriptions.get(tenant, s.id)).subscription.addedPlans).toEqual([]);
    });

    it('a refusal inside it keeps its own answer, and nothing outside was done', async () => {
      const { core, tenant, s } = await world();
      await core.subscriptions.cancel(tenant, s.id, 'now');
      const e = await refusal(
        core.idempotency.perform(scope(tenant, 'k3'), 'fp', async () => {
          await core.subscriptions.cancel(tenant, s.id, 'now');
          return { status: 204 };
        }),
      );
      expect(e.code).toBe(ErrorCodes.SUBSCRIPTION_CANCELED);
    });
  });
});
