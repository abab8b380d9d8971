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
