import { createTestWorld, purchase, seedOrganisation, type SeededOrg, type TestWorld } from '@tollgate/runtime/testing';
import { createCatalogApp } from '../src';
import { catalogApi } from './helpers';

let world: TestWorld;
let org: SeededOrg;
let app: ReturnType<typeof createCatalogApp>;

beforeAll(async () => {
  world = await createTestWorld();
  org = await seedOrganisation(world, 'usage-plans-org');
  app = createCatalogApp(world);
});
afterAll(() => world?.close());

// Every answer is checked against its route's response schema by the response audit (jest.after-env.js).
const api = () => catalogApi(app, org.liveKey);

const meteredItem = (over: Record<string, unknown> = {}) => ({
  name: 'API calls',
  slug: 'api_calls',
  priceType: 'metered',
  intervalType: 'recurring',
  billingScheme: 'per_unit',
  tiersMode: null,
  minQuantity: 1,
  maxQuantity: 1,
  meterSlug: 'calls',
  unitLabel: 'call',
  allowance: 100,
  maxUsage: 1000,
  minUsage: 10,
  rollover: { upTo: 50 },
  prices: [{ defaultCurrency: 'usd', interval: 'month', intervalCount: 1, currencyOptions: [{ currency: 'usd', unitAmount: 2 }] }],
  ...over,
});

describe('usage plans through POST /api/plans/save', () => {
  it('saves allowance, cap, minimum and rollover on a metered line item, on the organisation meter, and buying grants the allowance', async () => {
    const res = await api()
      .post('/api/plans/save', { productId: org.keys['products.notes'], name: 'Usage', entitlements: ['edit'], lineItems: [meteredItem()] })
      .expect(201);
    const [item] = res.body.data.lineItems;
    expect(item.usage).toEqual({ allowance: 100, maxUsage: 1000, minUsage: 10, rollover: { upTo: 50 } });
    expect(item.meter).toMatchObject({ slug: 'calls' });
    const meters = (await api().get('/api/meters').expect(200)).body.data;
    expect(meters).toEqual([expect.objectContaining({ id: item.meter.id, slug: 'calls', unitLabel: 'call' })]);

    const { subscription } = await purchase(world, res.body.data.id, 'usage-buyer');
    const balances = (await api().get(`/api/balances?owner=${subscription.id}`).expect(200)).body.data;
    expect(balances).toEqual([
      expect.objectContaining({
        meterSlug: 'calls',
        granted: 100,
        used: 0,
        remaining: 100,
        periodEnd: subscription.currentPeriodEnd.toISOString(),
      }),
    ]);
    // The cap holds over the grants: at most 1000 a period.
    await api().post('/api/credits/grants', { owner: subscription.id, meterSlug: 'calls', amount: 5000 }).expect(201);
    const over = await api().post('/api/usage/consume', { owner: subscription.id, meterSlug: 'calls', quantity: 1001 }).expect(200);
    expect(over.body.data).toMatchObject({ allowed: false, remaining: 1000 });

    // An update without terms keeps them; `rollover: 'all'` replaces the rule.
    const again = await api()
      .post('/api/plans/save', {
        id: res.body.data.id,
        productId: org.keys['products.notes'],
        name: 'Usage',
        entitlements: ['edit'],
        lineItems: [{ ...meteredItem({ allowance: undefined, maxUsage: undefined, minUsage: undefined, rollover: 'all' }), id: item.id }],
      })
      .expect(200);
    expect(again.body.data.lineItems[0].usage).toEqual({ allowance: 100, maxUsage: 1000, minUsage: 10, rollover: 'all' });
  });

  it('on a meter with decimal places takes terms and tier bounds in its decimals (numbers or strings), exactly; more places are a 400', async () => {
    const productId = org.keys['products.notes'];
    await api().post('/api/meters', { slug: 'gpu_hours', name: 'GPU hours', unitLabel: 'hour', scale: 2 }).expect(201);
    const tiered = (over: Record<string, unknown> = {}, upTo = '2.5') =>
      meteredItem({
        name: 'GPU',
        slug: 'gpu',
        meterSlug: 'gpu_hours',
        billingScheme: 'tiered',
        tiersMode: 'graduated',
        allowance: 0.5,
        maxUsage: '100.25',
        minUsage: 1.5,
        rollover: { upTo: '0.05' },
        prices: [
          {
            defaultCurrency: 'usd',
            interval: 'month',
            intervalCount: 1,
            currencyOptions: [
              {
                currency: 'usd',
                unitAmount: null,
                tiers: [
                  { upTo, unitAmount: 40 },
                  { upTo: 'inf', unitAmount: 10 },
                ],
              },
            ],
          },
        ],
        ...over,
      });
    const res = await api()
      .post('/api/plans/save', { productId, name: 'GPU', entitlements: ['edit'], lineItems: [tiered()] })
      .expect(201);
    const [item] = res.body.data.lineItems;
    expect(item.usage).toEqual({ allowance: 0.5, maxUsage: 100.25, minUsage: 1.5, rollover: { upTo: 0.05 } });
    expect(item.prices[0].currencyOptions[0].tiers.map((t: { upTo: string }) => t.upTo)).toEqual(['2.5', 'inf']);
    const { subscription } = await purchase(world, res.body.data.id, 'gpu-buyer');
    const balances = (await api().get(`/api/balances?owner=${subscription.id}`).expect(200)).body.data;
    expect(balances).toEqual([expect.objectContaining({ meterSlug: 'gpu_hours', granted: 0.5, used: 0, remaining: 0.5 })]);

    // More places than the meter's scale, in a term or a bound: a 400 naming the field, nothing saved.
    for (const [over, upTo, property] of [
      [{ allowance: 0.125 }, '2.5', 'lineItems[0].allowance'],
      [{ maxUsage: '1.001' }, '2.5', 'lineItems[0].maxUsage'],
      [{ rollover: { upTo: 0.001 } }, '2.5', 'lineItems[0].rollover.upTo'],
      [{}, '2.505', 'lineItems[0].prices[0].currencyOptions[0].tiers[0].upTo'],
    ] as const) {
      const bad = await api()
        .post('/api/plans/save', { productId, name: 'Bad GPU', lineItems: [tiered(over, upTo)] })
        .expect(400);
      expect(bad.body.errors).toEqual([{ property, message: "must have at most 2 decimal places (the meter's scale)" }]);
    }
    // On a whole-unit meter a fraction stays a 400 naming the field.
    const whole = await api()
      .post('/api/plans/save', { productId, name: 'Bad', lineItems: [meteredItem({ allowance: 1.5 })] })
      .expect(400);
    expect(whole.body.errors).toEqual([
      expect.objectContaining({ property: 'lineItems[0].allowance', message: expect.stringContaining('whole number') }),
    ]);
    const wholeTier = await api()
      .post('/api/plans/save', {
        productId,
        name: 'Bad',
        lineItems: [tiered({ meterSlug: 'calls', allowance: 1, maxUsage: 100, minUsage: 1, rollover: 'none' })],
      })
      .expect(400);
    expect(wholeTier.body.errors).toEqual([
      { property: 'lineItems[0].prices[0].currencyOptions[0].tiers[0].upTo', message: 'must be a whole number of units or inf' },
    ]);
    const plans = (await api().get(`/api/plans?productId=${productId}`).expect(200)).body.data as { name: string }[];
    expect(plans.filter((p) => p.name.startsWith('Bad'))).toEqual([]);

    // A line item moved to a meter of another scale keeps its terms' units: exactly, or a 400 naming the term to give again.
    const moved = (meterSlug: string, over: Record<string, unknown> = {}) =>
      api().post('/api/plans/save', {
        id: res.body.data.id,
        productId,
        name: 'GPU',
        entitlements: ['edit'],
        lineItems: [
          {
            ...meteredItem({ allowance: undefined, maxUsage: undefined, minUsage: undefined, rollover: undefined }),
            id: item.id,
            meterSlug,
            ...over,
          },
        ],
      });
    expect((await moved('calls')).status).toBe(400);
    expect((await moved('calls')).body.errors).toEqual([
      { property: 'lineItems[0].allowance', message: "has more decimal places than the meter's scale (0): give it again" },
    ]);
    const toWhole = await moved('calls', { allowance: 1, maxUsage: 100, minUsage: 2, rollover: 'all' }).expect(200);
    expect(toWhole.body.data.lineItems[0].usage).toEqual({ allowance: 1, maxUsage: 100, minUsage: 2, rollover: 'all' });
    const back = await moved('gpu_hours').expect(200);
    expect(back.body.data.lineItems[0].usage).toEqual({ allowance: 1, maxUsage: 100, minUsage: 2, rollover: 'all' });
    const { subscription: moverSub } = await purchase(world, res.body.data.id, 'gpu-mover');
    const moverBalance = (await api().get(`/api/balances?owner=${moverSub.id}`).expect(200)).body.data;
    expect(moverBalance).toEqual([expect.objectContaining({ meterSlug: 'gpu_hours', granted: 1, remaining: 1 })]);
    // Moved to a slug no meter has yet: a new whole-unit meter; the decimal one stays as it was (not renamed).
    const fresh = await moved('fresh_hours', { allowance: 3, maxUsage: 100, minUsage: 2, rollover: 'all' }).expect(200);
    expect(fresh.body.data.lineItems[0].usage).toEqual({ allowance: 3, maxUsage: 100, minUsage: 2, rollover: 'all' });
    const meters = (await api().get('/api/meters').expect(200)).body.data as { slug: string; scale?: number }[];
    expect(
      meters
        .filter((m) => ['gpu_hours', 'fresh_hours'].includes(m.slug))
        .map((m) => [m.slug, m.scale ?? 0])
        .sort(),
    ).toEqual([
      ['fresh_hours', 0],
      ['gpu_hours', 2],
    ]);
    const { subscription: freshSub } = await purchase(world, res.body.data.id, 'gpu-fresh');
    const freshBalance = (await api().get(`/api/balances?owner=${freshSub.id}`).expect(200)).body.data;
    expect(freshBalance).toEqual([expect.objectContaining({ meterSlug: 'fresh_hours', granted: 3, remaining: 3 })]);
  });

  it('accepts every body the published SavePlanRequestSchema allows: members it does not name, no prices, string ids', async () => {
    const res = await api()
      .post('/api/plans/save', {
        productId: org.keys['products.notes'],
        name: 'Published',
        entitlements: [],
        lineItems: [
          {
            name: 'Base',
            slug: 'base',
            nickname: '',
            priceType: 'flat_rate',
            intervalType: 'recurring',
            billingScheme: 'flat_rate',
            tiersMode: null,
            minQuantity: 1,
            maxQuantity: 1,
            somethingNewer: { the: 'published LineItemInput is not strict' },
          },
        ],
      })
      .expect(201);
    expect(res.body.data.lineItems).toEqual([expect.objectContaining({ slug: 'base', prices: [] })]);
    // An id that names nothing of this plan is a 400 naming it, not a schema refusal of its form.
    const bad = await api()
      .post('/api/plans/save', {
        id: res.body.data.id,
        productId: org.keys['products.notes'],
        name: 'Published',
        entitlements: [],
        lineItems: [{ id: 'li_not_a_uuid', name: 'Base', priceType: 'flat_rate' }],
      })
      .expect(400);
    expect(bad.body.errors).toEqual([expect.objectContaining({ property: 'lineItems[0].id' })]);
  });

  it("a plan saved here moved to another (items' replace) bills its usage at the move and starts the other's allowance", async () => {
    const productId = org.keys['products.notes'];
    const save = async (name: string, item: Record<string, unknown>) =>
      (
        await api()
          .post('/api/plans/save', { productId, name, entitlements: ['edit'], lineItems: [meteredItem(item)] })
          .expect(201)
      ).body.data.id as string;
    const small = await save('Calls small', { meterSlug: 'moved_calls', slug: 'moved_small', minUsage: 0 });
    const large = await save('Calls large', { meterSlug: 'moved_calls', slug: 'moved_large', allowance: 500, minUsage: 0 });
    const { subscription } = await purchase(world, small, 'mover');
    const owner = subscription.id;
    await api().post('/api/usage/record', { owner, meterSlug: 'moved_calls', increment: 130 }).expect(204);
    const invoices = async () => (await api().get(`/api/subscriptions/${owner}/invoices`).expect(200)).body.data;
    const before = (await invoices()).length;
    world.clock.set(new Date(world.clock.now().getTime() + 86_400_000));
    await api()
      .put(`/api/subscriptions/${owner}/items`, { items: [{ planId: small, action: 'replace', newPlanId: large }], proration: 'none' })
      .expect(204);
    // The 130 used closed at the move, 30 over the 100 included at 2 cents: on an invoice of its own.
    const final = (await api().get(`/api/usage-records?owner=${owner}&meterSlug=moved_calls&status=final`).expect(200)).body.data;
    expect(final).toEqual([expect.objectContaining({ status: 'final', count: 130 })]);
    const after = await invoices();
    expect(after.length).toBe(before + 1);
    expect(after.at(-1).lines.data).toEqual([expect.objectContaining({ quantity: 30, amount: 60, description: '30 call × API calls' })]);
    // The large plan's allowance and cap from the move.
    const balances = (await api().get(`/api/balances?owner=${owner}`).expect(200)).body.data;
    expect(balances).toEqual([expect.objectContaining({ meterSlug: 'moved_calls', granted: 500, used: 0 })]);
  });

  it('refuses usage terms on a line item that is not metered, and bad terms, naming the field', async () => {
    const productId = org.keys['products.notes'];
    const flat = await api()
      .post('/api/plans/save', { productId, name: 'Flat', lineItems: [{ name: 'Base', priceType: 'flat_rate', allowance: 5 }] })
      .expect(400);
    expect(flat.body.errors).toEqual([expect.objectContaining({ property: 'lineItems[0].allowance' })]);
    const inverted = await api()
      .post('/api/plans/save', { productId, name: 'Bad', lineItems: [meteredItem({ minUsage: 2000 })] })
      .expect(400);
    expect(inverted.body.errors).toEqual([expect.objectContaining({ property: 'lineItems[0].minUsage' })]);
    const negative = await api()
      .post('/api/plans/save', { productId, name: 'Bad', lineItems: [meteredItem({ allowance: -1 })] })
      .expect(400);
    expect(JSON.stringify(negative.body.errors)).toContain('allowance');
  });
});
