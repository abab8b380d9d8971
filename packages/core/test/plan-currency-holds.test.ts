import { RENEWAL_RETRY_MS, type CatalogFile, type LineItemDraft, type PaymentProvider, type Plan, type Tenant } from '../src';
import { buyPlan, createTestCore, fakeFreeCheckout, rejectionOf, seedSample, type TestCore } from '../src/testing';

// A running subscription is billed in its currency: renewals, proration and plan changes read the
// plan's current amount in it, 0 when the plan has no price there. So no write of a plan's pricing
// (catalog import, plans/save, pricing parts) may take away a currency a running subscription of
// the plan (or one that added the plan) is billed in; amounts may still change in place.

const stored = (core: TestCore, id: string) => core.uow.read(async (r) => (await r.plans.get(id)) as Plan);

/** The sample file with the `business` plan's prices replaced. */
async function withBusinessPrices(core: TestCore, prices: Record<string, number>): Promise<CatalogFile> {
  const file = await core.exporter.export('acme');
  const [product] = file.products ?? [];
  return { ...file, products: [{ ...product, plans: (product.plans ?? []).map((p) => (p.key === 'business' ? { ...p, prices } : p)) }] };
}

describe('a catalog import', () => {
  it('may not drop a currency a running subscription of the plan is billed in (409 naming the plan and currency), nothing written', async () => {
    const core = createTestCore();
    const { keys } = await seedSample(core, 'acme');
    const planId = keys['plans.notes.business'];
    await buyPlan(core, planId); // billed in USD
    const before = await stored(core, planId);

    const e = await rejectionOf(core.importer.apply(await withBusinessPrices(core, { EUR: 28 })));
    expect(e.code).toBe('CONFLICT');
    expect(e.details).toEqual([
      { property: 'plans.business.prices.USD', error: expect.stringMatching(/plan Business .*running subscriptions billed in USD/) },
    ]);
    expect(await stored(core, planId)).toEqual(before);

    // Amounts may change in place, and a currency nobody is billed in may go.
    await core.importer.apply(await withBusinessPrices(core, { USD: 35 }));
    expect((await stored(core, planId)).currencies).toHaveLength(1);
  });

  it('may not drop it from a plan a running subscription added', async () => {
    const core = createTestCore();
    const { keys } = await seedSample(core, 'acme');
    const { subscription } = await buyPlan(core, keys['plans.notes.free'], 1, 'alice', 'fake');
    await core.uow.run(async (r) => {
      const s = (await r.subscriptions.get(subscription.id))!;
      const added = {
        id: 'added-1',
        planId: keys['plans.notes.business'],
        quantity: 1,
        lineItemIds: [],
        createdAt: s.createdAt,
        updatedAt: s.createdAt,
      };
      await r.subscriptions.save({ ...s, addedPlans: [added] });
    });
    await expect(core.importer.apply(await withBusinessPrices(core, { EUR: 28 }))).rejects.toMatchObject({ code: 'CONFLICT' });
  });

  it('may drop it once the subscriptions billed in it have ended', async () => {
    const core = createTestCore();
    const { tenant, keys } = await seedSample(core, 'acme');
    const { subscription } = await buyPlan(core, keys['plans.notes.business']);
    await core.subscriptions.cancel(tenant, subscription.id, 'now');
    await core.importer.apply(await withBusinessPrices(core, { EUR: 28 }));
    expect((await stored(core, keys['plans.notes.business'])).currencies).toHaveLength(1);
  });
});

describe('the catalog API', () => {
  const item = (currencies: Record<string, number>): LineItemDraft => ({
    name: 'Base',
    priceType: 'flat_rate',
    prices: [
      { interval: 'month', currencyOptions: Object.entries(currencies).map(([currency, unitAmount]) => ({ currency, unitAmount })) },
    ],
  });

  async function held(): Promise<{ core: TestCore; tenant: Tenant; plan: Plan; productId: string }> {
    const core = createTestCore();
    const org = await core.apiKeys.ensureOrganisation('acme');
    const tenant = { organisationId: org.id, isTest: false };
    const product = await core.products.createProduct(tenant, { name: 'Notes' });
    const { plan } = await core.plans.savePlan(tenant, { productId: product.id, name: 'Pro', lineItems: [item({ USD: 1000, EUR: 900 })] });
    await buyPlan(core, plan.id); // billed in USD
    return { core, tenant, plan: await stored(core, plan.id), productId: product.id };
  }

  it('plans/save may not drop the currency (409 naming lineItems), but may change its amount', async () => {
    const { core, tenant, plan, productId } = await held();
    const body = { id: plan.id, productId, name: 'Pro' };
    const e = await rejectionOf(core.plans.savePlan(tenant, { ...body, lineItems: [item({ EUR: 900 })] }));
    expect(e.code).toBe('CONFLICT');
    expect(e.details).toEqual([{ property: 'lineItems', error: expect.stringContaining('running subscriptions billed in USD') }]);
    expect(await stored(core, plan.id)).toEqual(plan);
    const { plan: cheaper } = await core.plans.savePlan(tenant, { ...body, lineItems: [item({ USD: 800 })] });
    expect(cheaper.lineItems[0].prices.find((p) => !p.archivedAt)?.currencyOptions).toMatchObject([{ currency: 'usd', unitAmount: 800 }]);
  });

  it('archiving the line item or the price that carries the currency is refused (409)', async () => {
    const { core, tenant, plan, productId } = await held();
    await expect(core.pricingParts.archiveLineItem(tenant, plan.lineItems[0].id)).rejects.toMatchObject({ code: 'CONFLICT' });
    // A line item whose next price has no USD: archiving the current one would leave it billed in EUR only.
    const two = { ...item({ USD: 1000, EUR: 900 }) };
    two.prices = [...(two.prices ?? []), { interval: 'month', currencyOptions: [{ currency: 'EUR', unitAmount: 900 }] }];
    const { plan: saved } = await core.plans.savePlan(tenant, {
      id: plan.id,
      productId,
      name: 'Pro',
      lineItems: [{ ...two, id: plan.lineItems[0].id }],
    });
    const e = await rejectionOf(core.pricingParts.archivePrice(tenant, saved.lineItems[0].prices[0].id));
    expect(e).toMatchObject({ code: 'CONFLICT', message: expect.stringContaining('billed in USD') });
    expect(await stored(core, plan.id)).toEqual(saved);
  });
});

describe('the renewal sweep', () => {
  it('does not renew for 0 a subscription whose plan lost its currency: passes it over, renews once the price is back', async () => {
    const core = createTestCore();
    const { keys } = await seedSample(core, 'acme');
    const charged: number[] = [];
    (core.payments as PaymentProvider).renewedBySweep = (_s, _p, unitAmount) => {
      charged.push(unitAmount);
      return {};
    };
    const { subscription: s } = await buyPlan(core, keys['plans.notes.business']);
    const plan = await stored(core, s.planId);
    // Data that lost the currency anyway (written behind the rules).
    await core.uow.run((r) => r.plans.save({ ...plan, currencies: plan.currencies.slice(1) }));
    core.clock.set(new Date(s.currentPeriodEnd.getTime() + 1000));
    expect(await core.sweeps.renewals()).toBe(0);
    expect(charged).toEqual([]);
    expect((await core.uow.read((r) => r.subscriptions.get(s.id)))?.currentPeriodEnd).toEqual(s.currentPeriodEnd);
    // Mended, it is renewed at its price on the next try.
    await core.uow.run((r) => r.plans.save(plan));
    core.clock.set(new Date(s.currentPeriodEnd.getTime() + 1000 + RENEWAL_RETRY_MS));
    expect(await core.sweeps.renewals()).toBe(1);
    expect(charged).toEqual([3000]);
  });

  it('renews a free-checkout subscription as before though its plan has no price in its currency (that provider charges nothing)', async () => {
    const core = createTestCore({ freeCheckout: fakeFreeCheckout() });
    const { keys } = await seedSample(core, 'acme');
    const { subscription: s } = await buyPlan(core, keys['plans.notes.business'], 1, 'alice', 'none');
    const plan = await stored(core, s.planId);
    await core.uow.run((r) => r.plans.save({ ...plan, currencies: plan.currencies.slice(1) }));
    core.clock.set(new Date(s.currentPeriodEnd.getTime() + 1000));
    expect(await core.sweeps.renewals()).toBe(1);
  });
});
