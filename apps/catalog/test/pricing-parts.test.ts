import { createTestWorld, purchase, seedOrganisation, type SeededOrg, type TestWorld } from '@tollgate/runtime/testing';
import { createCatalogApp } from '../src';
import { catalogApi } from './helpers';

// Line items (#44-48), prices (#67-70), currency options (#18-19) and tiers (#102-103) as their own
// resources. Every answer is checked against its route's response schema by the response audit.
let world: TestWorld;
let org: SeededOrg;
let other: SeededOrg;
let app: ReturnType<typeof createCatalogApp>;

beforeAll(async () => {
  world = await createTestWorld();
  org = await seedOrganisation(world, 'parts-org');
  other = await seedOrganisation(world, 'parts-other');
  app = createCatalogApp(world);
});
afterAll(() => world?.close());

const api = (key = org.liveKey) => catalogApi(app, key);

const planBody = () => ({
  productId: org.keys['products.notes'],
  name: 'Parts',
  entitlements: ['edit'],
  lineItems: [
    {
      name: 'API calls',
      slug: 'api_calls',
      priceType: 'metered',
      intervalType: 'recurring',
      billingScheme: 'tiered',
      tiersMode: 'graduated',
      minQuantity: 1,
      maxQuantity: 1,
      meterSlug: 'parts_meter',
      prices: [
        {
          defaultCurrency: 'USD',
          interval: 'month',
          intervalCount: 1,
          currencyOptions: [
            {
              currency: 'USD',
              unitAmount: null,
              tiers: [
                { upTo: '1000', flatAmount: 0, unitAmount: 0 },
                { upTo: 'inf', flatAmount: null, unitAmount: 0.5 },
              ],
            },
          ],
        },
      ],
    },
    {
      name: 'Seats',
      slug: 'seats',
      priceType: 'per_seat',
      intervalType: 'recurring',
      billingScheme: 'per_unit',
      tiersMode: null,
      minQuantity: 1,
      maxQuantity: 50,
      prices: [
        { defaultCurrency: 'USD', interval: 'month', intervalCount: 1, currencyOptions: [{ currency: 'USD', unitAmount: 1000 }] },
        // A second price of the plan's one interval (its recurring prices share it: a yearly one is another plan).
        { defaultCurrency: 'USD', interval: 'month', intervalCount: 1, currencyOptions: [{ currency: 'USD', unitAmount: 900 }] },
      ],
    },
  ],
});

const savePlan = async () => {
  const planId = (await api().post('/api/plans/save', planBody()).expect(201)).body.data.id as string;
  const lineItems = (await api().get(`/api/line-items?planId=${planId}`).expect(200)).body.data as { id: string; slug: string }[];
  return { planId, metered: lineItems.find((l) => l.slug === 'api_calls')!, seats: lineItems.find((l) => l.slug === 'seats')! };
};

describe('line items, prices, currency options and tiers as resources', () => {
  it('lists plans with a one-off price by `interval=one_off` (published), and only those', async () => {
    const body = planBody();
    const oneOff = {
      ...body,
      name: 'Lifetime',
      lineItems: [
        {
          ...body.lineItems[1],
          slug: 'lifetime',
          intervalType: 'one_off',
          prices: [
            { defaultCurrency: 'USD', interval: null, intervalCount: null, currencyOptions: [{ currency: 'USD', unitAmount: 9900 }] },
          ],
        },
      ],
    };
    const id = (await api().post('/api/plans/save', oneOff).expect(201)).body.data.id;
    const monthly = (await api().post('/api/plans/save', planBody()).expect(201)).body.data.id;
    const listed = (await api().get('/api/plans?interval=one_off&limit=100').expect(200)).body.data.map((p: { id: string }) => p.id);
    expect(listed).toContain(id);
    expect(listed).not.toContain(monthly);
  });

  it('lists and reads each part with its expansions, and filters by plan, price and search', async () => {
    const { planId, metered, seats } = await savePlan();
    expect(
      (await api().get(`/api/line-items?planId=${planId}&search=seat`).expect(200)).body.data.map((l: { id: string }) => l.id),
    ).toEqual([seats.id]);
    const detail = (await api().get(`/api/line-items/${metered.id}?expand=prices`).expect(200)).body.data;
    expect(detail).toMatchObject({ planId, slug: 'api_calls', priceType: 'metered', billingScheme: 'tiered', meterId: expect.any(String) });
    const priceId = detail.prices.data[0].id;
    expect((await api().get(`/api/prices/${priceId}`).expect(200)).body.data).toMatchObject({ lineItemId: metered.id, interval: 'month' });
    const prices = (await api().get(`/api/prices?planId=${planId}`).expect(200)).body.data;
    expect(prices).toHaveLength(3);
    const options = (await api().get(`/api/currency-options?priceId=${priceId}&expand=tiers`).expect(200)).body.data;
    expect(options).toHaveLength(1);
    expect(options[0]).toMatchObject({ priceId, currency: 'USD', unitAmount: null });
    expect(options[0].tiers.data.map((t: { upTo: string }) => t.upTo)).toEqual(['1000', 'inf']);
    const option = (await api().get(`/api/currency-options/${options[0].id}`).expect(200)).body.data;
    expect(option.tiers).toBeUndefined();
    const tierId = options[0].tiers.data[1].id;
    expect((await api().get(`/api/tiers/${tierId}`).expect(200)).body.data).toMatchObject({
      upTo: 'inf',
      unitAmount: 0.5,
      currencyOptionId: options[0].id,
    });
    const tiers = (await api().get('/api/tiers?limit=100').expect(200)).body.data.map((t: { id: string }) => t.id);
    expect(tiers).toContain(tierId);
    // Pages follow cursors.
    const first = (await api().get('/api/prices?limit=1').expect(200)).body;
    expect(first.hasMore).toBe(true);
    const second = (await api().get(`/api/prices?limit=1&after=${first.nextCursor}`).expect(200)).body;
    expect(second.data[0].id).not.toBe(first.data[0].id);
    // Another organisation's parts are not its own; a part id of the wrong kind names nothing.
    expect([403, 404]).toContain((await api(other.liveKey).get(`/api/line-items/${metered.id}`)).status);
    expect([403, 404]).toContain((await api(other.liveKey).get(`/api/tiers/${tierId}`)).status);
    expect(
      (await api(other.liveKey).get('/api/line-items?limit=100').expect(200)).body.data.map((l: { id: string }) => l.id),
    ).not.toContain(metered.id);
    await api().get(`/api/prices/${metered.id}`).expect(404);
    await api(org.testKey)
      .get(`/api/line-items/${metered.id}`)
      .expect((r) => expect([403, 404]).toContain(r.status));
  });

  it('updates a line item with the published body (200, the line item), keeping its price type', async () => {
    const { seats } = await savePlan();
    const body = {
      name: 'Team seats',
      slug: 'team_seats',
      nickname: 'Seats',
      priceType: 'per_seat',
      intervalType: 'recurring',
      billingScheme: 'per_unit',
      tiersMode: null,
      isActive: true,
      minQuantity: 2,
      maxQuantity: 20,
      allowChangingQuantity: true,
      meterSlug: null,
      unitLabel: 'seat',
    };
    const updated = (await api().put(`/api/line-items/${seats.id}`, body).expect(200)).body.data;
    expect(updated).toMatchObject({
      id: seats.id,
      name: 'Team seats',
      slug: 'team_seats',
      minQuantity: 2,
      maxQuantity: 20,
      unitLabel: 'seat',
    });
    const refused = await api()
      .put(`/api/line-items/${seats.id}`, { ...body, priceType: 'flat_rate' })
      .expect(400);
    expect(refused.body.errors[0].property).toBe('priceType');
    // Metered needs its meter (the published schema requires it).
    await api()
      .put(`/api/line-items/${seats.id}`, { ...body, priceType: 'metered' })
      .expect(400);
    await api()
      .put(`/api/line-items/${seats.id}`, { ...body, minQuantity: 30 })
      .expect(400);
  });

  it('archives prices (never the last active one) and line items; deletes only what no subscription was sold with', async () => {
    const { planId, metered, seats } = await savePlan();
    const [monthly, second] = (await api().get(`/api/line-items/${seats.id}?expand=prices`).expect(200)).body.data.prices.data;
    await api().post(`/api/prices/${monthly.id}/archive`).expect(204);
    expect((await api().get(`/api/prices/${monthly.id}`).expect(200)).body.data.archivedAt).not.toBeNull();
    expect((await api().post(`/api/prices/${monthly.id}/archive`).expect(400)).body.detail).toMatch(/already archived/);
    expect((await api().post(`/api/prices/${second.id}/archive`).expect(400)).body.detail).toMatch(/last active price/);
    await api().post(`/api/line-items/${metered.id}/archive`).expect(204);
    expect((await api().get(`/api/line-items/${metered.id}`).expect(200)).body.data).toMatchObject({ isActive: false });
    await api().post(`/api/line-items/${metered.id}/archive`).expect(400);
    // A subscription sold with the seats line item keeps it.
    const sub = await purchase(world, org.keys['plans.notes.business'], 'parts-buyer');
    await world.db.uow.run(async (r) => {
      const s = await r.subscriptions.get(sub.subscription.id);
      if (s) await r.subscriptions.save({ ...s, planId, lineItemIds: [seats.id] });
    });
    await api().del(`/api/line-items/${seats.id}`).expect(409);
    await api().del(`/api/prices/${second.id}`).expect(409);
    await api().del(`/api/line-items/${metered.id}`).expect(204);
    // Gone (an id that names no record: 404 under the contract's statuses, 403 before them).
    expect([403, 404]).toContain((await api().get(`/api/line-items/${metered.id}`)).status);
  });
});
