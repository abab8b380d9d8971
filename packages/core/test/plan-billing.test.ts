import type { Interval, LineItemDraft, Tenant, TierDraft } from '../src';
import { buyPlan, createTestCore, rejectionOf, seedSample, type TestCore } from '../src/testing';

// How `POST /api/plans/save` (PlanAdmin.savePlan) and catalog files build a plan from line items:
// the plan bills by its recurring prices' interval, and tier bounds ascend (an audit found both).

async function setup(): Promise<{ core: TestCore; tenant: Tenant; productId: string }> {
  const core = createTestCore();
  const org = await core.apiKeys.ensureOrganisation('acme');
  const tenant = { organisationId: org.id, isTest: false };
  const product = await core.products.createProduct(tenant, { name: 'Notes' });
  return { core, tenant, productId: product.id };
}

const seats = (
  prices: { interval: Interval | null; intervalCount?: number; unitAmount?: number }[],
  over: Partial<LineItemDraft> = {},
): LineItemDraft => ({
  name: 'Seats',
  priceType: 'per_seat',
  minQuantity: 1,
  maxQuantity: 10,
  prices: prices.map((p) => ({
    interval: p.interval,
    intervalCount: p.intervalCount,
    currencyOptions: [{ currency: 'USD', unitAmount: p.unitAmount ?? 1000 }],
  })),
  ...over,
});

const tiered = (tiers: TierDraft[]): LineItemDraft => ({
  name: 'API calls',
  priceType: 'metered',
  billingScheme: 'tiered',
  tiersMode: 'graduated',
  meterSlug: 'calls',
  prices: [{ interval: 'month', currencyOptions: [{ currency: 'USD', tiers }] }],
});

/** The domain error a promise rejects with. */
const errorOf = rejectionOf;

describe('a plan saved with line items bills by its recurring prices', () => {
  it('takes its interval and length from them, and keeps what it had when none recurs', async () => {
    const { core, tenant, productId } = await setup();
    const yearly = await core.plans.savePlan(tenant, {
      productId,
      name: 'Yearly',
      lineItems: [seats([{ interval: 'year', unitAmount: 120_000 }])],
    });
    expect(yearly.plan).toMatchObject({ interval: 'year', length: 1 });
    const quarterly = await core.plans.savePlan(tenant, {
      productId,
      name: 'Quarterly',
      lineItems: [seats([{ interval: 'month', intervalCount: 3 }])],
    });
    expect(quarterly.plan).toMatchObject({ interval: 'month', length: 3 });
    // One-off prices only (and metered ones without an interval): the plan keeps what it had.
    const lifetime = await core.plans.savePlan(tenant, {
      id: quarterly.plan.id,
      name: 'Quarterly',
      lineItems: [seats([{ interval: null }], { intervalType: 'one_off' })],
    });
    expect(lifetime.plan).toMatchObject({ interval: 'month', length: 3 });
    // A one-off line item and an archived price do not take part.
    const mixed = await core.plans.savePlan(tenant, {
      productId,
      name: 'Mixed',
      lineItems: [
        seats([{ interval: 'week' }], { intervalType: 'one_off', name: 'Setup' }),
        {
          ...seats([{ interval: 'month' }, { interval: 'year' }]),
          prices: [
            { interval: 'month', archivedAt: '2020-01-01T00:00:00.000Z', currencyOptions: [{ currency: 'USD', unitAmount: 1 }] },
            { interval: 'year', currencyOptions: [{ currency: 'USD', unitAmount: 9000 }] },
          ],
        },
      ],
    });
    expect(mixed.plan).toMatchObject({ interval: 'year', length: 1 });
  });

  it('sells a yearly plan for a year: the purchase’s period ends one year after it starts', async () => {
    const { core, tenant, productId } = await setup();
    const { plan } = await core.plans.savePlan(tenant, {
      productId,
      name: 'Yearly',
      lineItems: [seats([{ interval: 'year', unitAmount: 120_000 }])],
    });
    const { subscription } = await buyPlan(core, plan.id);
    const end = new Date(subscription.currentPeriodStart);
    end.setUTCFullYear(end.getUTCFullYear() + 1);
    expect(subscription.currentPeriodEnd).toEqual(end);
  });

  it('refuses recurring prices of different intervals with a 400 naming the price, and writes nothing', async () => {
    const { core, tenant, productId } = await setup();
    for (const [lineItems, property] of [
      [[seats([{ interval: 'month' }, { interval: 'year' }])], 'lineItems[0].prices[1].interval'],
      [
        [seats([{ interval: 'month' }]), seats([{ interval: 'month', intervalCount: 3 }], { name: 'Base' })],
        'lineItems[1].prices[0].intervalCount',
      ],
    ] as const) {
      const e = await errorOf(
        core.plans.savePlan(tenant, { productId, name: 'Bad', entitlements: ['new-cap'], lineItems: [...lineItems] }),
      );
      expect(e.code).toBe('VALIDATION_FAILED');
      expect(e.details).toEqual([{ property, error: expect.stringContaining('make one plan per interval') }]);
    }
    expect((await core.plans.listPlans(tenant, { limit: 10 })).page.items).toEqual([]);
    expect((await core.products.getProduct(tenant, productId)).capabilities).toEqual([]);
  });

  it('refuses to change the interval of a plan with running subscriptions (409 naming the price); same interval or no running one: saved', async () => {
    const { core, tenant, productId } = await setup();
    const { plan } = await core.plans.savePlan(tenant, { productId, name: 'Monthly', lineItems: [seats([{ interval: 'month' }])] });
    const { subscription } = await buyPlan(core, plan.id);
    const e = await errorOf(core.plans.savePlan(tenant, { id: plan.id, name: 'Monthly', lineItems: [seats([{ interval: 'year' }])] }));
    expect(e.code).toBe('CONFLICT');
    expect(e.details).toEqual([{ property: 'lineItems[0].prices[0].interval', error: expect.stringContaining('running subscriptions') }]);
    expect((await core.plans.getPlan(tenant, plan.id)).plan).toMatchObject({ interval: 'month', length: 1, lineItems: plan.lineItems });
    // The same interval at another amount is fine.
    const repriced = await core.plans.savePlan(tenant, {
      id: plan.id,
      name: 'Monthly',
      lineItems: [seats([{ interval: 'month', unitAmount: 1200 }])],
    });
    expect(repriced.plan).toMatchObject({ interval: 'month', length: 1 });
    // Once its subscriptions have ended, the plan may take another interval.
    await core.subscriptions.cancel(tenant, subscription.id, 'now');
    const yearly = await core.plans.savePlan(tenant, { id: plan.id, name: 'Monthly', lineItems: [seats([{ interval: 'year' }])] });
    expect(yearly.plan).toMatchObject({ interval: 'year', length: 1 });
  });
});

describe('tier bounds of a saved plan', () => {
  it('refuses bounds that do not ascend, a bound of 0, or inf before the last tier, naming the bound, and writes nothing', async () => {
    const { core, tenant, productId } = await setup();
    const at = (t: number) => `lineItems[0].prices[0].currencyOptions[0].tiers[${t}].upTo`;
    for (const [tiers, property, message] of [
      // The audit's case: 500 units would bill 500 x 1 and skip the 100 tier.
      [
        [
          { upTo: '1000', unitAmount: 1 },
          { upTo: '100', unitAmount: 5 },
          { upTo: 'inf', unitAmount: 10 },
        ],
        at(1),
        "must be greater than the previous tier's upTo (1000): bounds ascend",
      ],
      [
        [
          { upTo: '100', unitAmount: 1 },
          { upTo: '100', unitAmount: 5 },
        ],
        at(1),
        "must be greater than the previous tier's upTo (100): bounds ascend",
      ],
      [
        [
          { upTo: 'inf', unitAmount: 1 },
          { upTo: '100', unitAmount: 5 },
        ],
        at(0),
        'only the last tier may be inf',
      ],
      [
        [
          { upTo: '0', unitAmount: 1 },
          { upTo: 'inf', unitAmount: 5 },
        ],
        at(0),
        'must be greater than 0',
      ],
    ] as const) {
      const e = await errorOf(core.plans.savePlan(tenant, { productId, name: 'Bad', lineItems: [tiered([...tiers])] }));
      expect(e.details).toEqual([{ property, error: message }]);
    }
    expect((await core.plans.listPlans(tenant, { limit: 10 })).page.items).toEqual([]);
    // Ascending bounds save; the last tier may keep a bound (billed open-ended, as before).
    const { plan } = await core.plans.savePlan(tenant, {
      productId,
      name: 'Good',
      lineItems: [
        tiered([
          { upTo: '100', unitAmount: 1 },
          { upTo: '1000', unitAmount: 5 },
        ]),
      ],
    });
    expect(plan.lineItems[0].prices[0].currencyOptions[0].tiers.map((t) => t.upTo)).toEqual(['100', '1000']);
  });
});

describe('catalog files', () => {
  it('refuse usage tier bounds that do not ascend, naming the bound', async () => {
    const core = createTestCore();
    const { tenant } = await seedSample(core, 'acme');
    const file = await core.exporter.export('acme');
    const [product] = file.products ?? [];
    const plan = { ...(product.plans ?? []).find((p) => p.key === 'metered-pro')! };
    expect(plan).toBeDefined();
    plan.usage = [
      {
        meter: 'calls',
        tiersMode: 'graduated',
        tiers: {
          USD: [
            { upTo: 1000, unitAmount: 0.01 },
            { upTo: 100, unitAmount: 0.05 },
            { upTo: 'inf', unitAmount: 0.1 },
          ],
        },
      },
    ];
    const bad = { ...file, products: [{ ...product, plans: (product.plans ?? []).map((p) => (p.key === plan.key ? plan : p)) }] };
    const e = await errorOf(core.importer.apply(bad));
    expect(e.details).toEqual([
      {
        property: 'plans.metered-pro.usage[0].tiers.USD[1].upTo',
        error: "must be greater than the previous tier's upTo (1000): bounds ascend",
      },
    ]);
    expect((await core.plans.listPlans(tenant, { limit: 50 })).page.items.find((p) => p.key === 'metered-pro')?.lineItems).not.toEqual(
      expect.arrayContaining([expect.objectContaining({ slug: 'calls' })]),
    );
  });

  it('keep a plan saved through the API on its prices’ interval: taken when the file names none, a different one refused', async () => {
    const core = createTestCore();
    const { tenant, keys } = await seedSample(core, 'acme');
    const { plan } = await core.plans.savePlan(tenant, {
      productId: keys['products.notes'],
      name: 'Yearly',
      lineItems: [seats([{ interval: 'year', unitAmount: 120_000 }])],
    });
    const file = await core.exporter.export('acme');
    const [product] = file.products ?? [];
    const withPlan = (over: Record<string, unknown>) => ({
      ...file,
      products: [{ ...product, plans: (product.plans ?? []).map((p) => (p.key === plan.id ? { ...p, ...over } : p)) }],
    });
    // The export names the plan's interval; without it the import keeps the prices' one.
    expect((product.plans ?? []).find((p) => p.key === plan.id)).toMatchObject({ interval: 'year', length: 1 });
    await core.importer.apply(withPlan({ interval: undefined, length: undefined }));
    expect((await core.plans.getPlan(tenant, plan.id)).plan).toMatchObject({ interval: 'year', length: 1 });
    // Imported again, it is still found by its id and keeps its pricing tree (it was flattened to none).
    await core.importer.apply(withPlan({}));
    expect((await core.plans.getPlan(tenant, plan.id)).plan).toMatchObject({ key: null, interval: 'year', lineItems: plan.lineItems });
    const e = await errorOf(core.importer.apply(withPlan({ interval: 'month' })));
    expect(e.details).toEqual([{ property: `plans.${plan.id}.interval`, error: expect.stringContaining('recur every 1 year(s)') }]);
    expect((await core.plans.getPlan(tenant, plan.id)).plan).toMatchObject({ interval: 'year', length: 1 });
  });
});
