import type { Interval, LineItem, LineItemDraft, Plan, Tenant } from '../src';
import { buyPlan, createTestCore, fakeFreeCheckout, rejectionOf, seedSample, type TestCore } from '../src/testing';

// Every write of a plan's pricing bills the plan by its recurring prices, as `POST /api/plans/save`
// does, and nothing sold or being sold at a plan's interval lets it change: the pricing-parts
// resources, catalog imports (and copy to live mode), and open checkouts (a review of 1f055bb).

async function setup(): Promise<{ core: TestCore; tenant: Tenant; productId: string }> {
  const core = createTestCore();
  const org = await core.apiKeys.ensureOrganisation('acme');
  const tenant = { organisationId: org.id, isTest: false };
  const product = await core.products.createProduct(tenant, { name: 'Notes' });
  return { core, tenant, productId: product.id };
}

const item = (name: string, interval: Interval, over: Partial<LineItemDraft> = {}): LineItemDraft => ({
  name,
  priceType: 'flat_rate',
  prices: [{ interval, currencyOptions: [{ currency: 'USD', unitAmount: 1000 }] }],
  ...over,
});

/** The change a `PUT /api/line-items/:id` makes of a line item with another `intervalType`. */
const recurring = (li: LineItem) => ({
  name: li.name,
  slug: li.slug,
  priceType: li.priceType,
  intervalType: 'recurring' as const,
  billingScheme: li.billingScheme,
  tiersMode: li.tiersMode,
  minQuantity: li.minQuantity,
  maxQuantity: li.maxQuantity,
});

const errorOf = rejectionOf;

/** Writes the plan as it was stored before a rule (a plan saved before 1f055bb, an import's key). */
const store = (core: TestCore, plan: Plan) => core.uow.run((r) => r.plans.save(plan));
const stored = async (core: TestCore, tenant: Tenant, id: string) => (await core.plans.getPlan(tenant, id)).plan;

describe('a line item turned recurring', () => {
  it('refuses to mix intervals on the plan (400 naming intervalType) and writes nothing', async () => {
    const { core, tenant, productId } = await setup();
    const { plan } = await core.plans.savePlan(tenant, {
      productId,
      name: 'Monthly',
      lineItems: [item('Base', 'month'), item('Setup', 'year', { intervalType: 'one_off' })],
    });
    const setupItem = plan.lineItems[1];
    const e = await errorOf(core.pricingParts.updateLineItem(tenant, setupItem.id, recurring(setupItem)));
    expect(e.code).toBe('VALIDATION_FAILED');
    expect(e.details).toEqual([{ property: 'intervalType', error: expect.stringContaining('would mix billing intervals on the plan') }]);
    expect(await stored(core, tenant, plan.id)).toMatchObject({ interval: 'month', lineItems: plan.lineItems });
  });

  it('bills the plan by it when nothing holds the plan, and is refused (409 naming intervalType) while a subscription runs', async () => {
    const { core, tenant, productId } = await setup();
    const lifetime = () =>
      core.plans.savePlan(tenant, { productId, name: 'Once', lineItems: [item('Once', 'year', { intervalType: 'one_off' })] });
    const free = (await lifetime()).plan;
    expect(free).toMatchObject({ interval: 'month', length: 1 });
    await core.pricingParts.updateLineItem(tenant, free.lineItems[0].id, recurring(free.lineItems[0]));
    expect(await stored(core, tenant, free.id)).toMatchObject({ interval: 'year', length: 1 });

    const held = (await lifetime()).plan;
    await buyPlan(core, held.id);
    const e = await errorOf(core.pricingParts.updateLineItem(tenant, held.lineItems[0].id, recurring(held.lineItems[0])));
    expect(e.code).toBe('CONFLICT');
    expect(e.details).toEqual([{ property: 'intervalType', error: expect.stringContaining('has running subscriptions') }]);
    expect(await stored(core, tenant, held.id)).toMatchObject({ interval: 'month', lineItems: held.lineItems });
  });

  it('leaves a plan saved mixed before the rule open to archiving its prices, then bills by what is left', async () => {
    const { core, tenant, productId } = await setup();
    const { plan } = await core.plans.savePlan(tenant, {
      productId,
      name: 'Legacy',
      lineItems: [item('Base', 'month'), item('Annual', 'month')],
    });
    const annual = plan.lineItems[1];
    await store(core, {
      ...plan,
      lineItems: [plan.lineItems[0], { ...annual, prices: [{ ...annual.prices[0], interval: 'year' }] }],
    });
    // Any other write of it is refused until it is mended.
    const e = await errorOf(core.pricingParts.updateLineItem(tenant, annual.id, { ...recurring(annual), name: 'Yearly' }));
    expect(e.details).toEqual([{ property: 'intervalType', error: expect.stringContaining('already mix billing intervals') }]);
    await core.pricingParts.archiveLineItem(tenant, plan.lineItems[0].id);
    expect(await stored(core, tenant, plan.id)).toMatchObject({ interval: 'year', length: 1 });
  });
});

describe('an open checkout session', () => {
  it('holds its plan’s interval for 24 hours (409 naming the price) unless canceled', async () => {
    const { core, tenant, productId } = await setup();
    const body = { productId, name: 'Monthly', lineItems: [item('Base', 'month')] };
    const { plan } = await core.plans.savePlan(tenant, body);
    const yearly = { ...body, id: plan.id, lineItems: [item('Base', 'year')] };
    const req = { member: 'm@example.com', granteeId: 'm', successUrl: 'https://x.io/ok', cancelUrl: 'https://x.io/no', currency: 'USD' };
    const { sessionId } = await core.checkout.sessionLink(tenant, plan.id, req);
    const e = await errorOf(core.plans.savePlan(tenant, yearly));
    expect(e.code).toBe('CONFLICT');
    expect(e.details).toEqual([{ property: 'lineItems[0].prices[0].interval', error: expect.stringContaining('has open checkouts') }]);
    // Canceled, the session holds nothing; another one holds for a day after it was made.
    await core.checkout.cancelCheckout(sessionId);
    await core.checkout.sessionLink(tenant, plan.id, req);
    await expect(core.plans.savePlan(tenant, yearly)).rejects.toMatchObject({ code: 'CONFLICT' });
    core.clock.advanceDays(1.01);
    expect((await core.plans.savePlan(tenant, yearly)).plan).toMatchObject({ interval: 'year' });
  });

  it('of a provider that bills by Tollgate’s periods (the sandbox, the free checkout) holds nothing: they follow the plan', async () => {
    const { core, tenant, productId } = await setup();
    (core.payments as { renewedBySweep?: unknown }).renewedBySweep = () => ({});
    const body = { productId, name: 'Monthly', lineItems: [item('Base', 'month')] };
    const { plan } = await core.plans.savePlan(tenant, body);
    const req = { member: 'm@example.com', granteeId: 'm', successUrl: 'https://x.io/ok', cancelUrl: 'https://x.io/no', currency: 'USD' };
    await core.checkout.sessionLink(tenant, plan.id, req);
    expect((await core.plans.savePlan(tenant, { ...body, id: plan.id, lineItems: [item('Base', 'year')] })).plan).toMatchObject({
      interval: 'year',
    });
  });

  it("of a cart whose first plan is free holds its paid plan's interval: the cart goes to the payment provider", async () => {
    const core = createTestCore({ freeCheckout: fakeFreeCheckout() });
    const { tenant, keys } = await seedSample(core, 'acme');
    const req = { member: 'm@example.com', granteeId: 'm', successUrl: 'https://x.io/ok', cancelUrl: 'https://x.io/no', currency: 'USD' };
    const extraItems = [{ planId: keys['plans.notes.team'], quantity: 2, granteeId: null, groupId: null }];
    const { sessionId } = await core.checkout.sessionLink(tenant, keys['plans.notes.free'], { ...req, extraItems });
    expect((await core.uow.read((r) => r.checkoutSessions.get(sessionId)))?.provider).toBe(core.payments.name);
    const file = await core.exporter.export('acme');
    const [product] = file.products ?? [];
    const yearly = {
      ...file,
      products: [{ ...product, plans: (product.plans ?? []).map((p) => (p.key === 'team' ? { ...p, interval: 'year' as const } : p)) }],
    };
    const e = await errorOf(core.importer.apply(yearly));
    expect(e.details).toEqual([{ property: 'plans.team.interval', error: expect.stringContaining('has open checkouts') }]);
  });

  it('completed after the interval was refused is sold at the interval it was priced at', async () => {
    const core = createTestCore();
    const { tenant, keys } = await seedSample(core, 'acme');
    const team = keys['plans.notes.team'];
    const req = { member: 'm@example.com', granteeId: 'm', successUrl: 'https://x.io/ok', cancelUrl: 'https://x.io/no', currency: 'USD' };
    const { sessionId } = await core.checkout.sessionLink(tenant, team, req);
    const file = await core.exporter.export('acme');
    const [product] = file.products ?? [];
    const yearly = {
      ...file,
      products: [{ ...product, plans: (product.plans ?? []).map((p) => (p.key === 'team' ? { ...p, interval: 'year' as const } : p)) }],
    };
    const e = await errorOf(core.importer.apply(yearly));
    expect(e.details).toEqual([{ property: 'plans.team.interval', error: expect.stringContaining('has open checkouts') }]);
    const { subscription } = await core.checkout.completeCheckout(sessionId);
    const end = new Date(subscription.currentPeriodStart);
    end.setUTCMonth(end.getUTCMonth() + 1);
    expect(subscription.currentPeriodEnd).toEqual(end);
  });
});

describe('a catalog import', () => {
  const withPlan = (file: Awaited<ReturnType<TestCore['exporter']['export']>>, key: string, over: Record<string, unknown>) => {
    const [product] = file.products ?? [];
    return { ...file, products: [{ ...product, plans: (product.plans ?? []).map((p) => (p.key === key ? { ...p, ...over } : p)) }] };
  };

  it('refuses a new interval in the file for a plan with running subscriptions (409 naming it) and writes nothing', async () => {
    const core = createTestCore();
    const { tenant, keys } = await seedSample(core, 'acme');
    const team = keys['plans.notes.team'];
    await buyPlan(core, team, 2);
    const file = await core.exporter.export('acme');
    for (const [over, property] of [
      [{ interval: 'year' }, 'plans.team.interval'],
      [{ length: 3 }, 'plans.team.length'],
    ] as const) {
      const e = await errorOf(core.importer.apply(withPlan(file, 'team', { ...over, displayName: 'Renamed' })));
      expect(e.code).toBe('CONFLICT');
      expect(e.details).toEqual([{ property, error: expect.stringContaining('has running subscriptions') }]);
    }
    expect(await stored(core, tenant, team)).toMatchObject({ interval: 'month', length: 1, displayName: 'Team' });
  });

  it('refuses to bill a plan saved through the API by its stored prices’ interval while subscriptions hold the plan’s (409)', async () => {
    const core = createTestCore();
    const { tenant, keys } = await seedSample(core, 'acme');
    const { plan } = await core.plans.savePlan(tenant, {
      productId: keys['products.notes'],
      name: 'Yearly',
      lineItems: [item('Base', 'year')],
    });
    // Saved before plans took their prices' interval: it still says monthly.
    await store(core, { ...plan, interval: 'month' });
    await buyPlan(core, plan.id);
    const file = await core.exporter.export('acme');
    const e = await errorOf(core.importer.apply(withPlan(file, plan.id, { interval: undefined, length: undefined })));
    expect(e.code).toBe('CONFLICT');
    expect(e.details).toEqual([{ property: `plans.${plan.id}.interval`, error: expect.stringContaining('has running subscriptions') }]);
    expect(await stored(core, tenant, plan.id)).toMatchObject({ interval: 'month' });
  });

  it('copied to live mode again, refuses a new interval of a live plan with running subscriptions (409)', async () => {
    const core = createTestCore();
    const { tenant, keys } = await seedSample(core, 'acme', true);
    const live = await core.copyToLive.copy(tenant, keys['products.notes']);
    const liveTeam = (await core.uow.run((r) => r.plans.listByProduct(live.id))).find((p) => p.key === 'team') as Plan;
    await buyPlan(core, liveTeam.id, 2);
    const file = await core.exporter.export('acme', true);
    await core.importer.apply(withPlan(file, 'team', { interval: 'year' }));
    const e = await errorOf(core.copyToLive.copy(tenant, keys['products.notes']));
    expect(e.details).toEqual([{ property: 'plans.team.interval', error: expect.stringContaining('has running subscriptions') }]);
    expect(await stored(core, { ...tenant, isTest: false }, liveTeam.id)).toMatchObject({ interval: 'month' });
  });

  it('treats a plan whose key is its own id (an earlier import’s) as saved through the API: its line items kept, its key cleared', async () => {
    const core = createTestCore();
    const { tenant, keys } = await seedSample(core, 'acme');
    const { plan } = await core.plans.savePlan(tenant, {
      productId: keys['products.notes'],
      name: 'Api',
      lineItems: [item('Base', 'month')],
    });
    await store(core, { ...plan, key: plan.id });
    await buyPlan(core, plan.id);
    const file = await core.exporter.export('acme');
    await core.importer.apply(file);
    expect(await stored(core, tenant, plan.id)).toMatchObject({ key: null, lineItems: plan.lineItems });
    // Found by its id from then on.
    await core.importer.apply(file);
    expect(await stored(core, tenant, plan.id)).toMatchObject({ key: null, lineItems: plan.lineItems });
  });

  it('refuses a plan saved through the API with prices of several intervals, naming the plan and asking for a save', async () => {
    const core = createTestCore();
    const { tenant, keys } = await seedSample(core, 'acme');
    const before = (await core.uow.run((r) => r.plans.listByProduct(keys['products.notes']))).length;
    const { plan } = await core.plans.savePlan(tenant, {
      productId: keys['products.notes'],
      name: 'Mixed',
      lineItems: [item('Base', 'month'), item('Annual', 'month')],
    });
    const annual = plan.lineItems[1];
    await store(core, { ...plan, lineItems: [plan.lineItems[0], { ...annual, prices: [{ ...annual.prices[0], interval: 'year' }] }] });
    const e = await errorOf(core.importer.apply(await core.exporter.export('acme')));
    expect(e.code).toBe('VALIDATION_FAILED');
    expect(e.details).toEqual([
      {
        property: `plans.${plan.id}`,
        error: expect.stringMatching(/mix billing intervals \(lineItems\[1\]\.prices\[0\]\.interval: .*through POST \/api\/plans\/save/),
      },
    ]);
    expect(await stored(core, tenant, plan.id)).toMatchObject({ interval: 'month', key: null });
    expect((await core.uow.run((r) => r.plans.listByProduct(keys['products.notes']))).length).toBe(before + 1);
  });
});
