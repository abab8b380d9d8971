import request from 'supertest';
import YAML from 'yaml';
import { createTestWorld, seedOrganisation, type SeededOrg, type TestWorld } from '@tollgate/runtime/testing';
import { createCatalogApp } from '../src';
import { catalogApi } from './helpers';

// `POST /api/plans/save` builds a plan that bills by its recurring prices' interval, and takes only
// ascending tier bounds (an audit found a yearly price charged monthly, and tiers silently skipped).
let world: TestWorld;
let org: SeededOrg;
let app: ReturnType<typeof createCatalogApp>;

beforeAll(async () => {
  world = await createTestWorld();
  org = await seedOrganisation(world, 'plan-billing');
  app = createCatalogApp(world);
});
afterAll(() => world?.close());

// Every answer is checked against its route's response schema by the response audit (jest.after-env.js).
const api = () => catalogApi(app, org.liveKey);

const seats = (prices: { interval: string | null; intervalCount?: number; unitAmount: number }[]) => ({
  name: 'Seats',
  slug: 'seats',
  priceType: 'per_seat',
  intervalType: 'recurring',
  billingScheme: 'per_unit',
  tiersMode: null,
  minQuantity: 1,
  maxQuantity: 20,
  prices: prices.map((p) => ({
    defaultCurrency: 'USD',
    interval: p.interval,
    intervalCount: p.intervalCount ?? 1,
    currencyOptions: [{ currency: 'USD', unitAmount: p.unitAmount }],
  })),
});

const planCount = async (productId: string) => (await api().get(`/api/plans?productId=${productId}`).expect(200)).body.data.length;

it('sells a plan saved with one yearly price for a year through the sandbox (period end one year on), and refuses a monthly checkout', async () => {
  const product = (await api().post('/api/products', { name: 'Yearly' }).expect(201)).body.data;
  const plan = (
    await api()
      .post('/api/plans/save', {
        productId: product.id,
        name: 'Yearly Pro',
        entitlements: ['export'],
        lineItems: [seats([{ interval: 'year', unitAmount: 120_000 }])],
      })
      .expect(201)
  ).body.data;
  const checkout = (interval: string) =>
    api().post('/api/checkout', {
      planId: plan.id,
      owner: 'yearly-owner@example.com',
      grantee: 'yearly-user',
      interval,
      intervalCount: 1,
      currency: 'USD',
      metadata: { seats: { quantity: 1 } },
      successUrl: 'https://vendor.example.com/ok',
      cancelUrl: 'https://vendor.example.com/no',
    });
  // Billed by the year: a monthly checkout is refused (it was the only one taken).
  expect((await checkout('month').expect(400)).body.errors).toEqual([expect.objectContaining({ property: 'interval' })]);
  const link = (await checkout('year').expect(200)).body.data.url;
  await request(app)
    .post(`${new URL(link).pathname}/pay`)
    .type('form')
    .send({})
    .expect(303);
  const [listed] = (await api().get('/api/subscriptions?owner=yearly-owner@example.com').expect(200)).body.data;
  const subscription = await world.db.uow.run((r) => r.subscriptions.get(listed.id));
  const end = new Date(subscription!.currentPeriodStart);
  end.setUTCFullYear(end.getUTCFullYear() + 1);
  expect(subscription!.currentPeriodEnd).toEqual(end);
});

it('refuses recurring prices of different intervals with a 400 naming the price, and saves nothing', async () => {
  const product = (await api().post('/api/products', { name: 'Mixed' }).expect(201)).body.data;
  const res = await api()
    .post('/api/plans/save', {
      productId: product.id,
      name: 'Mixed',
      lineItems: [
        seats([
          { interval: 'month', unitAmount: 1000 },
          { interval: 'year', unitAmount: 10_000 },
        ]),
      ],
    })
    .expect(400);
  expect(res.body.errors).toEqual([
    {
      property: 'lineItems[0].prices[1].interval',
      message: expect.stringContaining("a plan's recurring prices share one billing interval"),
    },
  ]);
  expect(await planCount(product.id)).toBe(0);
});

it('refuses a new interval for a plan with running subscriptions with a 409 naming the price', async () => {
  const product = (await api().post('/api/products', { name: 'Held' }).expect(201)).body.data;
  const body = { productId: product.id, name: 'Held', lineItems: [seats([{ interval: 'month', unitAmount: 1000 }])] };
  const plan = (await api().post('/api/plans/save', body).expect(201)).body.data;
  await world.core.checkout.completePurchase({
    planId: plan.id,
    member: 'held@example.com',
    email: 'held@example.com',
    granteeId: 'held-user',
    quantity: 1,
    currency: 'USD',
    paymentProvider: 'sandbox',
    paymentSubscriptionId: null,
    paymentCustomerId: null,
  });
  const res = await api()
    .post('/api/plans/save', { ...body, id: plan.id, lineItems: [seats([{ interval: 'year', unitAmount: 10_000 }])] })
    .expect(409);
  expect(res.body.errors).toEqual([
    { property: 'lineItems[0].prices[0].interval', message: expect.stringContaining('has running subscriptions') },
  ]);
});

it('refuses tier bounds that do not ascend, or inf before the last tier, with a 400 naming the bound, and saves nothing', async () => {
  const product = (await api().post('/api/products', { name: 'Tiers' }).expect(201)).body.data;
  const tiered = (tiers: { upTo: string; unitAmount: number }[]) => ({
    productId: product.id,
    name: 'Tiered',
    lineItems: [
      {
        ...seats([{ interval: 'month', unitAmount: 0 }]),
        billingScheme: 'tiered',
        tiersMode: 'graduated',
        prices: [{ defaultCurrency: 'USD', interval: 'month', intervalCount: 1, currencyOptions: [{ currency: 'USD', tiers }] }],
      },
    ],
  });
  const bound = (t: number) => `lineItems[0].prices[0].currencyOptions[0].tiers[${t}].upTo`;
  // The audit's case: 500 seats billed 500 x 1, the 100 tier skipped.
  const skipped = await api()
    .post(
      '/api/plans/save',
      tiered([
        { upTo: '1000', unitAmount: 1 },
        { upTo: '100', unitAmount: 5 },
        { upTo: 'inf', unitAmount: 10 },
      ]),
    )
    .expect(400);
  expect(skipped.body.errors).toEqual([
    { property: bound(1), message: "must be greater than the previous tier's upTo (1000): bounds ascend" },
  ]);
  const early = await api()
    .post(
      '/api/plans/save',
      tiered([
        { upTo: 'inf', unitAmount: 1 },
        { upTo: '100', unitAmount: 5 },
      ]),
    )
    .expect(400);
  expect(early.body.errors).toEqual([{ property: bound(0), message: 'only the last tier may be inf' }]);
  expect(await planCount(product.id)).toBe(0);
});

// Every other write of a plan's pricing follows the same rules (a review of the change above).
const buy = (planId: string, member: string, quantity = 1) =>
  world.core.checkout.completePurchase({
    planId,
    member,
    email: member,
    granteeId: member,
    quantity,
    currency: 'USD',
    paymentProvider: 'sandbox',
    paymentSubscriptionId: null,
    paymentCustomerId: null,
  });

it('PUT /api/line-items/:id refuses to make a one-off line item recurring at another interval (400), or on a subscribed plan (409)', async () => {
  const product = (await api().post('/api/products', { name: 'Parts' }).expect(201)).body.data;
  const setup = { ...seats([{ interval: 'year', unitAmount: 5000 }]), name: 'Setup', slug: 'setup', intervalType: 'one_off' };
  const plan = (
    await api()
      .post('/api/plans/save', {
        productId: product.id,
        name: 'Parts',
        lineItems: [seats([{ interval: 'month', unitAmount: 1000 }]), setup],
      })
      .expect(201)
  ).body.data;
  const setupItem = (await api().get(`/api/line-items?planId=${plan.id}`).expect(200)).body.data.find(
    (li: { slug: string }) => li.slug === 'setup',
  );
  const put = { ...setup, prices: undefined, intervalType: 'recurring' };
  const mixed = await api().put(`/api/line-items/${setupItem.id}`, put).expect(400);
  expect(mixed.body.errors).toEqual([{ property: 'intervalType', message: expect.stringContaining('would mix billing intervals') }]);

  // A plan of that one-off line item only, subscribed: the interval it would take is refused.
  const once = (
    await api()
      .post('/api/plans/save', { productId: product.id, name: 'Once', lineItems: [setup] })
      .expect(201)
  ).body.data;
  await buy(once.id, 'parts@example.com');
  const [onceItem] = (await api().get(`/api/line-items?planId=${once.id}`).expect(200)).body.data;
  const held = await api().put(`/api/line-items/${onceItem.id}`, put).expect(409);
  expect(held.body.errors).toEqual([{ property: 'intervalType', message: expect.stringContaining('has running subscriptions') }]);
  expect((await api().get(`/api/plans/${once.id}`).expect(200)).body.data).toMatchObject({ id: once.id });
  const stored = await world.db.uow.run((r) => r.plans.get(once.id));
  expect(stored).toMatchObject({ interval: 'month', lineItems: [expect.objectContaining({ intervalType: 'one_off' })] });
});

it('POST /api/products/import refuses a new interval for a plan with running subscriptions with a 409 naming it', async () => {
  const seeded = await seedOrganisation(world, 'plan-billing-import');
  const own = catalogApi(app, seeded.liveKey);
  const productId = seeded.keys['products.notes'];
  await buy(seeded.keys['plans.notes.team'], 'team@example.com', 2);
  const file = YAML.parse((await own.get(`/api/products/export/${productId}`).expect(200)).text);
  file.products[0].plans = file.products[0].plans.map((p: { key: string }) => (p.key === 'team' ? { ...p, interval: 'year' } : p));
  const res = await own.post('/api/products/import', file).expect(409);
  expect(res.body.errors).toEqual([{ property: 'plans.team.interval', message: expect.stringContaining('has running subscriptions') }]);
});

it('refuses to sell a plan it would not bill as its line items price it (a base fee beside seats, a one-off fee): checkout, added plan and plan change are 400s, and nothing changes', async () => {
  const product = (await api().post('/api/products', { name: 'Fees' }).expect(201)).body.data;
  const save = async (name: string, lineItems: object[]) =>
    (await api().post('/api/plans/save', { productId: product.id, name, lineItems }).expect(201)).body.data.id as string;
  const fee = (slug: string, interval: string | null, unitAmount: number) => ({
    ...seats([{ interval, unitAmount }]),
    name: slug,
    slug,
    priceType: 'flat_rate',
    intervalType: interval ? 'recurring' : 'one_off',
  });
  const seatsOnly = await save('Seats only', [seats([{ interval: 'month', unitAmount: 1000 }])]);
  const baseAndSeats = await save('Base and seats', [seats([{ interval: 'month', unitAmount: 1000 }]), fee('base', 'month', 5000)]);
  const withSetup = await save('With set-up', [fee('monthly', 'month', 2000), fee('setup', null, 10_000)]);
  const checkout = (planId: string) =>
    api().post('/api/checkout', {
      planId,
      owner: 'fees-owner@example.com',
      grantee: 'fees-user',
      interval: 'month',
      intervalCount: 1,
      currency: 'USD',
      successUrl: 'https://vendor.example.com/ok',
      cancelUrl: 'https://vendor.example.com/no',
    });
  // The base fee was never charged, the set-up fee every month: neither plan is sold.
  expect((await checkout(baseAndSeats).expect(400)).body.errors).toEqual([
    {
      property: 'planId',
      message: expect.stringContaining(
        'the plan Base and seats cannot be sold: its line item base would not be charged: beside a per-seat line item (seats)',
      ),
    },
  ]);
  expect((await checkout(withSetup).expect(400)).body.errors).toEqual([
    {
      property: 'planId',
      message: expect.stringContaining('its line item setup is a one-off fee, which Tollgate would charge every period'),
    },
  ]);
  await checkout(seatsOnly).expect(200);

  // Nor added to a subscription, nor changed to.
  await buy(seatsOnly, 'fees-buyer@example.com');
  const [subscription] = (await api().get('/api/subscriptions?owner=fees-buyer@example.com').expect(200)).body.data;
  const items = (list: object[]) => api().put(`/api/subscriptions/${subscription.id}/items`, { items: list, proration: 'none' });
  const added = await items([{ planId: withSetup, action: 'add' }]).expect(400);
  expect(added.body.errors).toEqual([{ property: expect.stringContaining('planId'), message: expect.stringContaining('one-off fee') }]);
  const changed = await items([{ planId: seatsOnly, action: 'replace', newPlanId: baseAndSeats }]).expect(400);
  expect(changed.body.errors).toEqual([{ property: 'items[0].newPlanId', message: expect.stringContaining('base would not be charged') }]);
  const stored = await world.db.uow.run((r) => r.subscriptions.get(subscription.id));
  expect(stored).toMatchObject({ planId: seatsOnly, addedPlans: [] });
});
