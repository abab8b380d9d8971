import {
  billedUnits,
  minimumFor,
  closeSubscriptionPeriod,
  startSubscriptionUsage,
  RENEWAL_RETRY_MS,
  usageCharge,
  usageOrderingKey,
  type CatalogFile,
  type LineItem,
  type PaymentProvider,
  type UsageInvoiceLine,
} from '../src';
import { buyPlan, createTestCore, sampleCatalog, type TestCore } from '../src/testing';

const DAY = 86_400_000;

/** The sample catalog with a usage plan: 1000 calls a month included, then tiered, capped, rolling up to 300 over. */
function usageCatalog(organisation: string): CatalogFile {
  const file = sampleCatalog(organisation);
  const [product] = file.products ?? [];
  product.plans = [
    ...(product.plans ?? []),
    {
      key: 'api',
      displayName: 'API',
      pricingType: 'paid',
      interval: 'month',
      length: 1,
      prices: { USD: 20 },
      capabilities: ['edit'],
      usage: [
        {
          meter: 'api_calls',
          name: 'API calls',
          unitLabel: 'call',
          allowance: 1000,
          maxUsage: 5000,
          rollover: { upTo: 300 },
          tiersMode: 'graduated',
          tiers: {
            USD: [
              { upTo: 500, unitAmount: 0.01 },
              { upTo: 'inf', unitAmount: 0.005 },
            ],
          },
        },
      ],
    },
    {
      key: 'api_plus',
      displayName: 'API Plus',
      pricingType: 'paid',
      interval: 'month',
      length: 1,
      prices: { USD: 50 },
      capabilities: ['edit'],
      usage: [{ meter: 'api_calls', allowance: 10000, unitPrices: { USD: 0.002 } }],
    },
    // Plans that meter without being usage-based (a plan change moves the subscription): a flat fee
    // with calls included, the same calls at another fee, more calls at another price, no calls.
    ...(
      [
        ['flat_api', 20, { meter: 'api_calls', allowance: 1000, rollover: { upTo: 300 }, unitPrices: { USD: 0.01 } }],
        ['flat_api_same', 30, { meter: 'api_calls', allowance: 1000, rollover: { upTo: 300 }, unitPrices: { USD: 0.01 } }],
        ['flat_api_plus', 40, { meter: 'api_calls', allowance: 5000, maxUsage: 8000, unitPrices: { USD: 0.002 } }],
        ['flat_none', 10, undefined],
        ['least_small', 10, { meter: 'api_calls', minUsage: 3000, unitPrices: { USD: 0.01 } }],
        ['least_large', 10, { meter: 'api_calls', minUsage: 6000, unitPrices: { USD: 0.01 } }],
      ] as const
    ).map(([key, fee, usage]) => ({
      key,
      displayName: key,
      pricingType: 'paid' as const,
      interval: 'month' as const,
      length: 1,
      usageBased: false,
      prices: { USD: fee },
      capabilities: ['edit'],
      ...(usage && { usage: [usage] }),
    })),
  ];
  return file;
}

describe('usage plans', () => {
  let core: TestCore;
  let keys: Record<string, string>;
  const tenant = () => ({ organisationId: keys.organisation, isTest: false });
  let renewals: UsageInvoiceLine[][];

  beforeEach(async () => {
    core = createTestCore();
    const org = await core.apiKeys.ensureOrganisation('acme');
    keys = { ...(await core.importer.apply(usageCatalog('acme'))).keys, organisation: org.id };
    renewals = [];
    // The fake provider lets the sweep renew (as the sandbox does) and keeps the usage lines it is given.
    (core.payments as PaymentProvider).renewedBySweep = (_s, _p, _u, usage) => {
      renewals.push(usage ?? []);
      return {};
    };
  });

  const balance = async (owner: string) => (await core.usage.balances(tenant(), owner, 'api_calls'))[0]?.balance;

  it('a subscription whose renewal fails is passed over for a while, and the others still renew', async () => {
    const { subscription: bad } = await buyPlan(core, keys['plans.notes.api'], 1, 'bad', 'fake');
    const { subscription: good } = await buyPlan(core, keys['plans.notes.api'], 1, 'good', 'fake');
    (core.payments as PaymentProvider).renewedBySweep = (s) => {
      if (s.id === bad.id) throw new Error('a broken subscription');
      return {};
    };
    const ended = Math.max(bad.currentPeriodEnd.getTime(), good.currentPeriodEnd.getTime());
    core.clock.set(new Date(ended + 1000));
    const periodEnd = async (id: string) => (await core.uow.read((r) => r.subscriptions.get(id)))?.currentPeriodEnd.getTime();
    // The broken one (due first) fails alone, its transaction rolled back; the other renews.
    expect(await core.sweeps.renewals()).toBe(1);
    expect(await periodEnd(good.id)).toBeGreaterThan(ended);
    expect(await periodEnd(bad.id)).toBe(bad.currentPeriodEnd.getTime());
    // It is passed over on the next passes (no error, no retry on every pass) ...
    expect(await core.sweeps.renewals()).toBe(0);
    // ... and tried again once RENEWAL_RETRY_MS has passed.
    (core.payments as PaymentProvider).renewedBySweep = () => ({});
    core.clock.set(new Date(ended + 1000 + RENEWAL_RETRY_MS));
    expect(await core.sweeps.renewals()).toBe(1);
    expect(await periodEnd(bad.id)).toBeGreaterThan(ended);
  });

  it('a subscription whose scheduled cancellation fails is passed over for a while, and the others still end (review)', async () => {
    const { subscription: bad } = await buyPlan(core, keys['plans.notes.api'], 1, 'bad-end', 'fake');
    const { subscription: good } = await buyPlan(core, keys['plans.notes.api'], 1, 'good-end', 'fake');
    for (const s of [bad, good]) {
      await core.subscriptions.cancel(tenant(), s.id, 'end');
      await core.usage.record(tenant(), { owner: s.id, meterSlug: 'api_calls', quantity: 1800 });
    }
    (core.payments as PaymentProvider).usageBilled = (s) => {
      if (s.id === bad.id) throw new Error('a broken subscription');
      return {};
    };
    const ended = Math.max(bad.currentPeriodEnd.getTime(), good.currentPeriodEnd.getTime());
    core.clock.set(new Date(ended + 1000));
    const status = async (id: string) => (await core.uow.read((r) => r.subscriptions.get(id)))?.status;
    // The broken one fails alone (its transaction rolled back); the other ends.
    expect(await core.sweeps.cancellations()).toBe(1);
    expect([await status(bad.id), await status(good.id)]).toEqual(['ACTIVE', 'CANCELED']);
    // Passed over on the next passes, tried again once RENEWAL_RETRY_MS has passed.
    expect(await core.sweeps.cancellations()).toBe(0);
    (core.payments as PaymentProvider).usageBilled = () => ({});
    core.clock.set(new Date(ended + 1000 + RENEWAL_RETRY_MS));
    expect(await core.sweeps.cancellations()).toBe(1);
    expect(await status(bad.id)).toBe('CANCELED');
  });

  it('buying gives the period its allowance and cap; the renewal closes, bills the tiers, resets and rolls over, once', async () => {
    const { subscription: s } = await buyPlan(core, keys['plans.notes.api'], 1, 'alice', 'fake');
    expect(await balance(s.id)).toMatchObject({ granted: 1000n, used: 0n, cap: 5000n, periodEnd: s.currentPeriodEnd });
    // Consumption past the cap is denied; usage that happened counts.
    expect(await core.usage.consume(tenant(), { owner: s.id, meterSlug: 'api_calls', quantity: 5001 })).toMatchObject({ allowed: false });
    await core.usage.record(tenant(), { owner: s.id, meterSlug: 'api_calls', quantity: 1800 });

    core.clock.set(new Date(s.currentPeriodEnd.getTime() + 1000));
    expect(await core.sweeps.renewals()).toBe(1);
    expect(await core.sweeps.renewals()).toBe(0);
    // 1800 used, 1000 granted: 800 billed, 500 at 1 cent then 300 at half a cent.
    expect(renewals).toHaveLength(1);
    expect(renewals[0].map((l) => [l.quantity, l.unitAmount, l.amount])).toEqual([
      [500, 1, 500],
      [300, 0.5, 150],
    ]);
    const next = await balance(s.id);
    expect(next).toMatchObject({ granted: 1000n, used: 0n, cap: 5000n });
    expect(next?.periodStart).toEqual(s.currentPeriodEnd);

    // Second period: 400 used of 1000, nothing billed, 300 of the 600 unused roll over.
    await core.usage.consume(tenant(), { owner: s.id, meterSlug: 'api_calls', quantity: 400 });
    const renewed = await core.subscriptions.get(tenant(), s.id);
    core.clock.set(new Date(renewed.subscription.currentPeriodEnd.getTime() + 1000));
    expect(await core.sweeps.renewals()).toBe(1);
    expect(renewals[1]).toEqual([]);
    expect(await balance(s.id)).toMatchObject({ granted: 1300n, used: 0n });

    const closes = await core.uow.read((r) => r.usage.pageCloses(tenant(), { limit: 10, owner: s.id }));
    expect(closes.items.map((c) => [c.finalUsage, c.billedUnits, c.amountMinor])).toEqual([
      [1800n, 800n, 650n],
      [400n, 0n, 0n],
    ]);
    // Closing a period already closed (a second sweep, another instance) does nothing.
    const again = await core.uow.run(async (r) =>
      closeSubscriptionPeriod(r, core.deps.ids, {
        subscription: renewed.subscription,
        plan: (await r.plans.get(keys['plans.notes.api']))!,
        periodEnd: renewed.subscription.currentPeriodEnd,
        next: null,
        now: core.clock.now(),
      }),
    );
    expect(again).toEqual([]);
    expect(await balance(s.id)).toMatchObject({ granted: 1300n, used: 0n });
    expect(await core.usage.verify()).toEqual([]);
  });

  it("a renewal keeps the customer's purchased credits until their own expiry and hands an open hold to the next period", async () => {
    const { subscription: s } = await buyPlan(core, keys['plans.notes.api'], 1, 'alice', 'fake');
    const t = { owner: s.id, meterSlug: 'api_calls' };
    const end = s.currentPeriodEnd.getTime();
    await core.usage.grant(tenant(), { ...t, amount: 2000, source: 'purchase', expiresAt: new Date(end + 90 * DAY) });
    // 1500 used: the allowance's 1000 (it expires first), then 500 of the purchase. An hour before
    // the period ends a completion holds 200 for a day.
    await core.usage.consume(tenant(), { ...t, quantity: 1500 });
    core.clock.set(new Date(end - 3_600_000));
    const hold = await core.usage.reserve(tenant(), { ...t, quantity: 200, ttlSeconds: 86_400 });
    core.clock.set(new Date(end + 1000));
    expect(await core.sweeps.renewals()).toBe(1);
    // Nothing billed (the grants covered it), nothing of the allowance rolls over, the purchase's 1500 stay.
    expect(renewals).toEqual([[]]);
    expect(await balance(s.id)).toMatchObject({ granted: 2500n, used: 0n, reserved: 200n, cap: 5000n });
    // The completion ends after the renewal: its commit is counted in the new period.
    expect(await core.usage.commit(tenant(), hold.holdId as string, { quantity: 150 })).toMatchObject({
      allowed: true,
      used: '150',
      reserved: '0',
    });
    expect(await core.usage.verify()).toEqual([]);
  });

  it("a usage-based plan change hands the customer's purchased credits to the new subscription", async () => {
    const { subscription: s } = await buyPlan(core, keys['plans.notes.api'], 1, 'alice', 'fake');
    await core.usage.grant(tenant(), { owner: s.id, meterSlug: 'api_calls', amount: 700, source: 'purchase' });
    await core.usage.record(tenant(), { owner: s.id, meterSlug: 'api_calls', quantity: 1200 });
    const change = await core.subscriptions.changePlan(tenant(), s.id, keys['plans.notes.api_plus'], 'none');
    const created = change.kind === 'replaced' ? change.created : undefined;
    // 1200 used of the allowance's 1000 and the purchase's 700: nothing billed, 500 of the purchase go on.
    const closes = await core.uow.read((r) => r.usage.pageCloses(tenant(), { limit: 10, owner: s.id }));
    expect(closes.items.map((c) => [c.finalUsage, c.billedUnits])).toEqual([[1200n, 0n]]);
    expect(await balance(created!.id)).toMatchObject({ granted: 10500n, used: 0n });
    expect(await core.usage.verify()).toEqual([]);
  });

  it('credits handed to a plan that does not meter them lapse (no balance outlives the subscription); a meter of two line items takes them once', async () => {
    const { subscription: s } = await buyPlan(core, keys['plans.notes.api'], 1, 'alice', 'fake');
    await core.usage.grant(tenant(), { owner: s.id, meterSlug: 'api_calls', amount: 700, source: 'purchase' });
    const change = await core.subscriptions.changePlan(tenant(), s.id, keys['plans.notes.metered'], 'none');
    const created = change.kind === 'replaced' ? change.created : undefined;
    expect(await core.usage.balances(tenant(), created!.id)).toEqual([]);
    // A plan whose two line items count on one meter (the plan API allows it): the credits land once.
    const api = (await core.uow.read((r) => r.plans.get(keys['plans.notes.api'])))!;
    const line = api.lineItems.find((l) => l.meter?.slug === 'api_calls')!;
    const twice = { ...api, lineItems: [...api.lineItems, { ...line, id: 'second-line' }] };
    const { subscription: other } = await buyPlan(core, keys['plans.notes.api'], 1, 'bob', 'fake');
    const handedOver = [
      { meter: line.meter!, kept: [{ amount: 500n, priority: 50, expiresAt: null, source: 'purchase' as const }], holds: [], carried: 0n },
    ];
    await core.uow.run((r) =>
      startSubscriptionUsage(r, core.deps.ids, { ...other, id: 'next-subscription' }, twice, core.clock.now(), handedOver as never),
    );
    // Each line's allowance (1000 twice) and the credits once.
    expect(await balance('next-subscription')).toMatchObject({ granted: 2500n });
  });

  it("a usage-based plan change closes the old subscription's usage exactly once and starts the new plan's allowance", async () => {
    const { subscription: s } = await buyPlan(core, keys['plans.notes.api'], 1, 'alice', 'fake');
    await core.usage.record(tenant(), { owner: s.id, meterSlug: 'api_calls', quantity: 1200 });
    core.clock.set(new Date(core.clock.now().getTime() + 3 * DAY));
    const change = await core.subscriptions.changePlan(tenant(), s.id, keys['plans.notes.api_plus'], 'none');
    expect(change.kind).toBe('replaced');
    const created = change.kind === 'replaced' ? change.created : undefined;
    // The answer shows the new subscription on the target plan, read in the change's own transaction.
    expect([change.view.subscription.id, change.view.plan.id, change.view.subscription.status]).toEqual([
      created!.id,
      keys['plans.notes.api_plus'],
      'ACTIVE',
    ]);
    expect(await balance(s.id)).toBeUndefined();
    expect(await balance(created!.id)).toMatchObject({ granted: 10000n, used: 0n, cap: null });
    await expect(core.subscriptions.changePlan(tenant(), s.id, keys['plans.notes.api_plus'], 'none')).rejects.toMatchObject({
      code: expect.any(String),
    });
    const closes = await core.uow.read((r) => r.usage.pageCloses(tenant(), { limit: 10, owner: s.id }));
    expect(closes.items.map((c) => [c.finalUsage, c.billedUnits, c.amountMinor, c.subscriptionId])).toEqual([[1200n, 200n, 200n, s.id]]);
  });

  describe('a move between plans that are not usage-based (the subscription keeps its usage)', () => {
    let billed: UsageInvoiceLine[][];
    beforeEach(() => {
      billed = [];
      (core.payments as PaymentProvider).usageBilled = (_s, _p, lines) => (billed.push(lines), {});
    });
    const closesOf = async (owner: string) => (await core.uow.read((r) => r.usage.pageCloses(tenant(), { limit: 10, owner }))).items;
    const move = async (id: string, plan: string) => {
      const change = await core.subscriptions.changePlan(tenant(), id, keys[`plans.notes.${plan}`], 'none');
      expect(change.kind).toBe('moved');
    };

    it("closes the meter at the move on the old plan's terms, billed once, and starts the new plan's allowance and cap there", async () => {
      const { subscription: s } = await buyPlan(core, keys['plans.notes.flat_api'], 1, 'alice', 'fake');
      await core.usage.record(tenant(), { owner: s.id, meterSlug: 'api_calls', quantity: 1200 });
      core.clock.set(new Date(core.clock.now().getTime() + 3 * DAY));
      const at = core.clock.now();
      await move(s.id, 'flat_api_plus');
      // 200 calls over the 1000 included, at the old price (1 cent): billed at the move, through the provider.
      const [closed] = await closesOf(s.id);
      expect([closed.finalUsage, closed.billedUnits, closed.amountMinor, closed.periodEnd]).toEqual([1200n, 200n, 200n, at]);
      expect(billed).toEqual([[expect.objectContaining({ quantity: 200, unitAmount: 1, amount: 200, periodEnd: at })]]);
      // The new plan's terms from the move to the period's end.
      expect(await balance(s.id)).toMatchObject({ granted: 5000n, used: 0n, cap: 8000n, periodStart: at, periodEnd: s.currentPeriodEnd });
      await core.usage.record(tenant(), { owner: s.id, meterSlug: 'api_calls', quantity: 5100 });
      // The renewal closes the rest of the period on the new plan's terms: 100 over at 0.2 cents.
      core.clock.set(new Date(s.currentPeriodEnd.getTime() + 1000));
      expect(await core.sweeps.renewals()).toBe(1);
      const closes = await closesOf(s.id);
      expect(closes.map((c) => [c.periodStart, c.finalUsage, c.billedUnits, c.amountMinor])).toEqual([
        [s.currentPeriodStart, 1200n, 200n, 200n],
        [at, 5100n, 100n, 20n],
      ]);
      expect(await balance(s.id)).toMatchObject({ granted: 5000n, used: 0n });
      expect(await core.usage.verify()).toEqual([]);
    });

    it("hands the customer's credits and an open hold to the new plan's balance of the meter", async () => {
      const { subscription: s } = await buyPlan(core, keys['plans.notes.flat_api'], 1, 'alice', 'fake');
      const t = { owner: s.id, meterSlug: 'api_calls' };
      await core.usage.grant(tenant(), { ...t, amount: 700, source: 'purchase' });
      // 1000 of the allowance and 200 of the purchase used; a completion holds 100 more.
      await core.usage.consume(tenant(), { ...t, quantity: 1200 });
      const hold = await core.usage.reserve(tenant(), { ...t, quantity: 100, ttlSeconds: 3600 });
      await move(s.id, 'flat_api_plus');
      expect((await closesOf(s.id)).map((c) => [c.finalUsage, c.billedUnits])).toEqual([[1200n, 0n]]);
      expect(await balance(s.id)).toMatchObject({ granted: 5500n, used: 0n, reserved: 100n });
      // The completion ends after the move: counted on the new plan's balance.
      expect(await core.usage.commit(tenant(), hold.holdId as string, { quantity: 80 })).toMatchObject({
        allowed: true,
        used: '80',
        reserved: '0',
      });
      expect(await core.usage.verify()).toEqual([]);
    });

    it('through the items (the first plan removed, the next promoted) as through a plan change', async () => {
      const { subscription: s } = await buyPlan(core, keys['plans.notes.flat_api'], 1, 'alice', 'fake');
      // 600 of the 1000 included used: the plan rolls up to 300 over at a period's end, not at a move.
      await core.usage.record(tenant(), { owner: s.id, meterSlug: 'api_calls', quantity: 600 });
      const at = core.clock.now();
      const moved = await core.subscriptionItems.change(
        tenant(),
        s.id,
        [
          { kind: 'add', planId: keys['plans.notes.flat_api_plus'], at: 'items[0]' },
          { kind: 'remove', planId: keys['plans.notes.flat_api'], at: 'items[1]' },
        ],
        'none',
      );
      expect(moved.planId).toBe(keys['plans.notes.flat_api_plus']);
      expect((await closesOf(s.id)).map((c) => [c.finalUsage, c.billedUnits, c.amountMinor])).toEqual([[600n, 0n, 0n]]);
      expect(await balance(s.id)).toMatchObject({ granted: 5000n, used: 0n, cap: 8000n, periodStart: at });
      expect(await core.usage.verify()).toEqual([]);
    });

    it("switched at the provider with the renewal: the old plan's rollover and an open hold go to the new plan's meter", async () => {
      const { subscription: s } = await buyPlan(core, keys['plans.notes.flat_api'], 1, 'alice', 'fake');
      await core.uow.run(async (r) => {
        await r.subscriptions.save({ ...s, paymentSubscriptionId: 'sub_switch' });
        for (const [plan, price] of [
          ['flat_api', 'price_flat'],
          ['flat_api_plus', 'price_plus'],
        ])
          await r.plans.save({ ...(await r.plans.get(keys[`plans.notes.${plan}`]))!, providerPlanId: price });
      });
      const t = { owner: s.id, meterSlug: 'api_calls' };
      // 600 of the 1000 used: 300 roll over by the old plan's rule. A completion holds 50 over the renewal.
      await core.usage.record(tenant(), { ...t, quantity: 600 });
      const end = s.currentPeriodEnd.getTime();
      core.clock.set(new Date(end - 3_600_000));
      const hold = await core.usage.reserve(tenant(), { ...t, quantity: 50, ttlSeconds: 86_400 });
      core.clock.set(new Date(end + 1000));
      // Stripe's update at the renewal: the next period, on the other plan's price (a change scheduled for the period's end).
      const snapshot = {
        status: 'ACTIVE' as const,
        currentPeriodStart: s.currentPeriodEnd,
        currentPeriodEnd: new Date(end + 30 * DAY),
        cancelAtPeriodEnd: false,
        canceledAt: null,
        quantity: 1,
        items: [{ id: 'si_first', priceId: 'price_plus', quantity: 1 }],
      };
      expect(await core.providerSync.sync('sub_switch', snapshot)).toBe('applied');
      expect((await core.subscriptions.get(tenant(), s.id)).subscription.planId).toBe(keys['plans.notes.flat_api_plus']);
      expect((await closesOf(s.id)).map((c) => [c.finalUsage, c.billedUnits])).toEqual([[600n, 0n]]);
      expect(await balance(s.id)).toMatchObject({ granted: 5300n, used: 0n, reserved: 50n, cap: 8000n });
      expect(await core.usage.commit(tenant(), hold.holdId as string, { quantity: 40 })).toMatchObject({ allowed: true, used: '40' });
      expect(await core.usage.verify()).toEqual([]);
    });

    it("bills each plan's minimum for the part of the period it was held, never two whole minimums", async () => {
      const { subscription: s } = await buyPlan(core, keys['plans.notes.least_small'], 1, 'alice', 'fake');
      const [start, end] = [s.currentPeriodStart.getTime(), s.currentPeriodEnd.getTime()];
      await core.usage.record(tenant(), { owner: s.id, meterSlug: 'api_calls', quantity: 100 });
      core.clock.set(new Date(start + 10 * DAY));
      await move(s.id, 'least_large');
      core.clock.set(new Date(end + 1000));
      expect(await core.sweeps.renewals()).toBe(1);
      // 3000 a period for the 10 days held, 6000 a period for the rest (rounded down); nothing used on the second.
      const share = (minimum: bigint, ms: number) => (minimum * BigInt(ms)) / BigInt(end - start);
      expect((await closesOf(s.id)).map((c) => [c.finalUsage, c.billedUnits])).toEqual([
        [100n, share(3000n, 10 * DAY)],
        [0n, share(6000n, end - start - 10 * DAY)],
      ]);
      // The next period, held whole, owes the whole minimum.
      core.clock.set(new Date(end + 1000 + 31 * DAY));
      expect(await core.sweeps.renewals()).toBe(1);
      expect((await closesOf(s.id)).at(-1)?.billedUnits).toBe(6000n);
    });

    it('leaves a meter both plans meter alike as it is (no close, no allowance again)', async () => {
      const { subscription: s } = await buyPlan(core, keys['plans.notes.flat_api'], 1, 'alice', 'fake');
      await core.usage.record(tenant(), { owner: s.id, meterSlug: 'api_calls', quantity: 1200 });
      const before = await balance(s.id);
      await move(s.id, 'flat_api_same');
      expect(await closesOf(s.id)).toEqual([]);
      expect(billed).toEqual([]);
      expect(await balance(s.id)).toEqual(before);
    });

    it("to a plan that does not meter: closed and billed, credits lapse, holds released; back again, the plan's allowance starts at the move", async () => {
      const { subscription: s } = await buyPlan(core, keys['plans.notes.flat_api'], 1, 'alice', 'fake');
      const t = { owner: s.id, meterSlug: 'api_calls' };
      await core.usage.grant(tenant(), { ...t, amount: 700, source: 'purchase' });
      const hold = await core.usage.reserve(tenant(), { ...t, quantity: 100, ttlSeconds: 3600 });
      expect(hold.holdId).toEqual(expect.any(String));
      // Another completion committed before the move, with an idempotency key.
      const done = await core.usage.reserve(tenant(), { ...t, quantity: 20, ttlSeconds: 3600 });
      const committed = await core.usage.commit(tenant(), done.holdId as string, { quantity: 10 }, 'commit-1');
      await core.usage.record(tenant(), { ...t, quantity: 1890 });
      await move(s.id, 'flat_none');
      // 1900 used of 1700 granted: 200 over at 1 cent.
      expect((await closesOf(s.id)).map((c) => [c.finalUsage, c.billedUnits, c.amountMinor])).toEqual([[1900n, 200n, 200n]]);
      // No balance outlives the plan that metered it (before, it stayed open and was never billed).
      expect(await core.usage.balances(tenant(), s.id)).toEqual([]);
      // Its hold was released there, with its period.
      expect(await core.uow.read((r) => r.usage.getHold(hold.holdId as string))).toMatchObject({ status: 'released' });
      await expect(core.usage.commit(tenant(), hold.holdId as string, { quantity: 50 })).rejects.toMatchObject({ code: 'HOLD_SETTLED' });
      // The commit made before, retried with its key, answers as it did.
      expect(await core.usage.commit(tenant(), done.holdId as string, { quantity: 10 }, 'commit-1')).toEqual(committed);
      // Neither opened a balance again (one no period would close).
      expect(await core.usage.balances(tenant(), s.id)).toEqual([]);
      core.clock.set(new Date(core.clock.now().getTime() + DAY));
      const at = core.clock.now();
      await move(s.id, 'flat_api');
      // Before, the meter had no period here: its usage was billed without the plan's allowance.
      expect(await balance(s.id)).toMatchObject({ granted: 1000n, used: 0n, periodStart: at });
      expect(await core.usage.verify()).toEqual([]);
    });

    it("a meter used while no plan metered it becomes the target's at a move: its cap and period end", async () => {
      const { subscription: s } = await buyPlan(core, keys['plans.notes.flat_none'], 1, 'alice', 'fake');
      // Recorded by hand on a meter the plan does not meter: a balance with no cap and no end.
      await core.usage.record(tenant(), { owner: s.id, meterSlug: 'api_calls', quantity: 40 });
      expect(await balance(s.id)).toMatchObject({ cap: null, periodEnd: null });
      core.clock.set(new Date(core.clock.now().getTime() + 2 * DAY));
      const at = core.clock.now();
      await move(s.id, 'flat_api_plus');
      expect(await balance(s.id)).toMatchObject({ granted: 5000n, used: 40n, cap: 8000n, periodStart: at, periodEnd: s.currentPeriodEnd });
      expect(await core.usage.verify()).toEqual([]);
    });
  });

  it('a usage-based plan change on a provider that bills renewals itself (Stripe) is refused, with nothing told or changed', async () => {
    const { subscription: s } = await buyPlan(core, keys['plans.notes.api'], 1, 'alice', 'fake');
    // The fake provider as Stripe: it renews its subscriptions itself (no sweep bookkeeping).
    delete (core.payments as PaymentProvider).renewedBySweep;
    const calls = core.payments.calls.length;
    await expect(core.subscriptions.changePlan(tenant(), s.id, keys['plans.notes.api_plus'], 'none')).rejects.toMatchObject({
      code: 'VALIDATION_FAILED',
      details: [{ property: 'planUuid', error: expect.stringContaining('cancel this subscription and check out the new plan') }],
    });
    expect(core.payments.calls.length).toBe(calls);
    expect((await core.subscriptions.get(tenant(), s.id)).subscription.status).toBe('ACTIVE');
  });

  it("the provider's re-sync: a period restarted now (a trial ended early, a plan of another interval) closes the one it cut short", async () => {
    const { subscription: s } = await buyPlan(core, keys['plans.notes.api'], 1, 'alice', 'fake');
    await core.uow.run(async (r) => r.subscriptions.save({ ...s, paymentSubscriptionId: 'sub_restarted' }));
    await core.usage.record(tenant(), { owner: s.id, meterSlug: 'api_calls', quantity: 400 });
    const restart = new Date(s.currentPeriodStart.getTime() + 10 * DAY);
    core.clock.set(restart);
    const snapshot = {
      status: 'ACTIVE' as const,
      currentPeriodStart: restart,
      currentPeriodEnd: new Date(restart.getTime() + 30 * DAY),
      cancelAtPeriodEnd: false,
      canceledAt: null,
      quantity: 1,
    };
    expect(await core.providerSync.sync('sub_restarted', snapshot)).toBe('applied');
    expect(await core.providerSync.sync('sub_restarted', snapshot)).toBe('applied');
    const closes = (await core.uow.read((r) => r.usage.pageCloses(tenant(), { limit: 10, owner: s.id }))).items;
    expect(closes.map((c) => c.finalUsage)).toEqual([400n]);
    expect(await balance(s.id)).toMatchObject({ used: 0n, periodEnd: snapshot.currentPeriodEnd });
  });

  it("the provider's re-sync: a period end moved within its period (a trial extended) closes nothing; a revived subscription starts its usage again", async () => {
    const { subscription: s } = await buyPlan(core, keys['plans.notes.api'], 1, 'alice', 'fake');
    await core.uow.run(async (r) => r.subscriptions.save({ ...s, paymentSubscriptionId: 'sub_moves' }));
    await core.usage.record(tenant(), { owner: s.id, meterSlug: 'api_calls', quantity: 300 });
    const later = new Date(s.currentPeriodEnd.getTime() + 7 * DAY);
    const snapshot = {
      status: 'ACTIVE' as const,
      currentPeriodStart: s.currentPeriodStart,
      currentPeriodEnd: later,
      cancelAtPeriodEnd: false,
      canceledAt: null,
      quantity: 1,
    };
    expect(await core.providerSync.sync('sub_moves', snapshot)).toBe('applied');
    const closes = async () => (await core.uow.read((r) => r.usage.pageCloses(tenant(), { limit: 10, owner: s.id }))).items;
    expect(await closes()).toEqual([]);
    expect(await balance(s.id)).toMatchObject({ used: 300n });
    // Canceled here at its end (the reactivation's event late), then revived by the provider for a new period.
    await core.subscriptions.cancel(tenant(), s.id, 'end');
    core.clock.set(new Date(later.getTime() + 1000));
    expect(await core.sweeps.cancellations()).toBe(1);
    expect(await closes()).toHaveLength(1);
    // Usage meanwhile is refused: the subscription is canceled here (its usage closed and billed).
    await expect(core.usage.record(tenant(), { owner: s.id, meterSlug: 'api_calls', quantity: 25 })).rejects.toMatchObject({
      code: 'SUBSCRIPTION_CANCELED',
    });
    const next = new Date(later.getTime() + 30 * DAY);
    expect(await core.providerSync.sync('sub_moves', { ...snapshot, currentPeriodStart: later, currentPeriodEnd: next })).toBe('applied');
    // The revived period starts its usage: its allowance, its cap and its end.
    expect(await balance(s.id)).toMatchObject({ granted: 1000n, used: 0n, cap: 5000n, periodEnd: next });
    expect(await core.usage.record(tenant(), { owner: s.id, meterSlug: 'api_calls', quantity: 25 })).toMatchObject({ used: '25' });
  });

  it('usage of a canceled subscription is refused (400 naming owner), nothing written; a grant to it, and other owners, go on', async () => {
    const { subscription: s } = await buyPlan(core, keys['plans.notes.api'], 1, 'alice', 'fake');
    const t = { owner: s.id, meterSlug: 'api_calls' };
    await core.usage.record(tenant(), { ...t, quantity: 40 });
    await core.subscriptions.cancel(tenant(), s.id, 'now');
    const closes = (await core.uow.read((r) => r.usage.pageCloses(tenant(), { limit: 10, owner: s.id }))).items;
    expect(closes.map((c) => c.finalUsage)).toEqual([40n]);
    for (const op of [
      () => core.usage.record(tenant(), { ...t, quantity: 5 }),
      () => core.usage.consume(tenant(), { ...t, quantity: 5 }),
      () => core.usage.reserve(tenant(), { ...t, quantity: 5, ttlSeconds: 60 }),
    ])
      await expect(op()).rejects.toMatchObject({ code: 'SUBSCRIPTION_CANCELED', details: [{ property: 'owner' }] });
    // Nothing counted: no open balance holds usage of it.
    expect((await balance(s.id))?.used ?? 0n).toBe(0n);
    // Another owner of the same meter, in the same moment, is unaffected.
    expect(await core.usage.consume(tenant(), { owner: 'someone-else', meterSlug: 'api_calls', quantity: 5 })).toMatchObject({
      allowed: true,
    });
    // Credit granted to it on purpose is the vendor's choice: a consume may spend it (and only it).
    await core.usage.grant(tenant(), { ...t, amount: 10 });
    // A record is bounded by no credit: refused still.
    await expect(core.usage.record(tenant(), { ...t, quantity: 5 })).rejects.toMatchObject({ code: 'SUBSCRIPTION_CANCELED' });
    expect(await core.usage.consume(tenant(), { ...t, quantity: 10 })).toMatchObject({ allowed: true, remaining: '0' });
    expect((await core.usage.consume(tenant(), { ...t, quantity: 1 })).allowed).toBe(false);
    expect(await core.usage.verify()).toEqual([]);
  });

  it('writes usage.recorded at most once a window per balance (what waits is told at close), usage.threshold once at 80, 90 and 100 % of the allowance, usage.finalised at close', async () => {
    const { subscription: s } = await buyPlan(core, keys['plans.notes.api'], 1, 'alice', 'fake');
    const t = { owner: s.id, meterSlug: 'api_calls' };
    // Each event a millisecond after the last, so that the list's order is the order of writing.
    const tick = () => core.clock.set(new Date(core.clock.now().getTime() + 10));
    for (const [op, quantity] of [
      ['record', 700],
      ['record', 150], // 850: crosses 80 %
      ['consume', 10], // 860: nothing crossed
      ['record', 300], // 1160: crosses 90 % and 100 %
      ['record', 1], // nothing again
    ] as const) {
      tick();
      await core.usage[op](tenant(), { ...t, quantity });
    }
    core.clock.set(new Date(s.currentPeriodEnd.getTime() + 1000));
    await core.sweeps.renewals();
    tick();
    await core.usage.record(tenant(), { ...t, quantity: 850 }); // the new period crosses 80 % again
    const events = (await core.uow.read((r) => r.outbox.page(tenant(), { limit: 100 }))).items.filter((e) => e.type.startsWith('usage.'));
    const data = (type: string) => events.filter((e) => e.type === type).map((e) => (e.payload as { data: Record<string, unknown> }).data);
    // The first use reports at once; the four after it, within the window (60 s), wait on the balance
    // and are told by the period's close, before its usage.finalised; the new period reports at once.
    expect(data('usage.recorded').map((d) => [d.quantity, d.operations, d.used, d.meterSlug])).toEqual([
      [700, 1, 700, 'api_calls'],
      [461, 4, 1161, 'api_calls'],
      [850, 1, 850, 'api_calls'],
    ]);
    expect(events.map((e) => e.type).slice(0, 6)).toEqual([
      'usage.recorded',
      'usage.threshold',
      'usage.threshold',
      'usage.threshold',
      'usage.recorded',
      'usage.finalised',
    ]);
    expect(data('usage.threshold').map((d) => [d.threshold, d.used, d.allowance])).toEqual([
      [80, 850, 1000],
      [90, 1160, 1000],
      [100, 1160, 1000],
      [80, 850, 1000],
    ]);
    expect(data('usage.finalised')).toEqual([
      expect.objectContaining({ owner: s.id, meterSlug: 'api_calls', status: 'final', finalUsage: 1161, billedUnits: 161, amount: 161 }),
    ]);
    expect(new Set(events.map((e) => e.orderingKey))).toEqual(new Set([usageOrderingKey(tenant(), s.id)]));
    expect(usageOrderingKey(tenant(), s.id)).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  it('credits granted mid-period raise what usage.threshold measures: a share of the new total is told again, naming that total', async () => {
    const { subscription: s } = await buyPlan(core, keys['plans.notes.api'], 1, 'alice', 'fake');
    const t = { owner: s.id, meterSlug: 'api_calls' };
    const tick = () => core.clock.set(new Date(core.clock.now().getTime() + 10));
    tick();
    await core.usage.record(tenant(), { ...t, quantity: 850 }); // 85 % of 1 000
    tick();
    await core.usage.grant(tenant(), { ...t, amount: 1000 }); // 850 of 2 000: below 80 % again
    tick();
    await core.usage.record(tenant(), { ...t, quantity: 50 }); // 900 of 2 000: nothing crossed
    tick();
    await core.usage.record(tenant(), { ...t, quantity: 750 }); // 1 650 of 2 000: 80 % of the new total
    const events = (await core.uow.read((r) => r.outbox.page(tenant(), { limit: 100 }))).items.filter((e) => e.type === 'usage.threshold');
    expect(events.map((e) => (e.payload as { data: Record<string, unknown> }).data).map((d) => [d.threshold, d.used, d.allowance])).toEqual(
      [
        [80, 850, 1000],
        [80, 1650, 2000],
      ],
    );
  });

  it('a provider-billed renewal (Stripe invoice.paid) closes the period once and starts the next from allowance plus rollover', async () => {
    const { subscription: s } = await buyPlan(core, keys['plans.notes.api'], 1, 'alice', 'fake');
    await core.uow.run(async (r) => r.subscriptions.save({ ...s, paymentSubscriptionId: 'sub_provider' }));
    await core.usage.record(tenant(), { owner: s.id, meterSlug: 'api_calls', quantity: 900 });
    const next = new Date(s.currentPeriodEnd.getTime() + 30 * DAY);
    core.clock.set(new Date(s.currentPeriodEnd.getTime() + 1000));
    expect(await core.providerSync.renew('sub_provider', s.currentPeriodEnd, next)).toBe('applied');
    expect(await core.providerSync.renew('sub_provider', s.currentPeriodEnd, next)).toBe('applied');
    expect(await balance(s.id)).toMatchObject({ granted: 1100n, used: 0n, periodEnd: next });
    const closes = await core.uow.read((r) => r.usage.pageCloses(tenant(), { limit: 10, owner: s.id }));
    expect(closes.items.map((c) => [c.finalUsage, c.billedUnits])).toEqual([[900n, 0n]]);
  });

  it("a provider's renewal seen first as the subscription's update (Stripe: updated before invoice.paid) closes the period once", async () => {
    const { subscription: s } = await buyPlan(core, keys['plans.notes.api'], 1, 'alice', 'fake');
    await core.uow.run(async (r) => r.subscriptions.save({ ...s, paymentSubscriptionId: 'sub_updated_first' }));
    await core.usage.record(tenant(), { owner: s.id, meterSlug: 'api_calls', quantity: 900 });
    const next = new Date(s.currentPeriodEnd.getTime() + 30 * DAY);
    core.clock.set(new Date(s.currentPeriodEnd.getTime() + 1000));
    const snapshot = {
      status: 'ACTIVE' as const,
      currentPeriodStart: s.currentPeriodEnd,
      currentPeriodEnd: next,
      cancelAtPeriodEnd: false,
      canceledAt: null,
      quantity: 1,
    };
    expect(await core.providerSync.sync('sub_updated_first', snapshot)).toBe('applied');
    // The paid invoice then finds the period moved: nothing more; the update again: nothing more.
    expect(await core.providerSync.renew('sub_updated_first', s.currentPeriodEnd, next)).toBe('applied');
    expect(await core.providerSync.sync('sub_updated_first', snapshot)).toBe('applied');
    expect(await balance(s.id)).toMatchObject({ granted: 1100n, used: 0n, periodEnd: next });
    const closes = await core.uow.read((r) => r.usage.pageCloses(tenant(), { limit: 10, owner: s.id }));
    expect(closes.items.map((c) => [c.finalUsage, c.billedUnits])).toEqual([[900n, 0n]]);
  });

  describe('a subscription that ends closes its usage and bills it, once', () => {
    let billed: UsageInvoiceLine[][];
    beforeEach(() => {
      billed = [];
      (core.payments as PaymentProvider).usageBilled = (_s, _p, lines) => (billed.push(lines), {});
    });
    const closes = async (owner: string) =>
      (await core.uow.read((r) => r.usage.pageCloses(tenant(), { limit: 10, owner }))).items.map((c) => [c.finalUsage, c.billedUnits]);

    it('canceled now', async () => {
      const { subscription: s } = await buyPlan(core, keys['plans.notes.api'], 1, 'alice', 'fake');
      await core.usage.record(tenant(), { owner: s.id, meterSlug: 'api_calls', quantity: 1200 });
      await core.subscriptions.cancel(tenant(), s.id, 'now');
      expect(await closes(s.id)).toEqual([[1200n, 200n]]);
      expect(billed.map((lines) => lines.map((l) => l.quantity))).toEqual([[200]]);
    });

    it('canceled at the end of its period, by the sweep', async () => {
      const { subscription: s } = await buyPlan(core, keys['plans.notes.api'], 1, 'alice', 'fake');
      await core.usage.record(tenant(), { owner: s.id, meterSlug: 'api_calls', quantity: 1300 });
      await core.subscriptions.cancel(tenant(), s.id, 'end');
      expect(await closes(s.id)).toEqual([]);
      core.clock.set(new Date(s.currentPeriodEnd.getTime() + 1000));
      expect(await core.sweeps.cancellations()).toBe(1);
      expect(await core.sweeps.cancellations()).toBe(0);
      expect(await closes(s.id)).toEqual([[1300n, 300n]]);
      expect(billed).toHaveLength(1);
    });

    it('ended at the provider (Stripe: customer.subscription.deleted), billed there from its meter events', async () => {
      const { subscription: s } = await buyPlan(core, keys['plans.notes.api'], 1, 'alice', 'fake');
      await core.uow.run(async (r) => r.subscriptions.save({ ...s, paymentSubscriptionId: 'sub_deleted' }));
      await core.usage.record(tenant(), { owner: s.id, meterSlug: 'api_calls', quantity: 1100 });
      const ended = { ...s, status: 'CANCELED' as const, canceledAt: new Date(), cancelAtPeriodEnd: false, quantity: 1 };
      expect(await core.providerSync.sync('sub_deleted', ended)).toBe('applied');
      expect(await core.providerSync.sync('sub_deleted', ended)).toBe('applied');
      expect(await closes(s.id)).toEqual([[1100n, 100n]]);
      expect(billed).toEqual([]);
    });

    it('ended at the provider within the period and revived there in it: the revived usage closes at the renewal', async () => {
      const { subscription: s } = await buyPlan(core, keys['plans.notes.api'], 1, 'alice', 'fake');
      await core.uow.run(async (r) => r.subscriptions.save({ ...s, paymentSubscriptionId: 'sub_revived' }));
      const t = { owner: s.id, meterSlug: 'api_calls' };
      await core.usage.record(tenant(), { ...t, quantity: 100 });
      const end = s.currentPeriodEnd;
      core.clock.set(new Date(s.currentPeriodStart.getTime() + 5 * DAY));
      const ended = { ...s, status: 'CANCELED' as const, canceledAt: core.clock.now(), cancelAtPeriodEnd: false, quantity: 1 };
      expect(await core.providerSync.sync('sub_revived', ended)).toBe('applied');
      core.clock.set(new Date(s.currentPeriodStart.getTime() + 6 * DAY));
      expect(await core.providerSync.sync('sub_revived', { ...ended, status: 'ACTIVE', canceledAt: null })).toBe('applied');
      await core.usage.record(tenant(), { ...t, quantity: 50 });
      core.clock.set(new Date(end.getTime() + 1000));
      expect(await core.providerSync.renew('sub_revived', end, new Date(end.getTime() + 30 * DAY))).toBe('applied');
      // The ended part closed when it ended; the revived part at the period's end, by the renewal, which starts the next.
      expect(await closes(s.id)).toEqual(
        expect.arrayContaining([
          [100n, expect.any(BigInt)],
          [50n, expect.any(BigInt)],
        ]),
      );
      expect(await balance(s.id)).toMatchObject({ used: 0n, periodStart: end });
    });
  });

  it("a v1 usage feature on a meter with decimal places caps and bills in the meter's decimals", async () => {
    // `projects` counts hundredths; the plan's usage feature: 0.50 a unit, at least 1.5 billed, at most 10.255 (10.25: places past the scale dropped).
    await core.usage.createMeter(tenant(), { slug: 'projects', name: 'Projects', scale: 2 });
    const planId = keys['plans.notes.metered'];
    await core.uow.run(async (r) => {
      const plan = (await r.plans.get(planId))!;
      const feature = (await r.products.get(plan.productId))!.features.find((f) => f.variableName === 'projects')!;
      const value = {
        featureId: feature.id,
        value: '0',
        enumOptionId: null,
        isUnlimited: false,
        isUsage: true,
        pricePerUnit: 0.5,
        minUsage: 1.5,
        maxUsage: 10.255,
        updatedAt: core.clock.now(),
      };
      await r.plans.save({ ...plan, features: [...plan.features.filter((v) => v.featureId !== feature.id), value] });
    });
    const { subscription: s } = await buyPlan(core, planId, 1, 'alice', 'fake');
    expect((await core.usage.balances(tenant(), s.id, 'projects'))[0]?.balance).toMatchObject({ used: 0n, cap: 1025n });
    await core.usage.record(tenant(), { owner: s.id, meterSlug: 'projects', quantity: 0.75 });
    core.clock.set(new Date(s.currentPeriodEnd.getTime() + 1000));
    await core.sweeps.renewals();
    // 0.75 used, 1.5 the least billed: 1.5 x 50 cents.
    expect(renewals.flat().map((l) => [l.description, l.quantity, l.amount])).toEqual([['1.5 projects × Projects', 1.5, 75]]);
  });

  it('exports usage entries and imports them back unchanged', async () => {
    const file = await core.exporter.export('acme', false);
    const api = file.products?.[0].plans?.find((p) => p.key === 'api');
    expect(api?.usage).toEqual([
      expect.objectContaining({ meter: 'api_calls', allowance: 1000, maxUsage: 5000, minUsage: 0, rollover: { upTo: 300 } }),
    ]);
    const result = await core.importer.apply(file);
    expect(result.updated).toBe(0);
  });

  it('refuses bad usage terms naming the field', async () => {
    const file = usageCatalog('acme');
    const plan = file.products![0].plans!.find((p) => p.key === 'api')!;
    const unitPrices = { USD: 0.01 };
    // Core checks the slug itself too (the file's shape is the JSON Schema's, checked by the entry points).
    plan.usage = [{ meter: 'Bad-Slug', unitPrices }];
    await expect(core.importer.apply(file)).rejects.toMatchObject({
      details: [expect.objectContaining({ property: 'plans.api.usage[0].meter' })],
    });
    plan.usage = [{ meter: 'api_calls', minUsage: 10, maxUsage: 5, unitPrices }];
    await expect(core.importer.apply(file)).rejects.toMatchObject({
      details: [expect.objectContaining({ property: 'plans.api.usage[0].minUsage' })],
    });
    // A fraction on a whole-unit meter; more places than a decimal meter's scale; a bound likewise.
    plan.usage = [{ meter: 'api_calls', allowance: 1.5, unitPrices }];
    await expect(core.importer.apply(file)).rejects.toMatchObject({
      details: [expect.objectContaining({ property: 'plans.api.usage[0].allowance', error: expect.stringContaining('whole number') })],
    });
    await core.usage.createMeter(tenant(), { slug: 'gpu_hours', name: 'GPU hours', scale: 2 });
    plan.usage = [{ meter: 'gpu_hours', allowance: 10.125, unitPrices }];
    await expect(core.importer.apply(file)).rejects.toMatchObject({
      details: [{ property: 'plans.api.usage[0].allowance', error: "must have at most 2 decimal places (the meter's scale)" }],
    });
    plan.usage = [
      {
        meter: 'gpu_hours',
        tiers: {
          USD: [
            { upTo: 0.005, unitAmount: 1 },
            { upTo: 'inf', unitAmount: 1 },
          ],
        },
      },
    ];
    await expect(core.importer.apply(file)).rejects.toMatchObject({
      details: [expect.objectContaining({ property: 'plans.api.usage[0].tiers.USD[0].upTo' })],
    });
  });

  it('a plan on a meter with decimal places grants, caps and bills its decimals exactly, and exports them back', async () => {
    await core.usage.createMeter(tenant(), { slug: 'gpu_hours', name: 'GPU hours', unitLabel: 'hour', scale: 3 });
    const file = usageCatalog('acme');
    file.products![0].plans!.push({
      key: 'gpu',
      displayName: 'GPU',
      pricingType: 'paid',
      interval: 'month',
      length: 1,
      prices: { USD: 10 },
      capabilities: ['edit'],
      usage: [
        {
          meter: 'gpu_hours',
          unitLabel: 'hour',
          allowance: 0.5,
          maxUsage: 100.25,
          minUsage: 1.5,
          rollover: { upTo: 0.25 },
          tiers: {
            USD: [
              { upTo: 2.5, unitAmount: 0.4 },
              { upTo: 'inf', unitAmount: 0.1 },
            ],
          },
        },
      ],
    });
    const gpu = (await core.importer.apply(file)).keys['plans.notes.gpu'];
    const { subscription: s } = await buyPlan(core, gpu, 1, 'alice', 'fake');
    const gpuBalance = async () => (await core.usage.balances(tenant(), s.id, 'gpu_hours'))[0]?.balance;
    // Counters count thousandths of an hour.
    expect(await gpuBalance()).toMatchObject({ granted: 500n, used: 0n, cap: 100_250n });
    await core.usage.record(tenant(), { owner: s.id, meterSlug: 'gpu_hours', quantity: 1.25 });
    await core.usage.record(tenant(), { owner: s.id, meterSlug: 'gpu_hours', quantity: '2.375' });
    core.clock.set(new Date(s.currentPeriodEnd.getTime() + 1000));
    await core.sweeps.renewals();
    // 3.625 used, 0.5 granted: 3.125 billed; 2.5 at 40 cents (1.00), then 0.625 at 10 cents (6.25 cents, rounded once: 6).
    const lines = renewals.flat().filter((l) => l.description.includes('GPU'));
    expect(lines.map((l) => [l.quantity, l.unitAmount, l.amount])).toEqual([
      [2.5, 40, 100],
      [0.625, 10, 6],
    ]);
    expect(lines.map((l) => l.description)).toEqual(['2.5 hour × GPU hours (tier 0–2.5)', '0.625 hour × GPU hours (tier 2.5–inf)']);
    const closes = await core.uow.read((r) => r.usage.pageCloses(tenant(), { limit: 10, owner: s.id }));
    expect(closes.items.map((c) => [c.finalUsage, c.billedUnits, c.amountMinor])).toEqual([[3625n, 3125n, 106n]]);
    // The next period: the allowance plus what rolled over (nothing was left unused).
    expect(await gpuBalance()).toMatchObject({ granted: 500n, used: 0n });

    const exported = (await core.exporter.export('acme', false)).products?.[0].plans?.find((p) => p.key === 'gpu');
    expect(exported?.usage).toEqual([
      expect.objectContaining({
        meter: 'gpu_hours',
        allowance: 0.5,
        maxUsage: 100.25,
        minUsage: 1.5,
        rollover: { upTo: 0.25 },
        tiers: { USD: [expect.objectContaining({ upTo: 2.5 }), expect.objectContaining({ upTo: 'inf' })] },
      }),
    ]);
    // The export names the meter's scale, so a copy elsewhere (live mode, another organisation) makes the same meter.
    expect(exported?.usage?.[0].scale).toBe(3);
    expect((await core.importer.apply(file)).updated).toBe(0);
    const plan = file.products![0].plans!.find((p) => p.key === 'gpu')!;
    plan.usage = [{ ...exported!.usage![0], meter: 'gpu_minutes' }];
    const moved = (await core.importer.apply(file)).keys['plans.notes.gpu'];
    expect(await core.usage.meter(tenant(), 'gpu_minutes')).toMatchObject({ scale: 3 });
    const { subscription: m } = await buyPlan(core, moved, 1, 'bob', 'fake');
    expect((await core.usage.balances(tenant(), m.id, 'gpu_minutes'))[0]?.balance).toMatchObject({ granted: 500n, cap: 100_250n });
    // An existing meter's scale never changes: a file naming another is refused, naming the member.
    plan.usage = [{ ...exported!.usage![0], scale: 2 }];
    await expect(core.importer.apply(file)).rejects.toMatchObject({
      details: [expect.objectContaining({ property: 'plans.gpu.usage[0].scale' })],
    });
  });
});

describe('usage charges', () => {
  const item = (over: Partial<LineItem>): LineItem =>
    ({ name: 'Calls', unitLabel: 'call', billingScheme: 'per_unit', tiersMode: null, meter: null, prices: [], ...over }) as LineItem;
  const option = (unitAmount: number | null, tiers: { upTo: string; unitAmount: number; flatAmount: number | null }[] = []) =>
    ({ currency: 'usd', unitAmount, isDefault: true, tiers }) as never;

  it("prorates the minimum by the time a balance covered of the plan's interval from the period's start", () => {
    const month = { interval: 'month' as const, length: 1 };
    const at = (iso: string) => new Date(`${iso}T00:00:00Z`);
    const periodStart = at('2026-01-31');
    // A whole period (31 January to 28 February is one month) owes the whole minimum, and more than one too.
    expect(minimumFor(3100n, month, { periodStart, from: periodStart, to: at('2026-02-28') })).toBe(3100n);
    expect(minimumFor(3100n, month, { periodStart, from: at('2026-01-01'), to: at('2026-02-28') })).toBe(3100n);
    // 7 of its 28 days: a quarter; nothing covered: nothing; no minimum: none.
    expect(minimumFor(3100n, month, { periodStart, from: at('2026-02-21'), to: at('2026-02-28') })).toBe(775n);
    expect(minimumFor(3100n, month, { periodStart, from: at('2026-02-28'), to: at('2026-02-28') })).toBe(0n);
    expect(minimumFor(0n, month, { periodStart, from: at('2026-02-21'), to: at('2026-02-28') })).toBe(0n);
    // Rounded down, in the meter's steps.
    expect(minimumFor(10n, { interval: 'day', length: 3 }, { periodStart, from: periodStart, to: at('2026-02-01') })).toBe(3n);
  });

  it('bills what grants did not cover, counting the period as at least minUsage', () => {
    expect(billedUnits(1800n, 1000n, { minUsage: 0n })).toBe(800n);
    expect(billedUnits(10n, 1000n, { minUsage: 0n })).toBe(0n);
    expect(billedUnits(10n, 0n, { minUsage: 100n })).toBe(100n);
    expect(billedUnits(10n, 50n, { minUsage: 100n })).toBe(50n);
  });

  it('prices fractional units exactly at the meter scale, rounding once per line', () => {
    // 2.5 units (scale 3: 2500 steps) at 0.40 (40 cents) = 1.00.
    expect(usageCharge(item({}), option(40), 2500n, 3).lines).toEqual([
      { description: '2.5 call × Calls', quantity: 2500n, unitAmount: 40, amount: 100n },
    ]);
    // 0.001 unit at 40 cents is 0.04 cents: a line rounds half up once, never per step.
    expect(usageCharge(item({}), option(40), 1n, 3).amountMinor).toBe(0n);
    expect(usageCharge(item({}), option(40), 13n, 3).amountMinor).toBe(1n); // 0.52 cents
    expect(usageCharge(item({}), option(40), 12n, 3).amountMinor).toBe(0n); // 0.48 cents
    // 1.25 units at 0.2 cents: 0.25 cents exactly, under half: 0.
    expect(usageCharge(item({}), option(0.2), 1250n, 3).amountMinor).toBe(0n);
    expect(usageCharge(item({}), option(0.3333), 1_500_000n, 6).amountMinor).toBe(0n); // 0.49995 cents
    expect(usageCharge(item({}), option(0.3334), 1_500_000n, 6).amountMinor).toBe(1n); // 0.5001 cents
    // Whole-unit meters price as before (scale 0 is the default).
    expect(usageCharge(item({}), option(0.2), 12_345n, 0).amountMinor).toBe(2469n);
  });

  it('tiers bound in units cross at a fractional total', () => {
    const tiers = [
      { upTo: '2.5', unitAmount: 40, flatAmount: null },
      { upTo: '10', unitAmount: 10, flatAmount: 5 },
      { upTo: 'inf', unitAmount: 1, flatAmount: null },
    ];
    // Graduated over 3.75 units (scale 2): 2.5 at 40 = 100, 1.25 at 10 + 5 flat = 17.5 -> 18 (once, half up).
    const graduated = usageCharge(item({ billingScheme: 'tiered', tiersMode: 'graduated' }), option(null, tiers), 375n, 2);
    expect(graduated.lines.map((l) => [l.quantity, l.amount, l.description])).toEqual([
      [250n, 100n, '2.5 call × Calls (tier 0–2.5)'],
      [125n, 18n, '1.25 call × Calls (tier 2.5–10)'],
    ]);
    expect(graduated.amountMinor).toBe(118n);
    // Exactly at the bound stays in the tier; a step past it enters the next.
    expect(usageCharge(item({ billingScheme: 'tiered', tiersMode: 'graduated' }), option(null, tiers), 250n, 2).lines).toHaveLength(1);
    expect(usageCharge(item({ billingScheme: 'tiered', tiersMode: 'graduated' }), option(null, tiers), 251n, 2).lines).toHaveLength(2);
    // Volume: every unit at the tier the total falls in. 2.5 -> first tier (100); 2.51 -> second (25.1 + 5 = 30.1 -> 30).
    const volume = item({ billingScheme: 'tiered', tiersMode: 'volume' });
    expect(usageCharge(volume, option(null, tiers), 250n, 2).amountMinor).toBe(100n);
    expect(usageCharge(volume, option(null, tiers), 251n, 2).amountMinor).toBe(30n);
    // A whole bound on a decimal meter is that many units (10 -> 10.000).
    expect(usageCharge(volume, option(null, tiers), 10_000n, 3).lines[0]).toMatchObject({ unitAmount: 10 });
    expect(usageCharge(volume, option(null, tiers), 10_001n, 3).lines[0]).toMatchObject({ unitAmount: 1 });
  });

  it('bills every unit when the last tier has a bound instead of inf: the last tier is open-ended', () => {
    // The published catalog API takes such tiers; units past the last bound are not free, and a volume
    // total past it does not fail the period close (a review found both).
    const tiers = [
      { upTo: '2', unitAmount: 10, flatAmount: null },
      { upTo: '5', unitAmount: 4, flatAmount: null },
    ];
    const graduated = usageCharge(item({ billingScheme: 'tiered', tiersMode: 'graduated' }), option(null, tiers), 8n);
    expect(graduated.lines.map((l) => [l.quantity, l.amount])).toEqual([
      [2n, 20n],
      [6n, 24n],
    ]);
    const volume = usageCharge(item({ billingScheme: 'tiered', tiersMode: 'volume' }), option(null, tiers), 8n);
    expect(volume.lines.map((l) => [l.quantity, l.unitAmount, l.amount])).toEqual([[8n, 4, 32n]]);
  });

  it('prices per unit, graduated and volume tiers exactly', () => {
    expect(usageCharge(item({}), option(0.2), 12_345n).amountMinor).toBe(2469n);
    const tiers = [
      { upTo: '100', unitAmount: 2, flatAmount: 50 },
      { upTo: 'inf', unitAmount: 1, flatAmount: null },
    ];
    const graduated = usageCharge(item({ billingScheme: 'tiered', tiersMode: 'graduated' }), option(null, tiers), 150n);
    expect(graduated.lines.map((l) => [l.quantity, l.amount])).toEqual([
      [100n, 250n],
      [50n, 50n],
    ]);
    const volume = usageCharge(item({ billingScheme: 'tiered', tiersMode: 'volume' }), option(null, tiers), 150n);
    expect(volume.amountMinor).toBe(150n);
    expect(usageCharge(item({ billingScheme: 'tiered', tiersMode: 'volume' }), option(null, tiers), 80n).amountMinor).toBe(210n);
    expect(usageCharge(item({}), option(5), 0n).lines).toEqual([]);
  });
});
