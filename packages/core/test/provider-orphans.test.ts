/* Items the provider bills whose write here was lost (docs/decisions.md, "Items Stripe bills whose
   write was lost"): the re-sync adopts an added plan's item and follows a plan change by the plan
   the item names; an add whose own webhook adopted its item first is done, not refused. */
import { randomUUID } from 'node:crypto';
import {
  DomainError,
  ErrorCodes,
  matchProviderItems,
  type Plan,
  type ProviderSnapshot,
  type Repositories,
  type Subscription,
  type UnitOfWork,
} from '../src';
import { buyPlan, createTestCore, InMemoryUnitOfWork, seedSample } from '../src/testing';

/** The in-memory unit of work; `failNext` refuses the next transaction as an outage would (the write after the provider's answer). */
class Crashing implements UnitOfWork {
  failNext = false;
  private readonly inner = new InMemoryUnitOfWork();
  read<T>(work: (r: Repositories) => Promise<T>): Promise<T> {
    return this.inner.read(work);
  }
  run<T>(work: (r: Repositories) => Promise<T>): Promise<T> {
    if (this.failNext) {
      this.failNext = false;
      return Promise.reject(new DomainError(ErrorCodes.DATABASE_UNAVAILABLE, 'the database is unavailable'));
    }
    return this.inner.run(work);
  }
  changeFeed() {
    return this.inner.changeFeed();
  }
}

type Provider = Record<string, (...a: unknown[]) => Promise<unknown>>;

async function world() {
  const uow = new Crashing();
  const core = createTestCore({ uow });
  const { tenant, keys } = await seedSample(core, `org-${randomUUID()}`);
  const { subscription } = await buyPlan(core, keys['plans.notes.team'], 2, 'alice');
  const s = { ...subscription, paymentSubscriptionId: `sub_${randomUUID()}` };
  await core.uow.run((r) => r.subscriptions.save(s));
  const snapshot = (items: ProviderSnapshot['items']): ProviderSnapshot => ({
    status: 'ACTIVE',
    currentPeriodStart: s.currentPeriodStart,
    currentPeriodEnd: s.currentPeriodEnd,
    cancelAtPeriodEnd: false,
    canceledAt: null,
    quantity: 2,
    items,
  });
  const held = async () => (await core.subscriptions.get(tenant, s.id)).subscription;
  const open = async (plan: string) =>
    (await core.licenses.list(tenant, { subscriptionId: s.id })).filter((l) => l.planId === keys[plan] && l.status !== 'CANCELED');
  return { uow, core, tenant, keys, s, snapshot, held, open };
}

const FIRST = { id: 'si_first', priceId: 'price_inline_first', quantity: 2 };
/** What an inline price bills (the sample catalog, USD, monthly): Business $30, Team $12, Metered $5 per seat. */
const bills = (unitAmount: number, currency = 'usd', interval = 'month', intervalCount = 1) => ({
  unitAmount,
  currency,
  interval,
  intervalCount,
});
const BUSINESS = bills(3000);

describe('an added plan whose write was lost after the provider made its item', () => {
  it('a crash after the item was made, the undo never sent: the re-sync adopts it once, with its seats', async () => {
    const { uow, core, tenant, keys, s, snapshot, held, open } = await world();
    const provider = core.payments as unknown as Provider;
    const add = provider.addPlan.bind(provider);
    // The item made; then the write fails, and the process is gone before its undo (never called).
    provider.addPlan = async (...args) => {
      const out = (await add(...args)) as object;
      uow.failNext = true;
      return { ...out, paymentItemId: 'si_orphan' };
    };
    provider.removePlan = () => Promise.reject(new Error('the process was gone'));
    const business = keys['plans.notes.business'];
    await expect(
      core.subscriptionItems.change(tenant, s.id, [{ kind: 'add', planId: business, at: 'items[0]' }], 'none'),
    ).rejects.toMatchObject({
      code: ErrorCodes.DATABASE_UNAVAILABLE,
    });
    expect((await held()).addedPlans).toEqual([]);
    const orphan = { id: 'si_orphan', priceId: 'price_inline_x', quantity: 1, planId: business, ...BUSINESS };
    for (let i = 0; i < 2; i++)
      expect(await core.providerSync.sync(s.paymentSubscriptionId as string, snapshot([FIRST, orphan]))).toBe('applied');
    const after = await held();
    expect(after.addedPlans.map((a) => [a.planId, a.quantity, a.paymentItemId])).toEqual([[business, 1, 'si_orphan']]);
    expect((await open('plans.notes.business')).map((l) => l.granteeId)).toEqual(['alice']);
    expect(after.quantity).toBe(2);
    expect(await open('plans.notes.team')).toHaveLength(2);
  });

  it("an add whose provider's webhook adopted its item before the write is done: not refused, nothing removed at the provider, seats not doubled", async () => {
    const { core, tenant, keys, s, snapshot, held, open } = await world();
    const provider = core.payments as unknown as Provider;
    const add = provider.addPlan.bind(provider);
    const business = keys['plans.notes.business'];
    provider.addPlan = async (...args) => {
      const out = (await add(...args)) as object;
      // Stripe's customer.subscription.updated for this very item lands between its answer and the write.
      await core.providerSync.sync(
        s.paymentSubscriptionId as string,
        snapshot([FIRST, { id: 'si_new', priceId: 'price_inline_y', quantity: 1, planId: business, ...BUSINESS }]),
      );
      return { ...out, paymentItemId: 'si_new' };
    };
    const done = await core.subscriptionItems.change(tenant, s.id, [{ kind: 'add', planId: business, at: 'items[0]' }], 'none');
    expect(done.addedPlans.map((a) => [a.planId, a.paymentItemId])).toEqual([[business, 'si_new']]);
    expect(core.payments.calls.map((c) => c.op)).not.toContain('removePlan');
    expect((await held()).addedPlans).toHaveLength(1);
    expect(await open('plans.notes.business')).toHaveLength(1);
  });

  it('an item of a plan the subscription holds already, or of another organisation, is not adopted', async () => {
    const { core, keys, s, snapshot, held } = await world();
    const other = await seedSample(core, `org-${randomUUID()}`);
    const items = [
      FIRST,
      { id: 'si_dup', priceId: 'price_inline_z', quantity: 1, planId: keys['plans.notes.team'], ...bills(1200) },
      { id: 'si_foreign', priceId: 'price_inline_w', quantity: 1, planId: other.keys['plans.notes.business'], ...BUSINESS },
    ];
    expect(await core.providerSync.sync(s.paymentSubscriptionId as string, snapshot(items))).toBe('applied');
    expect((await held()).addedPlans).toEqual([]);
  });

  it.each([
    ['at $0', bills(0)],
    ["at a cheaper plan's price (Team's)", bills(1200)],
    ['of no known price (a tiered or unread one)', {}],
    ['in another currency', bills(3000, 'eur')],
    ['on another interval', bills(3000, 'usd', 'year')],
  ])('an item naming a plan but billing %s is not adopted as that plan', async (_label, price) => {
    const { core, keys, s, snapshot, held, open } = await world();
    const named = { id: 'si_named', priceId: 'price_inline_cheap', quantity: 1, planId: keys['plans.notes.business'], ...price };
    expect(await core.providerSync.sync(s.paymentSubscriptionId as string, snapshot([FIRST, named]))).toBe('applied');
    expect((await held()).addedPlans).toEqual([]);
    expect(await open('plans.notes.business')).toEqual([]);
  });

  it('an item naming a plan of a provider price is adopted only at that price', async () => {
    const { core, keys, s, snapshot, held } = await world();
    const business = keys['plans.notes.business'];
    await core.uow.run(async (r) => r.plans.save({ ...((await r.plans.get(business)) as Plan), providerPlanId: 'price_business' }));
    const named = { id: 'si_named', priceId: 'price_other', quantity: 1, planId: business, ...BUSINESS };
    await core.providerSync.sync(s.paymentSubscriptionId as string, snapshot([FIRST, named]));
    expect((await held()).addedPlans).toEqual([]);
    await core.providerSync.sync(s.paymentSubscriptionId as string, snapshot([FIRST, { ...named, priceId: 'price_business' }]));
    expect((await held()).addedPlans.map((a) => [a.planId, a.paymentItemId])).toEqual([[business, 'si_named']]);
  });

  it('an item of a plan not sold per seat is adopted only at one unit (0 bills nothing, 3 bill it thrice)', async () => {
    const { core, keys, s, snapshot, held } = await world();
    const business = keys['plans.notes.business'];
    await core.uow.run(async (r) => r.plans.save({ ...((await r.plans.get(business)) as Plan), licenseType: 'user', perSeatAmount: 0 }));
    const named = (quantity: number) => ({ id: 'si_flat', priceId: 'price_inline_flat', quantity, planId: business, ...BUSINESS });
    for (const quantity of [0, 3]) {
      await core.providerSync.sync(s.paymentSubscriptionId as string, snapshot([FIRST, named(quantity)]));
      expect((await held()).addedPlans).toEqual([]);
    }
    await core.providerSync.sync(s.paymentSubscriptionId as string, snapshot([FIRST, named(1)]));
    expect((await held()).addedPlans.map((a) => [a.planId, a.paymentItemId, a.quantity])).toEqual([[business, 'si_flat', 1]]);
  });

  it("a usage-based plan's item, at its price, is not adopted as an added plan", async () => {
    const { core, keys, s, snapshot, held, open } = await world();
    const metered = { id: 'si_metered', priceId: 'price_inline_m', quantity: 1, planId: keys['plans.notes.metered'], ...bills(500) };
    expect(await core.providerSync.sync(s.paymentSubscriptionId as string, snapshot([FIRST, metered]))).toBe('applied');
    expect((await held()).addedPlans).toEqual([]);
    expect(await open('plans.notes.metered')).toEqual([]);
  });
});

describe('a plan change at an inline price whose write was lost', () => {
  it('is followed by the plan the item names; a replay, or a stale name beside a price of a plan, moves no more', async () => {
    const { uow, core, tenant, keys, s, snapshot, held, open } = await world();
    const provider = core.payments as unknown as Provider;
    const change = provider.changePlan.bind(provider);
    provider.changePlan = async (...args) => {
      const out = await change(...args);
      uow.failNext = true;
      return out;
    };
    const business = keys['plans.notes.business'];
    await expect(core.subscriptions.changePlan(tenant, s.id, business, 'none')).rejects.toMatchObject({
      code: ErrorCodes.DATABASE_UNAVAILABLE,
    });
    expect((await held()).planId).toBe(keys['plans.notes.team']);
    const switched = { id: 'si_first', priceId: 'price_inline_new', quantity: 2, planId: business, ...BUSINESS };
    for (let i = 0; i < 2; i++)
      expect(await core.providerSync.sync(s.paymentSubscriptionId as string, snapshot([switched]))).toBe('applied');
    expect((await held()).planId).toBe(business);
    expect(await open('plans.notes.business')).toHaveLength(2);
    expect(await open('plans.notes.team')).toEqual([]);
    // A price of a plan wins over a stale name (the portal switched it to Team's price; the item still names Business).
    await core.uow.run(async (r) =>
      r.plans.save({ ...((await r.plans.get(keys['plans.notes.team'])) as Plan), providerPlanId: 'price_team' }),
    );
    await core.providerSync.sync(s.paymentSubscriptionId as string, snapshot([{ ...switched, priceId: 'price_team' }]));
    expect((await held()).planId).toBe(keys['plans.notes.team']);
  });

  it.each([
    ["at the plan held's price (Team's)", bills(1200)],
    ['at $0', bills(0)],
    ['of no known price', {}],
  ])('a name alone, on an item billing %s, is not followed: no upgrade by an edited name', async (_label, price) => {
    const { core, keys, s, snapshot, held, open } = await world();
    const renamed = { id: 'si_first', priceId: 'price_inline_first', quantity: 2, planId: keys['plans.notes.business'], ...price };
    expect(await core.providerSync.sync(s.paymentSubscriptionId as string, snapshot([renamed]))).toBe('applied');
    expect((await held()).planId).toBe(keys['plans.notes.team']);
    expect(await open('plans.notes.business')).toEqual([]);
    expect(await open('plans.notes.team')).toHaveLength(2);
  });

  it("a usage-based plan's name is not followed", async () => {
    const { core, keys, s, snapshot, held } = await world();
    const renamed = { id: 'si_first', priceId: 'price_inline_first', quantity: 2, planId: keys['plans.notes.metered'], ...bills(500) };
    await core.providerSync.sync(s.paymentSubscriptionId as string, snapshot([renamed]));
    expect((await held()).planId).toBe(keys['plans.notes.team']);
  });
});

describe('matchProviderItems', () => {
  it("finds an added plan's item, and the first plan's, by the plan the item names", () => {
    const s = { planId: 'p_first', addedPlans: [{ planId: 'p_added', paymentItemId: null }] } as unknown as Subscription;
    const plans = new Map<string, Plan>([
      ['p_first', { id: 'p_first', providerPlanId: null } as Plan],
      ['p_added', { id: 'p_added', providerPlanId: null } as Plan],
    ]);
    const m = matchProviderItems(s, plans, [
      { id: 'si_stray', priceId: 'price_a', quantity: 1 },
      { id: 'si_added', priceId: 'price_b', quantity: 3, planId: 'p_added' },
      { id: 'si_first', priceId: 'price_c', quantity: 2, planId: 'p_first' },
    ]);
    expect([m.first?.id, [...m.learnt], m.unknown.map((i) => i.id)]).toEqual(['si_first', [['p_added', 'si_added']], ['si_stray']]);
  });

  it("never takes an item naming another plan for the first plan's unnamed one (an orphaned add listed first)", () => {
    const s = { planId: 'p_first', addedPlans: [] } as unknown as Subscription;
    const plans = new Map<string, Plan>([['p_first', { id: 'p_first', providerPlanId: null } as Plan]]);
    const m = matchProviderItems(s, plans, [
      { id: 'si_orphan', priceId: 'price_o', quantity: 1, planId: 'p_other' },
      { id: 'si_checkout', priceId: 'price_c', quantity: 2 },
    ]);
    expect([m.first?.id, m.unknown.map((i) => i.id)]).toEqual(['si_checkout', ['si_orphan']]);
  });

  it("adopts an orphaned add listed before the first plan's unnamed item, and leaves the first plan where it is", async () => {
    const { core, keys, s, snapshot, held } = await world();
    const business = keys['plans.notes.business'];
    const orphan = { id: 'si_orphan', priceId: 'price_inline_biz', quantity: 1, planId: business, ...BUSINESS };
    const unnamed = { id: 'si_first', priceId: 'price_inline_first', quantity: 2, ...bills(1200) };
    await core.providerSync.sync(s.paymentSubscriptionId as string, snapshot([orphan, unnamed]));
    const after = await held();
    expect(after.planId).toBe(keys['plans.notes.team']);
    expect(after.addedPlans.map((a) => [a.planId, a.paymentItemId])).toEqual([[business, 'si_orphan']]);
  });
});
