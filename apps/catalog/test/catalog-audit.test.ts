import { CURRENCY_CODES } from '@tollgate/core';
import { FakePaymentProvider } from '@tollgate/core/testing';
import { createTestWorld, seedOrganisation, type SeededOrg, type TestWorld } from '@tollgate/runtime/testing';
import request from 'supertest';
import { createCatalogApp } from '../src';
import { catalogApi } from './helpers';

/* The twelfth session's catalog audit (docs/decisions.md, "Catalog API: archived records read-only,
   amounts and currencies checked, ids and scopes"): each refusal is a 4xx in the catalog error
   shape naming the field, and writes nothing. */

let world: TestWorld;
let org: SeededOrg;
let other: SeededOrg;
let app: ReturnType<typeof createCatalogApp>;
const payments = new FakePaymentProvider();

beforeAll(async () => {
  world = await createTestWorld({ payments });
  org = await seedOrganisation(world, 'audit-org');
  other = await seedOrganisation(world, 'audit-other');
  app = createCatalogApp(world);
});
afterAll(() => world?.close());

const api = (key = org.liveKey) => catalogApi(app, key);
const UNKNOWN = '00000000-0000-4000-8000-000000000000';
/** The catalog error body naming `property`. */
const names = (body: { title: string; detail: string; errors: { property: string; message: string }[] | null }, property: string) => {
  expect(body.errors?.map((e) => e.property)).toContain(property);
};

const seatItem = (extra: object = {}) => ({
  name: 'Seats',
  slug: 'seats',
  priceType: 'per_seat',
  intervalType: 'recurring',
  billingScheme: 'per_unit',
  minQuantity: 1,
  maxQuantity: 10,
  prices: [{ interval: 'month', intervalCount: 1, currencyOptions: [{ currency: 'USD', unitAmount: 500 }] }],
  ...extra,
});
const newProduct = async (name: string) => (await api().post('/api/products', { name }).expect(201)).body.data.id as string;

describe('API keys: an empty scope list', () => {
  it('is 400 naming scopes; no key is made (absent scopes still default to the caller’s)', async () => {
    const before = (await api().get('/api/api-keys?limit=100').expect(200)).body.data.length;
    const res = await api().post('/api/api-keys', { name: 'x', scopes: [] }).expect(400);
    names(res.body, 'scopes');
    expect((await api().get('/api/api-keys?limit=100').expect(200)).body.data).toHaveLength(before);
    const made = await api().post('/api/api-keys', { name: 'default' }).expect(201);
    expect(made.body.data.scopes).toEqual(['*']);
  });
});

describe('archived plans and products are read-only', () => {
  it('refuses PUT on an archived plan (400 PLAN_ARCHIVED naming id), isActive true included, and plans/save of it', async () => {
    const productId = await newProduct('Archived plans');
    const id = (await api().post('/api/plans', { productId, name: 'Old' }).expect(201)).body.data.id;
    await api().post(`/api/plans/${id}/archive`).expect(204);
    for (const body of [{ name: 'Renamed' }, { isActive: true }, { trialPeriodDays: 7 }]) {
      const res = await api().put(`/api/plans/${id}`, body).expect(400);
      expect(res.body.detail).toMatch(/archived/);
      names(res.body, 'id');
    }
    const saved = await api().post('/api/plans/save', { id, name: 'Renamed', archivedAt: null }).expect(400);
    names(saved.body, 'id');
    const plan = (await api().get(`/api/plans/${id}`).expect(200)).body.data;
    expect(plan).toMatchObject({ name: 'Old', isActive: false });
    expect(plan.archivedAt).not.toBeNull();
  });

  it('refuses changes of an archived product, its plans and its entitlements; isActive true un-archives it', async () => {
    const productId = await newProduct('Archived product');
    const planId = (await api().post('/api/plans', { productId, name: 'On it' }).expect(201)).body.data.id;
    const ent = (await api().post('/api/entitlements', { name: 'kept_one', productId }).expect(201)).body.data.id;
    await api().post(`/api/products/${productId}/archive`).expect(204);

    for (const body of [{ name: 'Renamed' }, { isActive: false }, { settings: { allowPromoCodes: true } }]) {
      const res = await api().put(`/api/products/${productId}`, body).expect(400);
      expect(res.body.detail).toMatch(/archived/);
      names(res.body, 'id');
    }
    names((await api().post('/api/entitlements', { name: 'new_one', productId }).expect(400)).body, 'productId');
    names((await api().put(`/api/entitlements/${ent}`, { name: 'renamed' }).expect(400)).body, 'id');
    names((await api().put(`/api/plans/${planId}`, { name: 'Renamed' }).expect(400)).body, 'id');
    names((await api().post(`/api/plans/${planId}/archive`).expect(400)).body, 'id');
    const product = (await api().get(`/api/products/${productId}`).expect(200)).body.data;
    expect(product.name).toBe('Archived product');
    expect((await api().get(`/api/entitlements?planId=${planId}&limit=100`).expect(200)).body.data).toEqual([]);
    expect((await api().get(`/api/entitlements/${ent}`).expect(200)).body.data.name).toBe('kept_one');

    // Un-archiving (docs/decisions.md: `isActive: true` on products), with other fields at once.
    const back = await api().put(`/api/products/${productId}`, { isActive: true, name: 'Back' }).expect(200);
    expect(back.body.data).toMatchObject({ name: 'Back', isActive: true, archivedAt: null });
    await api().post('/api/entitlements', { name: 'new_one', productId }).expect(201);
  });
});

describe('plans/save', () => {
  it('takes an entitlement named twice once', async () => {
    const productId = await newProduct('Twice');
    const res = await api()
      .post('/api/plans/save', { productId, name: 'Twice', entitlements: ['q_q', 'q_q'] })
      .expect(201);
    expect(res.body.data.entitlements).toHaveLength(1);
    const again = await api()
      .post('/api/plans/save', { id: res.body.data.id, name: 'Twice', entitlements: ['q_q', 'r_r', 'q_q'] })
      .expect(200);
    expect(again.body.data.entitlements).toHaveLength(2);
  });

  it('answers 404 naming id for an id that is no plan of the caller (another record’s, another organisation’s plan, unknown)', async () => {
    const productId = await newProduct('Unknown id');
    const lineItemId = (await api().get(`/api/line-items?planId=${org.keys['plans.notes.team']}`).expect(200)).body.data[0].id;
    for (const id of [UNKNOWN, lineItemId, productId]) {
      const res = await api().post('/api/plans/save', { id, productId, name: 'Hijack' }).expect(404);
      names(res.body, 'id');
      await api().get(`/api/plans/${id}`).expect(404);
    }
    await api().post('/api/plans/save', { id: other.keys['plans.notes.team'], productId, name: 'Hijack' }).expect(403);
  });

  it('refuses maxQuantity beyond 2147483647 (400 naming it), here and on PUT /api/line-items/:id', async () => {
    const productId = await newProduct('Big quantity');
    const res = await api()
      .post('/api/plans/save', { productId, name: 'Big', lineItems: [seatItem({ maxQuantity: 3e9 })] })
      .expect(400);
    names(res.body, 'lineItems.0.maxQuantity');
    const saved = await api()
      .post('/api/plans/save', { productId, name: 'Big', lineItems: [seatItem()] })
      .expect(201);
    const li = saved.body.data.lineItems[0];
    const put = await api()
      .put(`/api/line-items/${li.id}`, {
        name: 'Seats',
        slug: 'seats',
        priceType: 'per_seat',
        intervalType: 'recurring',
        billingScheme: 'per_unit',
        tiersMode: null,
        minQuantity: 1,
        maxQuantity: 3e9,
      })
      .expect(400);
    names(put.body, 'maxQuantity');
  });
});

describe('amounts and currencies', () => {
  const save = (productId: string, option: object, extra: object = {}) =>
    api().post('/api/plans/save', {
      productId,
      name: 'Priced',
      lineItems: [seatItem({ prices: [{ interval: 'month', intervalCount: 1, currencyOptions: [option] }], ...extra })],
    });

  it('refuses amounts above 99999999999 or not whole (minor units), and made-up currency codes', async () => {
    const productId = await newProduct('Amounts');
    for (const unitAmount of [1e20, 2 ** 53 + 2, 100000000000])
      names((await save(productId, { currency: 'USD', unitAmount }).expect(400)).body, 'lineItems.0.prices.0.currencyOptions.0.unitAmount');
    names(
      (await save(productId, { currency: 'USD', unitAmount: 9.99 }).expect(400)).body,
      'lineItems[0].prices[0].currencyOptions[0].unitAmount',
    );
    names(
      (await save(productId, { currency: 'XYZ', unitAmount: 100 }).expect(400)).body,
      'lineItems[0].prices[0].currencyOptions[0].currency',
    );
    const tiered = {
      currency: 'usd',
      unitAmount: null,
      tiers: [
        { upTo: '10', flatAmount: 0.5, unitAmount: 0 },
        { upTo: 'inf', flatAmount: null, unitAmount: 1 },
      ],
    };
    names(
      (await save(productId, tiered, { billingScheme: 'tiered', tiersMode: 'graduated' }).expect(400)).body,
      'lineItems[0].prices[0].currencyOptions[0].tiers[0].flatAmount',
    );
    // The largest amount is taken, and lower-case ISO codes.
    await save(productId, { currency: 'eur', unitAmount: 99999999999 }).expect(201);
    await request(app)
      .post('/api/carts')
      .set('authorization', `Bearer ${org.liveKey}`)
      .send({ owner: 'o', interval: 'month', intervalCount: 1, currency: 'XYZ' })
      .expect(400);
  });

  it('keeps fractions of the minor unit on a metered line item’s per-unit amounts', async () => {
    const productId = await newProduct('Metered fractions');
    const res = await api()
      .post('/api/plans/save', {
        productId,
        name: 'Metered',
        lineItems: [
          {
            name: 'Calls',
            slug: 'calls',
            priceType: 'metered',
            intervalType: 'recurring',
            billingScheme: 'per_unit',
            meterSlug: 'audit_calls',
            prices: [{ interval: 'month', intervalCount: 1, currencyOptions: [{ currency: 'USD', unitAmount: 0.5 }] }],
          },
        ],
      })
      .expect(201);
    expect(res.body.data.lineItems[0].prices[0].currencyOptions[0].unitAmount).toBe(0.5);
  });
});

describe('an empty body still names a record', () => {
  it('PUT /api/entitlements/:id {} is 404 for an unknown id, 403 for another organisation’s', async () => {
    await api().put(`/api/entitlements/${UNKNOWN}`, {}).expect(404);
    const foreign = (
      await api(other.liveKey).post('/api/entitlements', { name: 'theirs', productId: other.keys['products.notes'] }).expect(201)
    ).body.data.id;
    await api().put(`/api/entitlements/${foreign}`, {}).expect(403);
    await api(other.liveKey).put(`/api/entitlements/${foreign}`, {}).expect(204);
  });

  it('PUT /api/subscription-plans/:id/seats {} is 404 for an unknown id, 403 for another organisation’s', async () => {
    await api().put(`/api/subscription-plans/${UNKNOWN}/seats`, {}).expect(404);
    const theirs = await world.core.checkout.completePurchase({
      planId: other.keys['plans.notes.team'],
      member: 'their-member',
      email: 'their@example.com',
      granteeId: 'their-grantee',
      quantity: 2,
      currency: 'USD',
      paymentProvider: 'fake',
      paymentSubscriptionId: null,
      paymentCustomerId: null,
    });
    await api().put(`/api/subscription-plans/${theirs.subscription.id}/seats`, {}).expect(403);
    await api(other.liveKey).put(`/api/subscription-plans/${theirs.subscription.id}/seats`, {}).expect(204);
  });
});

describe('ids that are no plan', () => {
  it('POST /api/checkout with a planId that is not a plan id is 404 naming planId', async () => {
    const res = await api()
      .post('/api/checkout', {
        planId: 'abc',
        owner: 'o',
        interval: 'month',
        intervalCount: 1,
        successUrl: 'https://a.example',
        cancelUrl: 'https://a.example',
      })
      .expect(404);
    names(res.body, 'planId');
  });

  it('PUT /api/subscriptions/:id/items replacing with newPlanId "abc" is 404 naming it', async () => {
    const mine = await world.core.checkout.completePurchase({
      planId: org.keys['plans.notes.team'],
      member: 'my-member',
      email: 'my@example.com',
      granteeId: 'my-grantee',
      quantity: 2,
      currency: 'USD',
      paymentProvider: 'fake',
      paymentSubscriptionId: null,
      paymentCustomerId: null,
    });
    const res = await api()
      .put(`/api/subscriptions/${mine.subscription.id}/items`, {
        items: [{ planId: org.keys['plans.notes.team'], action: 'replace', newPlanId: 'abc' }],
      })
      .expect(404);
    names(res.body, 'items[0].newPlanId');
    const add = await api()
      .put(`/api/subscriptions/${mine.subscription.id}/items`, { items: [{ planId: 'abc', action: 'add' }] })
      .expect(404);
    names(add.body, 'items[0].planId');
  });
});

describe('conformance', () => {
  it('a wrong method on a known path is 405 with Allow, in the catalog error shape', async () => {
    const res = await request(app)
      .patch(`/api/products/${org.keys['products.notes']}`)
      .set('authorization', `Bearer ${org.liveKey}`)
      .send({});
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe('GET, PUT, DELETE');
    expect(res.body).toMatchObject({ title: 'Method Not Allowed', errors: null });
    expect(res.body.detail).toMatch(/PATCH/);
    expect((await request(app).post('/api/products/export/x')).status).toBe(405);
    expect((await request(app).get('/api/no-such-thing')).status).toBe(404);
  });

  it('POST /api/products/import without a file is 400 naming file; nothing is imported', async () => {
    const products = async () => (await world.core.products.listProducts(org.tenant, { limit: 100, includeArchived: true })).items.length;
    const before = await products();
    for (const send of [
      (r: request.Test) => r,
      (r: request.Test) => r.set('content-type', 'application/json').send('null'),
      (r: request.Test) => r.send({}),
      (r: request.Test) => r.set('content-type', 'text/plain').send('products: []'),
    ]) {
      const res = await send(request(app).post('/api/products/import').set('authorization', `Bearer ${org.liveKey}`));
      expect(res.status).toBe(400);
      names(res.body, 'file');
    }
    // Nothing imported: no product added (nor anything else the import would have written first).
    expect(await products()).toBe(before);
  });
});

describe('review follow-ups', () => {
  const meteredItem = (option: object, extra: object = {}) => ({
    name: 'Calls',
    slug: 'calls',
    priceType: 'metered',
    intervalType: 'recurring',
    billingScheme: 'tiered',
    tiersMode: 'graduated',
    meterSlug: 'follow_up_calls',
    prices: [{ interval: 'month', intervalCount: 1, currencyOptions: [option] }],
    ...extra,
  });
  const checkoutBody = (currency: string) => ({
    planId: org.keys['plans.notes.team'],
    owner: 'o',
    interval: 'month',
    intervalCount: 1,
    currency,
    successUrl: 'https://a.example',
    cancelUrl: 'https://a.example',
  });

  it('currencies are the published list (138 codes, fixed): not Intl’s uncharged codes, whatever Node’s ICU holds', async () => {
    expect(CURRENCY_CODES).toHaveLength(138);
    expect(CURRENCY_CODES).toEqual(expect.arrayContaining(['USD', 'EUR', 'GBP', 'ANG', 'XCG', 'STD', 'BHD']));
    for (const code of ['XDR', 'XSU', 'XAU', 'XTS', 'JOD']) expect(CURRENCY_CODES).not.toContain(code);
    const productId = await newProduct('Currencies');
    const save = (currency: string) =>
      api().post('/api/plans/save', {
        productId,
        name: 'In ' + currency,
        lineItems: [seatItem({ prices: [{ interval: 'month', intervalCount: 1, currencyOptions: [{ currency, unitAmount: 100 }] }] })],
      });
    for (const code of ['XDR', 'XSU', 'Usd'])
      names(
        (await save(code).expect(400)).body,
        code === 'Usd' ? 'lineItems.0.prices.0.currencyOptions.0.currency' : 'lineItems[0].prices[0].currencyOptions[0].currency',
      );
    for (const code of ['XCG', 'ang', 'USD']) await save(code).expect(201);
    // Quick checkout and the plan list's filter take the same list (either case).
    names((await api().post('/api/checkout', checkoutBody('XDR')).expect(400)).body, 'currency');
    names((await api().post('/api/checkout', checkoutBody('ABC')).expect(400)).body, 'currency');
    names((await api().get('/api/plans?currency=XDR').expect(400)).body, 'currency');
    names((await api().get('/api/plans?currency=Usd').expect(400)).body, 'currency');
    await api().get('/api/plans?currency=xcg').expect(200);
    await api().get('/api/plans?currency=USD').expect(200);
  });

  it('a currency the plan already has stays accepted on a re-save, though not in the list (a new one is refused)', async () => {
    const productId = await newProduct('Stored currency');
    const made = (
      await api()
        .post('/api/plans/save', { productId, name: 'Old code', lineItems: [seatItem()] })
        .expect(201)
    ).body.data;
    // As an import or an older release may have stored it: a code the list does not hold.
    await world.db.uow.run(async (r) => {
      const plan = (await r.plans.get(made.id))!;
      const lineItems = plan.lineItems.map((li) => ({
        ...li,
        prices: li.prices.map((p) => ({ ...p, currencyOptions: p.currencyOptions.map((o) => ({ ...o, currency: 'jod' })) })),
      }));
      await r.plans.save({ ...plan, lineItems });
    });
    const item = (currency: string) =>
      seatItem({ prices: [{ interval: 'month', intervalCount: 1, currencyOptions: [{ currency, unitAmount: 700 }] }] });
    await api()
      .post('/api/plans/save', { id: made.id, name: 'Old code', lineItems: [item('JOD')] })
      .expect(200);
    names(
      (
        await api()
          .post('/api/plans/save', { id: made.id, name: 'Old code', lineItems: [item('TND')] })
          .expect(400)
      ).body,
      'lineItems[0].prices[0].currencyOptions[0].currency',
    );
    // Another plan cannot take it up.
    names(
      (
        await api()
          .post('/api/plans/save', { productId, name: 'New', lineItems: [item('JOD')] })
          .expect(400)
      ).body,
      'lineItems[0].prices[0].currencyOptions[0].currency',
    );
  });

  it('DELETE of a line item or price of an archived plan or product is 400 naming id; so is DELETE of an entitlement of an archived product', async () => {
    const twoPrices = seatItem();
    const productId = await newProduct('Archived parts');
    const archivedPlan = (
      await api()
        .post('/api/plans/save', { productId, name: 'Gone', lineItems: [twoPrices] })
        .expect(201)
    ).body.data;
    const openPlan = (
      await api()
        .post('/api/plans/save', { productId, name: 'Open', lineItems: [twoPrices] })
        .expect(201)
    ).body.data;
    const ent = (await api().post('/api/entitlements', { name: 'parts_ent', productId }).expect(201)).body.data.id;
    await api().post(`/api/plans/${archivedPlan.id}/archive`).expect(204);
    const refused = async (path: string, code: RegExp) => {
      const res = await api().del(path).expect(400);
      expect(res.body.detail).toMatch(code);
      names(res.body, 'id');
    };
    const li = archivedPlan.lineItems[0];
    await refused(`/api/prices/${li.prices[0].id}`, /plan is archived/);
    await refused(`/api/line-items/${li.id}`, /plan is archived/);
    await api().post(`/api/products/${productId}/archive`).expect(204);
    const open = openPlan.lineItems[0];
    await refused(`/api/prices/${open.prices[0].id}`, /product is archived/);
    await refused(`/api/line-items/${open.id}`, /product is archived/);
    await refused(`/api/entitlements/${ent}`, /archived/);
    // All still there.
    for (const p of [openPlan, archivedPlan])
      expect((await api().get(`/api/line-items?planId=${p.id}`).expect(200)).body.data.map((x: { id: string }) => x.id)).toEqual([
        p.lineItems[0].id,
      ]);
    await api().get(`/api/prices/${li.prices[0].id}`).expect(200);
    await api().get(`/api/prices/${open.prices[0].id}`).expect(200);
    await api().get(`/api/entitlements/${ent}`).expect(200);
  });

  it('a seat quantity above 2147483647 is 400 naming quantity', async () => {
    const mine = await world.core.checkout.completePurchase({
      planId: org.keys['plans.notes.team'],
      member: 'big-member',
      email: 'big@example.com',
      granteeId: 'big-grantee',
      quantity: 2,
      currency: 'USD',
      paymentProvider: 'fake',
      paymentSubscriptionId: null,
      paymentCustomerId: null,
    });
    for (const quantity of [2147483648, 3e9])
      names((await api().put(`/api/subscription-plans/${mine.subscription.id}/seats`, { quantity }).expect(400)).body, 'quantity');
    expect((await world.core.subscriptions.get(org.tenant, mine.subscription.id)).subscription.quantity).toBe(2);
  });

  it('tier amounts: whole unless the line item is metered (unit and flat amounts), and a metered plan saves again as it reads back', async () => {
    const productId = await newProduct('Tier amounts');
    const tiers = (unitAmount: number, flatAmount: number | null) => ({
      currency: 'USD',
      unitAmount: null,
      tiers: [
        { upTo: '10', flatAmount, unitAmount },
        { upTo: 'inf', flatAmount: null, unitAmount: 1 },
      ],
    });
    const seatTiers = (option: object) =>
      api().post('/api/plans/save', {
        productId,
        name: 'Seat tiers',
        lineItems: [
          seatItem({
            billingScheme: 'tiered',
            tiersMode: 'graduated',
            prices: [{ interval: 'month', intervalCount: 1, currencyOptions: [option] }],
          }),
        ],
      });
    names((await seatTiers(tiers(0.5, null)).expect(400)).body, 'lineItems[0].prices[0].currencyOptions[0].tiers[0].unitAmount');
    await seatTiers(tiers(5, 100)).expect(201);
    const metered = await api()
      .post('/api/plans/save', { productId, name: 'Metered tiers', lineItems: [meteredItem(tiers(0.25, 12.5))] })
      .expect(201);
    const saved = metered.body.data;
    expect(saved.lineItems[0].prices[0].currencyOptions[0].tiers[0]).toMatchObject({ unitAmount: 0.25, flatAmount: 12.5 });
    // Saved again exactly as read (what a catalog-file import of such tiers stores too).
    const read = saved;
    const again = await api()
      .post('/api/plans/save', {
        id: saved.id,
        name: read.name,
        lineItems: read.lineItems.map((li: { id: string; prices: { id: string; currencyOptions: object[] }[] }) =>
          meteredItem(
            {},
            {
              id: li.id,
              prices: li.prices.map((p) => ({
                id: p.id,
                interval: 'month',
                intervalCount: 1,
                currencyOptions: p.currencyOptions.map((o: object) => ({
                  currency: 'USD',
                  unitAmount: null,
                  tiers: (o as { tiers: { upTo: string | null; unitAmount: number; flatAmount: number | null }[] }).tiers.map((t) => ({
                    upTo: t.upTo ?? 'inf',
                    unitAmount: t.unitAmount,
                    flatAmount: t.flatAmount,
                  })),
                })),
              })),
            },
          ),
        ),
      })
      .expect(200);
    expect(again.body.data.lineItems[0].prices[0].currencyOptions[0].tiers[0]).toMatchObject({ unitAmount: 0.25, flatAmount: 12.5 });
  });
});
