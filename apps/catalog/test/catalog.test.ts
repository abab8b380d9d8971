import request from 'supertest';
import { ajv } from '@tollgate/http';
import { createTestWorld, purchase, seedOrganisation, type SeededOrg, type TestWorld } from '@tollgate/runtime/testing';
import { createCatalogApp } from '../src';
import { catalogApi } from './helpers';

let world: TestWorld;
let org: SeededOrg;
let other: SeededOrg;
let app: ReturnType<typeof createCatalogApp>;

const str = { type: 'string' };
const date = { type: 'string', pattern: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\.\\d{3}Z$' };
const ndate = { anyOf: [date, { type: 'null' }] };
const object = (properties: Record<string, unknown>, optional: Record<string, unknown> = {}) => ({
  type: 'object',
  properties: { ...properties, ...optional },
  required: Object.keys(properties),
  additionalProperties: false,
});
const nested = (item: object) =>
  object({ type: { const: 'list' }, data: { type: 'array', items: item }, hasMore: { type: 'boolean' }, path: str });
const productSchema = object({
  id: str,
  organisation: str,
  name: str,
  isActive: { type: 'boolean' },
  archivedAt: ndate,
  createdAt: date,
  updatedAt: date,
});
const planSchema = object({
  id: str,
  organisation: str,
  name: str,
  isActive: { type: 'boolean' },
  productId: str,
  tierTagId: { type: ['string', 'null'] },
  trialPeriodDays: { type: ['integer', 'null'] },
  archivedAt: ndate,
  createdAt: date,
  updatedAt: date,
});
const tierSchema = object({
  id: str,
  organisation: str,
  upTo: str,
  flatAmount: { type: ['number', 'null'] },
  unitAmount: { type: 'number' },
  currencyOptionId: str,
  createdAt: date,
  updatedAt: date,
});
const optionSchema = object({
  id: str,
  organisation: str,
  currency: str,
  unitAmount: { type: ['number', 'null'] },
  priceId: str,
  isDefault: { type: 'boolean' },
  createdAt: date,
  updatedAt: date,
  tiers: nested(tierSchema),
});
const priceSchema = object({
  id: str,
  organisation: str,
  paymentPriceId: str,
  interval: { enum: [null, 'day', 'week', 'month', 'year'] },
  intervalCount: { type: ['integer', 'null'] },
  lineItemId: str,
  archivedAt: ndate,
  createdAt: date,
  updatedAt: date,
  currencyOptions: nested(optionSchema),
});
const meterSchema = object({ id: str, slug: str, name: str, paymentMeterId: str, organisation: str, createdAt: date, updatedAt: date });
const lineItemSchema = object({
  id: str,
  organisation: str,
  name: str,
  slug: str,
  paymentProductId: str,
  meterId: { type: ['string', 'null'] },
  nickname: str,
  priceType: { enum: ['metered', 'per_seat', 'flat_rate'] },
  intervalType: { enum: ['one_off', 'recurring'] },
  billingScheme: { enum: ['fixed', 'per_unit', 'tiered', 'flat_rate'] },
  tiersMode: { enum: [null, 'graduated', 'volume'] },
  minQuantity: { type: 'integer' },
  maxQuantity: { type: 'integer' },
  isActive: { type: 'boolean' },
  planId: str,
  allowChangingQuantity: { type: 'boolean' },
  archivedAt: ndate,
  unitLabel: { type: ['string', 'null'] },
  createdAt: date,
  updatedAt: date,
  meter: { anyOf: [meterSchema, { type: 'null' }] },
  prices: nested(priceSchema),
});
const entitlementSchema = object({ id: str, organisation: str, name: str, createdAt: date, updatedAt: date });
const tierTagSchema = { anyOf: [object({ id: str, name: str, organisation: str, createdAt: date, updatedAt: date }), { type: 'null' }] };
const planListItemSchema = object(planSchema.properties as Record<string, unknown>, {
  product: productSchema,
  tierTag: tierTagSchema,
  entitlements: nested(entitlementSchema),
  lineItems: nested(lineItemSchema),
});
/** SavePlanResponseSchema as published: the plan, its entitlement links and its pricing tree in plain arrays. */
const arrayOf = (items: object) => ({ type: 'array', items });
const withProps = (schema: { properties: object; required: string[] }, props: Record<string, unknown>) => ({
  ...schema,
  properties: { ...schema.properties, ...props },
});
const savedPlanSchema = object(
  {
    ...(planSchema.properties as Record<string, unknown>),
    entitlements: arrayOf(object({ entitlementId: str, planId: str, createdAt: date, updatedAt: date })),
    lineItems: arrayOf(
      withProps(lineItemSchema, {
        prices: arrayOf(withProps(priceSchema, { currencyOptions: arrayOf(withProps(optionSchema, { tiers: arrayOf(tierSchema) })) })),
      }),
    ),
  },
  { tierTag: tierTagSchema },
);
const listSchema = (item: object, extra: Record<string, unknown> = {}) =>
  object({
    type: { const: 'list' },
    data: { type: 'array', items: item },
    nextCursor: { type: ['string', 'null'] },
    previousCursor: { type: ['string', 'null'] },
    hasMore: { type: 'boolean' },
    ...extra,
  });
const errorSchema = object({
  title: str,
  detail: { type: ['string', 'null'] },
  errors: { anyOf: [{ type: 'array', items: { type: 'object' } }, { type: 'null' }] },
});

function expectSchema(schema: object, body: unknown) {
  const validate = ajv.compile(schema);
  if (!validate(body)) throw new Error(`${ajv.errorsText(validate.errors)}\n${JSON.stringify(body).slice(0, 1500)}`);
}

beforeAll(async () => {
  world = await createTestWorld();
  org = await seedOrganisation(world, 'catalog-org');
  other = await seedOrganisation(world, 'catalog-other');
  app = createCatalogApp(world);
});
afterAll(() => world?.close());

const api = (key = org.liveKey) => catalogApi(app, key);

describe('catalog products', () => {
  it('creates (201, exactly the seven fields), reads, updates, archives and deletes', async () => {
    const created = await api().post('/api/products', { name: 'Widgets' }).expect(201);
    expectSchema(object({ type: { const: 'object' }, data: productSchema }), created.body);
    const id = created.body.data.id;
    const detail = await api().get(`/api/products/${id}?expand=plans,settings`).expect(200);
    expectSchema(
      object({
        type: { const: 'object' },
        data: object(productSchema.properties as Record<string, unknown>, { plans: nested(planSchema), settings: { type: 'object' } }),
      }),
      detail.body,
    );
    expect(detail.body.data.settings).toMatchObject({ productId: id, cardPrefillPreference: 'none', allowPromoCodes: false });
    const updated = await api().put(`/api/products/${id}`, { name: 'Gadgets' }).expect(200);
    expectSchema(object({ type: { const: 'object' }, data: productSchema }), updated.body);
    expect(updated.body.data.name).toBe('Gadgets');
    await api().post(`/api/products/${id}/archive`).expect(204);
    expect((await api().get(`/api/products/${id}`)).body.data).toMatchObject({ isActive: false, archivedAt: expect.any(String) });
    await api().del(`/api/products/${id}`).expect(204);
    const gone = await api().get(`/api/products/${id}`).expect(404);
    expectSchema(errorSchema, gone.body);
    expect(gone.body).toEqual({ title: 'Not Found', detail: 'product not found', errors: null });
  });

  it('lists with cursors stable under inserts, search, includeArchived and expand', async () => {
    const tick = () => world.clock.advanceDays(1 / 86_400); // a second between creations, as in real life
    for (const n of ['alpha', 'beta', 'gamma']) {
      tick();
      await api()
        .post('/api/products', { name: `list-${n}` })
        .expect(201);
    }
    const first = await api().get('/api/products?limit=2&search=list-').expect(200);
    expectSchema(listSchema(productSchema), first.body);
    expect(first.body.data.map((p: { name: string }) => p.name)).toEqual(['list-alpha', 'list-beta']);
    expect(first.body).toMatchObject({ hasMore: true, previousCursor: null });
    tick();
    await api().post('/api/products', { name: 'list-delta' }).expect(201);
    const second = await api().get(`/api/products?limit=2&search=list-&after=${first.body.nextCursor}`).expect(200);
    expect(second.body.data.map((p: { name: string }) => p.name)).toEqual(['list-gamma', 'list-delta']);
    const back = await api().get(`/api/products?limit=2&search=list-&before=${second.body.previousCursor}`).expect(200);
    expect(back.body.data.map((p: { name: string }) => p.name)).toEqual(['list-alpha', 'list-beta']);
    const withPlans = await api().get('/api/products?expand=plans&search=notes').expect(200);
    expect(withPlans.body.data[0].plans).toMatchObject({
      type: 'list',
      hasMore: false,
      path: expect.stringContaining('/api/plans?productId='),
    });
    await api().get('/api/products?limit=0').expect(400);
    await api().get('/api/products?limit=101').expect(400);
    await api().get('/api/products?after=forged').expect(400);
    expectSchema(errorSchema, (await api().get('/api/products?expand=nope').expect(400)).body);
  });

  it('refuses to delete a product with subscriptions (409): archive it instead', async () => {
    await purchase(world, org.keys['plans.notes.team'], 'cat-sub', 2);
    const res = await api().del(`/api/products/${org.keys['products.notes']}`).expect(409);
    expectSchema(errorSchema, res.body);
    expect(res.body.title).toBe('Conflict');
  });
});

describe('catalog plans', () => {
  it('saves a plan with entitlements and nested line items, prices, currency options and tiers in one call', async () => {
    const product = (await api().post('/api/products', { name: 'Tiered' }).expect(201)).body.data;
    const body = {
      productId: product.id,
      name: 'Scale',
      trialPeriodDays: 14,
      entitlements: ['edit', 'export'],
      lineItems: [
        {
          name: 'Seats',
          priceType: 'per_seat',
          billingScheme: 'tiered',
          tiersMode: 'graduated',
          minQuantity: 1,
          maxQuantity: 100,
          prices: [
            {
              interval: 'month',
              intervalCount: 1,
              currencyOptions: [
                {
                  currency: 'USD',
                  isDefault: true,
                  tiers: [
                    { upTo: '10', unitAmount: 500 },
                    { upTo: 'inf', unitAmount: 400, flatAmount: 1000 },
                  ],
                },
                { currency: 'EUR', tiers: [{ upTo: 'inf', unitAmount: 450 }] },
              ],
            },
          ],
        },
      ],
    };
    const res = await api().post('/api/plans/save', body).expect(201);
    expectSchema(object({ type: { const: 'object' }, data: savedPlanSchema }), res.body);
    const plan = res.body.data;
    const detail = (await api().get(`/api/plans/${plan.id}?expand=entitlements`).expect(200)).body.data;
    expect(detail.entitlements.data.map((e: { name: string }) => e.name)).toEqual(['edit', 'export']);
    expect(plan.entitlements).toEqual(
      detail.entitlements.data.map((e: { id: string }) => ({
        entitlementId: e.id,
        planId: plan.id,
        createdAt: plan.updatedAt,
        updatedAt: plan.updatedAt,
      })),
    );
    const option = plan.lineItems[0].prices[0].currencyOptions[0];
    expect(option).toMatchObject({ currency: 'usd', isDefault: true });
    expect(option.tiers.map((t: { upTo: string }) => t.upTo)).toEqual(['10', 'inf']);
    const again = await api()
      .post('/api/plans/save', { ...body, id: plan.id, name: 'Scale 2', lineItems: [] })
      .expect(200);
    expectSchema(object({ type: { const: 'object' }, data: savedPlanSchema }), again.body);
    expect(again.body.data).toMatchObject({ id: plan.id, name: 'Scale 2', lineItems: [] });
    const bad = await api()
      .post('/api/plans/save', { ...body, lineItems: [{ ...body.lineItems[0], tiersMode: null }] })
      .expect(400);
    expectSchema(errorSchema, bad.body);
  });

  it('lists plans with filters, filterOptions and every expansion; detail with subscriptionPlans', async () => {
    const product = (await api().post('/api/products', { name: 'Filtered' }).expect(201)).body.data;
    await api()
      .post('/api/plans/save', {
        productId: product.id,
        name: 'Yearly EUR',
        lineItems: [
          {
            name: 'Base',
            priceType: 'flat_rate',
            prices: [{ interval: 'year', currencyOptions: [{ currency: 'EUR', unitAmount: 9900 }] }],
          },
        ],
      })
      .expect(201);
    const res = await api()
      .get(`/api/plans?productId=${org.keys['products.notes']}&expand=entitlements,lineItems,product,tierTag`)
      .expect(200);
    expectSchema(
      listSchema(planListItemSchema, {
        filterOptions: object({
          currencies: { type: 'array', items: str },
          intervals: {
            type: 'array',
            items: object({ interval: { type: ['string', 'null'] }, intervalCount: { type: ['number', 'null'] } }),
          },
        }),
      }),
      res.body,
    );
    expect(res.body.data.map((p: { name: string }) => p.name)).toEqual(['Free', 'Team', 'Business', 'Metered', 'Metered Pro']);
    // Catalog-file prices show as the catalog's line items: one view of the same records.
    const team = res.body.data[1].lineItems.data[0];
    expect(team).toMatchObject({ priceType: 'per_seat', minQuantity: 2, allowChangingQuantity: true });
    expect(team.prices.data[0]).toMatchObject({ interval: 'month', intervalCount: 1 });
    expect(
      team.prices.data[0].currencyOptions.data.map((o: { currency: string; unitAmount: number; isDefault: boolean }) => [
        o.currency,
        o.unitAmount,
        o.isDefault,
      ]),
    ).toEqual([
      ['usd', 1200, true],
      ['eur', 1100, false],
    ]);
    expect(res.body.data[0].lineItems.data).toEqual([]);
    expect(res.body.data[3].lineItems.data[0]).toMatchObject({ priceType: 'metered', meter: { slug: 'metered-usage' } });
    // Upper case, as the published schema has them.
    expect(res.body.filterOptions.currencies).toEqual(expect.arrayContaining(['USD', 'EUR']));
    expect((await api().get('/api/plans?currency=EUR&interval=year').expect(200)).body.data.length).toBeGreaterThan(0);
    expect(res.body.filterOptions.intervals).toContainEqual({ interval: 'year', intervalCount: 1 });
    expect((await api().get('/api/plans?currency=eur&interval=year').expect(200)).body.data.map((p: { name: string }) => p.name)).toEqual([
      'Yearly EUR',
    ]);
    expect((await api().get('/api/plans?currency=usd&interval=year').expect(200)).body.data).toEqual([]);
    await api().get('/api/plans?interval=fortnight').expect(400);
    const detail = await api().get(`/api/plans/${org.keys['plans.notes.team']}?expand=subscriptionPlans,product`).expect(200);
    const sp = detail.body.data.subscriptionPlans.data[0];
    expect(sp).toMatchObject({
      planId: org.keys['plans.notes.team'],
      seats: 2,
      status: 'active',
      subscription: { status: 'active', owner: { value: 'buyer@example.com' } },
    });
    expect(detail.body.data.product).toEqual({ id: org.keys['products.notes'], name: 'notes-app', archivedAt: null });
  });

  it('creates, updates, archives and deletes plans', async () => {
    const created = await api().post('/api/plans', { productId: org.keys['products.notes'], name: 'Temp', trialPeriodDays: 7 }).expect(201);
    expectSchema(object({ type: { const: 'object' }, data: planSchema }), created.body);
    const id = created.body.data.id;
    expect((await api().put(`/api/plans/${id}`, { name: 'Temp 2', isActive: false }).expect(200)).body.data).toMatchObject({
      name: 'Temp 2',
      isActive: false,
    });
    await api().post(`/api/plans/${id}/archive`).expect(204);
    expect((await api().post(`/api/plans/${id}/archive`).expect(400)).body.detail).toMatch(/already archived/);
    await api().del(`/api/plans/${id}`).expect(204);
    await api().del(`/api/plans/${org.keys['plans.notes.team']}`).expect(409);
    await api().post('/api/plans', { name: 'No product' }).expect(400);
  });
});

describe('catalog idempotency, authentication and tenancy', () => {
  it('replays the first answer for the same key and body, refuses another body (409) and keys over 255 characters (400)', async () => {
    const first = await api().post('/api/products', { name: 'Once' }, 'key-1').expect(201);
    const replay = await api().post('/api/products', { name: 'Once' }, 'key-1').expect(201);
    expect(replay.body).toEqual(first.body);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect((await api().get('/api/products?search=Once').expect(200)).body.data).toHaveLength(1);
    const conflict = await api().post('/api/products', { name: 'Twice' }, 'key-1').expect(409);
    expectSchema(errorSchema, conflict.body);
    await api().post('/api/products', { name: 'Long' }, 'k'.repeat(256)).expect(400);
    await api().post('/api/products', { name: 'Ok' }, 'k'.repeat(255)).expect(201);
    // Keys belong to the organisation: another organisation may use the same key.
    await api(other.liveKey).post('/api/products', { name: 'Theirs' }, 'key-1').expect(201);
  });

  it("needs a bearer key (401), the scope (403); another organisation's record 403, the other mode's and an unknown id 404", async () => {
    expectSchema(errorSchema, (await request(app).get('/api/products').expect(401)).body);
    await request(app).get('/api/products').set('x-api-key', org.liveKey).expect(401);
    await api(org.readOnlyKey).post('/api/products', { name: 'Nope' }).expect(403);
    await api(org.readOnlyKey).get('/api/products').expect(200);
    await api(other.liveKey).get(`/api/products/${org.keys['products.notes']}`).expect(403);
    await api(other.liveKey).put(`/api/plans/${org.keys['plans.notes.team']}`, { name: 'x' }).expect(403);
    expectSchema(errorSchema, (await api(org.testKey).get(`/api/products/${org.keys['products.notes']}`).expect(404)).body);
    await api(org.testKey).put(`/api/plans/${org.keys['plans.notes.team']}`, { name: 'x' }).expect(404);
    await api(org.liveKey).get('/api/products/00000000-0000-4000-8000-000000000000').expect(404);
    await api(org.liveKey).put('/api/plans/00000000-0000-4000-8000-000000000000', { name: 'x' }).expect(404);
    expect((await api(org.testKey).get('/api/products').expect(200)).body.data.map((p: { id: string }) => p.id)).toEqual([
      org.testKeys['products.notes'],
    ]);
  });

  it('never replays across modes or routes: the same key and body under a test key runs in test mode (issue #24)', async () => {
    const live = await api(org.liveKey).post('/api/products', { name: 'Moded' }, 'key-mode').expect(201);
    const test = await api(org.testKey).post('/api/products', { name: 'Moded' }, 'key-mode').expect(201);
    expect(test.headers['idempotent-replayed']).toBeUndefined();
    expect(test.body.data.id).not.toBe(live.body.data.id);
    // Each mode sees its own product, and each replays its own answer.
    await api(org.testKey).get(`/api/products/${test.body.data.id}`).expect(200);
    await api(org.testKey).get(`/api/products/${live.body.data.id}`).expect(404);
    expect((await api(org.liveKey).post('/api/products', { name: 'Moded' }, 'key-mode').expect(201)).body).toEqual(live.body);
    expect((await api(org.testKey).post('/api/products', { name: 'Moded' }, 'key-mode').expect(201)).body).toEqual(test.body);
    // Another route under the same key is another record (its own answer, not a 409 or a replay).
    const plan = await api(org.liveKey)
      .post('/api/plans', { name: 'Moded plan', productId: live.body.data.id }, 'key-mode')
      .expect((r) => expect([201, 400]).toContain(r.status));
    expect(plan.headers['idempotent-replayed']).toBeUndefined();
  });

  it('keeps no answer and no work of a request that failed: the key may be used again', async () => {
    await api()
      .post('/api/products', { name: 'x'.repeat(100_000) }, 'key-failed')
      .expect(400);
    const product = await api().post('/api/products', { name: 'After failure' }, 'key-failed').expect(201);
    expect(product.headers['idempotent-replayed']).toBeUndefined();
  });
});
