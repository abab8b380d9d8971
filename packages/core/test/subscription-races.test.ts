/* Changes when the state moves under them: a number of seats asked for behind queued changes, a
   seat change decided again on another state, a change refused on the locked row after the payment
   provider took it, two identical auto-renew requests at once, and auto-renew asked while a
   cancellation is scheduled. */
import { randomUUID } from 'node:crypto';
import {
  ErrorCodes,
  SYNC_ATTEMPTS,
  type PaymentProvider,
  type Plan,
  type PlanChangeRequest,
  type ProviderOutcome,
  type Repositories,
  type Subscription,
  type UnitOfWork,
} from '../src';
import { buyPlan, createTestCore, InMemoryUnitOfWork, seedSample } from '../src/testing';

/** The in-memory unit of work; `afterRun` runs (once) when the next transaction has ended. */
class AfterRun implements UnitOfWork {
  afterRun: (() => Promise<void>) | undefined;
  private readonly inner = new InMemoryUnitOfWork();
  read<T>(work: (r: Repositories) => Promise<T>): Promise<T> {
    return this.inner.read(work);
  }
  async run<T>(work: (r: Repositories) => Promise<T>): Promise<T> {
    const out = await this.inner.run(work);
    const after = this.afterRun;
    this.afterRun = undefined;
    await after?.();
    return out;
  }
  changeFeed() {
    return this.inner.changeFeed();
  }
}

async function world() {
  const uow = new AfterRun();
  const core = createTestCore({ uow });
  const { tenant, keys } = await seedSample(core, `org-${randomUUID()}`);
  const { subscription } = await buyPlan(core, keys['plans.notes.team'], 2, 'alice');
  const quantity = async () => (await core.subscriptions.get(tenant, subscription.id)).subscription.quantity;
  const drain = async () => {
    while (await core.worker.processNext());
  };
  return { uow, core, tenant, keys, s: subscription, quantity, drain };
}

/** What a provider answers when it bills a change: one invoice whose body names the change. */
const invoiceNaming = (s: Subscription, body: Record<string, unknown>): ProviderOutcome => ({
  documents: [{ id: randomUUID(), organisationId: s.organisationId, subscriptionId: s.id, kind: 'invoice', body, createdAt: new Date() }],
});

type ChangeSeats = (s: Subscription, plan: Plan, quantity: number, ...rest: unknown[]) => Promise<ProviderOutcome>;

describe('a number of seats asked for', () => {
  it('is queued behind the changes still waiting, even when it is the number held now', async () => {
    const { core, tenant, s, quantity, drain } = await world();
    expect(await core.seats.requestQuantity(tenant, s.id, 4, 'none')).not.toBeNull();
    // Still 2 until the worker applies the first: asking for 2 again must undo it, not be dropped.
    expect(await quantity()).toBe(2);
    expect(await core.seats.requestQuantity(tenant, s.id, 2, 'none')).not.toBeNull();
    await drain();
    expect(await quantity()).toBe(2);
    // Nothing waits now: the number held is no change at all.
    expect(await core.seats.requestQuantity(tenant, s.id, 2, 'none')).toBeNull();
  });

  it('is refused on a canceled subscription even when it is the number held', async () => {
    const { core, tenant, s } = await world();
    await core.subscriptions.cancel(tenant, s.id, 'now');
    await expect(core.seats.requestQuantity(tenant, s.id, 2, 'none')).rejects.toMatchObject({ code: ErrorCodes.SUBSCRIPTION_CANCELED });
  });

  it('decided again on another state keeps what the provider billed for the change made, not the one first told', async () => {
    const { core, s, quantity } = await world();
    // The provider bills each change it is told as a document naming it.
    const provider = core.payments as unknown as { changeSeats: ChangeSeats };
    const told = provider.changeSeats.bind(provider);
    let moveOnce = true;
    provider.changeSeats = async (before, plan, q, ...rest) => {
      await told(before, plan, q, ...rest);
      // While the provider takes the first change, another seat is added and committed.
      if (moveOnce) {
        moveOnce = false;
        await core.seats.apply(s.id, { type: 'seats.increment', count: 1, proration: 'none' });
      }
      return invoiceNaming(s, { from: before.quantity, to: q });
    };
    await core.seats.apply(s.id, { type: 'seats.increment', count: 3, proration: 'none', quantity: 5 });
    expect(await quantity()).toBe(5);
    const bodies = (await core.uow.read((r) => r.billingDocuments.list(s.id, 'invoice'))).map((d) => d.body);
    // The seat added meanwhile (2 -> 3), then the change made (3 -> 5); never 2 -> 5 as well.
    expect(bodies).toEqual(
      expect.arrayContaining([
        { from: 2, to: 3 },
        { from: 3, to: 5 },
      ]),
    );
    expect(bodies).toHaveLength(2);
  });
});

describe('a plan change decided again on another plan', () => {
  it('keeps what the provider billed only for the change made: two changes at once never both bill from the first plan', async () => {
    const { core, tenant, keys, s } = await world();
    const [team, business, free] = ['plans.notes.team', 'plans.notes.business', 'plans.notes.free'].map((k) => keys[k]);
    // The provider bills each change it is told as a document naming it (the sandbox's proration invoice).
    const provider = core.payments as unknown as { changePlan: (request: PlanChangeRequest) => Promise<ProviderOutcome> };
    const told = provider.changePlan.bind(provider);
    let raceOnce = true;
    provider.changePlan = async (request) => {
      await told(request);
      // While the provider takes team -> business, another change (team -> free) is made and committed.
      if (raceOnce) {
        raceOnce = false;
        await core.subscriptions.changePlan(tenant, s.id, free, 'always_invoice');
      }
      return invoiceNaming(s, { from: request.from.id, to: request.to.id });
    };
    await core.subscriptions.changePlan(tenant, s.id, business, 'always_invoice');
    expect((await core.subscriptions.get(tenant, s.id)).subscription.planId).toBe(business);
    const bodies = (await core.uow.read((r) => r.billingDocuments.list(s.id, 'invoice'))).map((d) => d.body);
    // The change made first (team -> free) is billed; the second was made from free, not from team:
    // its invoice (team -> business) is not kept as if it were.
    expect(bodies).toContainEqual({ from: team, to: free });
    expect(bodies).not.toContainEqual({ from: team, to: business });
  });
});

describe('a seat change refused on the locked row after the provider took it', () => {
  it('tells the provider the quantity held again (the first plan)', async () => {
    const { core, tenant, s, quantity } = await world();
    await core.seats.apply(s.id, { type: 'seats.increment', count: 2, proration: 'none' });
    const free = (await core.licenses.list(tenant, { subscriptionId: s.id })).filter((l) => l.granteeId === null);
    expect(free.length).toBeGreaterThan(0);
    const provider = core.payments as unknown as { changeSeats: ChangeSeats };
    const told = provider.changeSeats.bind(provider);
    let assignOnce = true;
    provider.changeSeats = async (...args) => {
      const out = await told(...args);
      // While the provider takes the removal, every free seat is assigned: none is left to remove.
      if (assignOnce) {
        assignOnce = false;
        for (const [i, l] of free.entries()) await core.licenses.update(tenant, l.id, { granteeId: `late-${i}` });
      }
      return out;
    };
    const calls = core.payments.calls.length;
    await expect(core.seats.apply(s.id, { type: 'seats.decrement', count: 1, proration: 'none' })).rejects.toMatchObject({
      code: ErrorCodes.SEATS_EXCEED_UNASSIGNED,
    });
    expect(await quantity()).toBe(4);
    expect(core.payments.calls.slice(calls)).toMatchObject([
      { op: 'changeSeats', quantity: 3 },
      { op: 'changeSeats', quantity: 4 },
    ]);
  });

  it("tells a provider that keeps an added plan's number the number held again", async () => {
    const { core, tenant, keys, s } = await world();
    const business = keys['plans.notes.business'];
    await core.subscriptionItems.change(tenant, s.id, [{ kind: 'add', planId: business, at: 'items[0]' }], 'none');
    await core.subscriptionItems.setAddedSeats(tenant, s.id, business, 3, 'none');
    const free = (await core.licenses.list(tenant, { subscriptionId: s.id })).filter((l) => l.planId === business && l.granteeId === null);
    expect(free.length).toBeGreaterThan(0);
    // A provider that keeps the number of an added plan's seats (as Stripe's subscription item).
    const set: number[] = [];
    let assignOnce = true;
    (core.payments as unknown as { setPlanSeats: (r: { quantity: number }) => Promise<ProviderOutcome> }).setPlanSeats = async (r) => {
      set.push(r.quantity);
      if (assignOnce) {
        assignOnce = false;
        for (const [i, l] of free.entries()) await core.licenses.update(tenant, l.id, { granteeId: `late-${i}` });
      }
      return {};
    };
    await expect(core.subscriptionItems.setAddedSeats(tenant, s.id, business, 2, 'none')).rejects.toMatchObject({
      code: ErrorCodes.SEATS_EXCEED_UNASSIGNED,
    });
    const held = (await core.subscriptions.get(tenant, s.id)).subscription.addedPlans.find((a) => a.planId === business);
    expect(held?.quantity).toBe(3);
    expect(set).toEqual([2, 3]);
  });
});

it('auto-renew turned on by two identical requests at once: both answer as a repeat does', async () => {
  const { core, tenant, s } = await world();
  await core.subscriptions.cancel(tenant, s.id, 'end');
  const both = await Promise.allSettled([1, 2].map(() => core.subscriptionDirectory.setAutoRenew(tenant, s.id, true)));
  expect(both.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled']);
  expect((await core.subscriptions.get(tenant, s.id)).subscription.cancelAtPeriodEnd).toBe(false);
  // And once more, with nothing scheduled: nothing told.
  const calls = core.payments.calls.length;
  await core.subscriptionDirectory.setAutoRenew(tenant, s.id, true);
  expect(core.payments.calls.length).toBe(calls);
});

it('auto-renew asked while a cancellation is being scheduled never writes a change the provider was not told', async () => {
  const { uow, core, tenant, s } = await world();
  // Auto-renew is on (nothing to do) when read; then, before it is answered, a cancellation at the
  // period's end is scheduled (told to the provider and committed).
  uow.afterRun = async () => {
    await core.subscriptions.cancel(tenant, s.id, 'end');
  };
  const calls = core.payments.calls.length;
  await core.subscriptionDirectory.setAutoRenew(tenant, s.id, true);
  // What the provider was told last is what is held: the cancellation stays scheduled.
  expect(core.payments.calls.slice(calls)).toMatchObject([{ op: 'cancel', when: 'end' }]);
  expect((await core.subscriptions.get(tenant, s.id)).subscription.cancelAtPeriodEnd).toBe(true);
});

it('a plan change whose kind the state changed under it (moved onto a usage-based plan meanwhile) is refused, nothing written', async () => {
  const { uow, core, tenant, keys } = await world();
  // One seat, so that both moves fit its seats (the usage-based plan is not per seat).
  const { subscription: s } = await buyPlan(core, keys['plans.notes.business'], 1, 'bob');
  // Decided a move (business -> free) on the plain read; then, before its write, the subscription
  // is moved onto the usage-based plan, where a change is a new subscription instead.
  uow.afterRun = async () => {
    await core.subscriptions.changePlan(tenant, s.id, keys['plans.notes.metered'], 'none');
  };
  await expect(core.subscriptions.changePlan(tenant, s.id, keys['plans.notes.free'], 'none')).rejects.toMatchObject({
    code: ErrorCodes.CONFLICT,
  });
  const now = (await core.subscriptions.get(tenant, s.id)).subscription;
  expect([now.status, now.planId]).toEqual(['ACTIVE', keys['plans.notes.metered']]);
});

describe("the provider's re-sync fetched while another sync lands", () => {
  const snapshotOf = (s: Subscription, quantity: number, cancelAtPeriodEnd = false) => ({
    status: 'ACTIVE' as const,
    currentPeriodStart: s.currentPeriodStart,
    currentPeriodEnd: s.currentPeriodEnd,
    cancelAtPeriodEnd,
    canceledAt: null,
    quantity,
  });

  it('a snapshot fetched before another sync committed is fetched again, never written over the newer one', async () => {
    const { core, tenant, s, quantity } = await world();
    await core.uow.run((r) => r.subscriptions.save({ ...s, paymentSubscriptionId: 'sub_race' }));
    // The provider's state: 4 seats when the first fetch reads it, 6 by the time the second does.
    let fetches = 0;
    const first = core.providerSync.syncFetched('sub_race', async () => {
      fetches++;
      if (fetches > 1) return snapshotOf(s, 6);
      // The second event's sync (the newer state) commits while this fetch is on the wire.
      expect(await core.providerSync.syncFetched('sub_race', async () => snapshotOf(s, 6, true))).toBe('applied');
      return snapshotOf(s, 4);
    });
    expect(await first).toBe('applied');
    expect(fetches).toBe(2);
    expect(await quantity()).toBe(6);
    expect((await core.subscriptions.get(tenant, s.id)).subscription.cancelAtPeriodEnd).toBe(false);
  });

  it('a subscription that keeps changing while it is fetched is a 409 CONFLICT after a few fetches, nothing written', async () => {
    const { core, s, quantity } = await world();
    await core.uow.run((r) => r.subscriptions.save({ ...s, paymentSubscriptionId: 'sub_busy' }));
    let fetches = 0;
    await expect(
      core.providerSync.syncFetched('sub_busy', async () => {
        fetches++;
        // Another write of the subscription lands during every fetch.
        await core.uow.run(async (r) => r.subscriptions.save((await r.subscriptions.get(s.id)) as Subscription));
        return snapshotOf(s, 9);
      }),
    ).rejects.toMatchObject({ code: ErrorCodes.CONFLICT });
    expect(fetches).toBe(SYNC_ATTEMPTS);
    expect(await quantity()).toBe(2);
  });
});

describe("a plan changed at the provider (Stripe's dashboard or customer portal)", () => {
  const withPrice = async (core: Awaited<ReturnType<typeof world>>['core'], planId: string, price: string) =>
    core.uow.run(async (r) => r.plans.save({ ...((await r.plans.get(planId)) as Plan), providerPlanId: price }));
  const snapshot = (s: Subscription, priceId: string, quantity = 2) => ({
    status: 'ACTIVE' as const,
    currentPeriodStart: s.currentPeriodStart,
    currentPeriodEnd: s.currentPeriodEnd,
    cancelAtPeriodEnd: false,
    canceledAt: null,
    quantity,
    items: [{ id: 'si_first', priceId, quantity }],
  });

  it("is followed: the first plan's item at another plan's price moves the subscription and its seats to that plan", async () => {
    const { core, tenant, keys, s } = await world();
    await core.uow.run((r) => r.subscriptions.save({ ...s, paymentSubscriptionId: 'sub_portal' }));
    await withPrice(core, keys['plans.notes.team'], 'price_team');
    await withPrice(core, keys['plans.notes.business'], 'price_business');
    // Its own price: nothing moves.
    expect(await core.providerSync.sync('sub_portal', snapshot(s, 'price_team'))).toBe('applied');
    expect((await core.subscriptions.get(tenant, s.id)).subscription.planId).toBe(keys['plans.notes.team']);
    // The customer switched to Business in the provider's portal, with a third seat.
    expect(await core.providerSync.sync('sub_portal', snapshot(s, 'price_business', 3))).toBe('applied');
    const view = await core.subscriptions.get(tenant, s.id);
    expect(view.subscription).toMatchObject({ planId: keys['plans.notes.business'], quantity: 3 });
    const seats = (await core.licenses.list(tenant, { subscriptionId: s.id })).filter((l) => l.status !== 'CANCELED');
    expect(seats).toHaveLength(3);
    expect(new Set(seats.map((l) => l.planId))).toEqual(new Set([keys['plans.notes.business']]));
    // Told again (a replay, another event): nothing more moves.
    expect(await core.providerSync.sync('sub_portal', snapshot(s, 'price_business', 3))).toBe('applied');
    expect((await core.subscriptions.get(tenant, s.id)).subscription.planId).toBe(keys['plans.notes.business']);
  });

  it('a plan change through the API whose own webhook moved the subscription first is done, not refused', async () => {
    const { uow, core, tenant, keys, s } = await world();
    await core.uow.run((r) => r.subscriptions.save({ ...s, paymentSubscriptionId: 'sub_api_race' }));
    await withPrice(core, keys['plans.notes.business'], 'price_business');
    // Decided on the plain read; then, while the provider is told, the provider's webhook for this
    // very change is applied (the re-sync follows the switch).
    uow.afterRun = async () => {
      expect(await core.providerSync.sync('sub_api_race', snapshot(s, 'price_business'))).toBe('applied');
    };
    const change = await core.subscriptions.changePlan(tenant, s.id, keys['plans.notes.business'], 'none');
    expect([change.kind, change.view.subscription.planId]).toEqual(['moved', keys['plans.notes.business']]);
    expect((await core.subscriptions.get(tenant, s.id)).subscription.planId).toBe(keys['plans.notes.business']);
  });

  it('a plan change through the API whose own webhook moved the subscription, which was then canceled, is refused', async () => {
    const { uow, core, tenant, keys, s } = await world();
    await core.uow.run((r) => r.subscriptions.save({ ...s, paymentSubscriptionId: 'sub_api_race_2' }));
    await withPrice(core, keys['plans.notes.business'], 'price_business');
    uow.afterRun = async () => {
      await core.providerSync.sync('sub_api_race_2', snapshot(s, 'price_business'));
      await core.subscriptions.cancel(tenant, s.id, 'now');
    };
    await expect(core.subscriptions.changePlan(tenant, s.id, keys['plans.notes.business'], 'none')).rejects.toMatchObject({
      code: ErrorCodes.SUBSCRIPTION_CANCELED,
    });
  });

  it('is not followed onto a usage-based plan (a change there starts a new subscription), nor to a price of no plan', async () => {
    const { core, tenant, keys, s } = await world();
    await core.uow.run((r) => r.subscriptions.save({ ...s, paymentSubscriptionId: 'sub_portal_2' }));
    await withPrice(core, keys['plans.notes.metered'], 'price_metered');
    for (const price of ['price_metered', 'price_of_nothing'])
      expect(await core.providerSync.sync('sub_portal_2', snapshot(s, price))).toBe('applied');
    expect((await core.subscriptions.get(tenant, s.id)).subscription.planId).toBe(keys['plans.notes.team']);
  });
});

/** Team and Business meter `projects` as a v1 usage feature: Team at 1 a unit, capped at 100; Business at 2, capped at 500. */
async function meterProjects({ core, tenant, keys, s }: Awaited<ReturnType<typeof world>>) {
  const product = (await core.uow.read((r) => r.products.get(s.productId)))!;
  const projects = product.features.find((f) => f.variableName === 'projects')!;
  await core.usage.createMeter(tenant, { slug: 'projects', name: 'Projects' });
  for (const [key, price, cap, providerPlanId] of [
    ['plans.notes.team', 1, 100, 'price_team'],
    ['plans.notes.business', 2, 500, 'price_business'],
  ] as const)
    await core.uow.run(async (r) => {
      const p = (await r.plans.get(keys[key]))!;
      const usage = { isUsage: true, pricePerUnit: price, maxUsage: cap, minUsage: 0 };
      const others = p.features.filter((f) => f.featureId !== projects.id);
      const value = { featureId: projects.id, value: '', enumOptionId: null, isUnlimited: false, updatedAt: p.updatedAt, ...usage };
      const features = [...others, value];
      await r.plans.save({ ...p, features, providerPlanId });
    });
}

it("a switch at the provider that comes with the renewal closes the ended period on the plan it was used on, and starts the new plan's", async () => {
  const w = await world();
  const { core, tenant, keys, s } = w;
  await core.uow.run((r) => r.subscriptions.save({ ...s, paymentSubscriptionId: 'sub_switch_renew' }));
  await meterProjects(w);
  await core.usage.record(tenant, { owner: s.id, meterSlug: 'projects', quantity: 30 });
  const end = s.currentPeriodEnd.getTime();
  // Stripe's update at the renewal: the next period, on Business's price (a downgrade or upgrade scheduled for the period's end).
  expect(
    await core.providerSync.sync('sub_switch_renew', {
      status: 'ACTIVE',
      currentPeriodStart: s.currentPeriodEnd,
      currentPeriodEnd: new Date(end + 30 * 86_400_000),
      cancelAtPeriodEnd: false,
      canceledAt: null,
      quantity: 2,
      items: [{ id: 'si_first', priceId: 'price_business', quantity: 2 }],
    }),
  ).toBe('applied');
  expect((await core.subscriptions.get(tenant, s.id)).subscription.planId).toBe(keys['plans.notes.business']);
  // The ended period closed as Team's: 30 units at 1 (in cents, as the close prices it).
  const closes = (await core.uow.read((r) => r.usage.pageCloses(tenant, { limit: 10, owner: s.id }))).items;
  expect(closes.map((c) => [c.finalUsage, c.amountMinor])).toEqual([[30n, 3000n]]);
  // The new period is Business's: its cap.
  expect((await core.usage.balances(tenant, s.id, 'projects'))[0].balance).toMatchObject({ used: 0n, cap: 500n });
});

it("a switch at the provider within the period closes the meter on the plan it was used on at the switch, and starts the new plan's there", async () => {
  const w = await world();
  const { core, tenant, keys, s } = w;
  await core.uow.run((r) => r.subscriptions.save({ ...s, paymentSubscriptionId: 'sub_switch_mid' }));
  await meterProjects(w);
  await core.usage.record(tenant, { owner: s.id, meterSlug: 'projects', quantity: 30 });
  core.clock.set(new Date(core.clock.now().getTime() + 5 * 86_400_000));
  const at = core.clock.now();
  // The customer switched to Business in Stripe's portal, within the period.
  const snapshot = {
    status: 'ACTIVE' as const,
    currentPeriodStart: s.currentPeriodStart,
    currentPeriodEnd: s.currentPeriodEnd,
    cancelAtPeriodEnd: false,
    canceledAt: null,
    quantity: 2,
    items: [{ id: 'si_first', priceId: 'price_business', quantity: 2 }],
  };
  expect(await core.providerSync.sync('sub_switch_mid', snapshot)).toBe('applied');
  expect((await core.subscriptions.get(tenant, s.id)).subscription.planId).toBe(keys['plans.notes.business']);
  // The 30 units closed at the switch as Team's (1 a unit, in cents); Business's cap from there.
  const closes = async () => (await core.uow.read((r) => r.usage.pageCloses(tenant, { limit: 10, owner: s.id }))).items;
  expect((await closes()).map((c) => [c.finalUsage, c.amountMinor, c.periodEnd])).toEqual([[30n, 3000n, at]]);
  expect((await core.usage.balances(tenant, s.id, 'projects'))[0].balance).toMatchObject({ used: 0n, cap: 500n, periodStart: at });
  // Told again (a replay, another event): nothing more closes.
  expect(await core.providerSync.sync('sub_switch_mid', snapshot)).toBe('applied');
  expect(await closes()).toHaveLength(1);
  expect(await core.usage.verify()).toEqual([]);
});

it("a plan move whose subscription renewed while the provider was told closes the new period's usage at the move, not before it began", async () => {
  const w = await world();
  const { uow, core, tenant, keys, s } = w;
  await meterProjects(w);
  (core.payments as PaymentProvider).renewedBySweep = () => ({});
  await core.usage.record(tenant, { owner: s.id, meterSlug: 'projects', quantity: 30 });
  const end = s.currentPeriodEnd.getTime();
  // Decided on the plain read before the period's end; the renewal commits while the provider is told.
  uow.afterRun = async () => {
    core.clock.set(new Date(end + 60_000));
    expect(await core.sweeps.renewals()).toBe(1);
  };
  expect((await core.subscriptions.changePlan(tenant, s.id, keys['plans.notes.business'], 'none')).kind).toBe('moved');
  const closes = (await core.uow.read((r) => r.usage.pageCloses(tenant, { limit: 10, owner: s.id }))).items.sort(
    (a, b) => a.periodEnd.getTime() - b.periodEnd.getTime(),
  );
  // The ended period as Team's (30 at 1), then the renewed period's first minute, closed at the move.
  expect(closes.map((c) => [c.finalUsage, c.periodStart.getTime(), c.periodEnd.getTime()])).toEqual([
    [30n, s.currentPeriodStart.getTime(), end],
    [0n, end, end + 60_000],
  ]);
  expect((await core.usage.balances(tenant, s.id, 'projects'))[0].balance).toMatchObject({
    cap: 500n,
    periodStart: new Date(end + 60_000),
  });
  expect(await core.usage.verify()).toEqual([]);
});

it('a reactivation decided before the period ended is written after it too: the provider was told it', async () => {
  const { uow, core, tenant, s } = await world();
  await core.subscriptions.cancel(tenant, s.id, 'end');
  // Decided on the plain read just before the period's end; the period ends while the provider is told.
  core.clock.set(new Date(s.currentPeriodEnd.getTime() - 1000));
  uow.afterRun = async () => {
    core.clock.set(new Date(s.currentPeriodEnd.getTime() + 1000));
  };
  expect(await core.subscriptions.reactivate(tenant, s.id)).toMatchObject({ cancelAtPeriodEnd: false });
  expect((await core.subscriptions.get(tenant, s.id)).subscription.cancelAtPeriodEnd).toBe(false);
});
