import request from 'supertest';
import { ajv, arrayOf, checkSchema, legacyPlanSchema, legacyProductSchema, licenseSchema } from '@tollgate/http';
import { legacyFeatureWithOptionsSchema, legacyPlanFeatureSchema } from '@tollgate/app-legacy';
import { FakePaymentProvider } from '@tollgate/core/testing';
import { createTestWorld, purchase, seedOrganisation, type SeededOrg, type TestWorld } from '@tollgate/runtime/testing';
import { createServerApp } from '../src';

let world: TestWorld;
let org: SeededOrg;
let app: ReturnType<typeof createServerApp>;

beforeAll(async () => {
  world = await createTestWorld({ payments: new FakePaymentProvider() });
  org = await seedOrganisation(world, 'server-org');
  app = createServerApp(world);
});
afterAll(() => world?.close());

/** `METHOD /path` of every operation of an OpenAPI document. */
const operationsOf = (doc: { paths: Record<string, object> }) =>
  Object.entries(doc.paths).flatMap(([p, m]) => Object.keys(m).map((k) => `${k.toUpperCase()} ${p}`));

describe('combined server dispatch', () => {
  it('serves legacy without a version header', async () => {
    const res = await request(app).get('/products').set('x-api-key', org.liveKey).expect(200);
    expect(res.body[0].uuid).toBe(org.keys['products.notes']);
  });

  it('answers each of the six legacy paths without a version header in the legacy shape', async () => {
    await purchase(world, org.keys['plans.notes.team'], 'legacy-shape', 2);
    const product = org.keys['products.notes'];
    const cases: [string, string, number, object, object?][] = [
      ['get', '/products', 200, arrayOf(legacyProductSchema)],
      ['get', `/products/${product}/plans`, 200, arrayOf(legacyPlanSchema)],
      ['get', `/products/${product}/features`, 200, arrayOf(legacyFeatureWithOptionsSchema)],
      ['get', `/plans/${org.keys['plans.notes.team']}/features`, 200, arrayOf(legacyPlanFeatureSchema)],
      ['get', `/licenses/check?productUuid=${product}&granteeIds=legacy-shape`, 200, checkSchema],
      [
        'post',
        '/licenses',
        201,
        { anyOf: [licenseSchema, arrayOf(licenseSchema)] },
        { planUuid: org.keys['plans.notes.free'], member: 'm@example.com', granteeId: 'legacy-new' },
      ],
    ];
    for (const [method, path, status, schema, body] of cases) {
      const req = method === 'get' ? request(app).get(path) : request(app).post(path).send(body);
      const res = await req.set('x-api-key', org.liveKey).expect(status);
      const validate = ajv.compile(schema);
      if (!validate(res.body)) throw new Error(`${method} ${path}: ${ajv.errorsText(validate.errors)}`);
      if (Array.isArray(res.body)) expect(res.body.length).toBeGreaterThan(0);
    }
  });

  it('answers 400 naming the supported versions for any version other than v1, v2 and v3', async () => {
    for (const v of ['v4', 'V1', 'V2', '', '1']) {
      const res = await request(app).get('/products').set('x-api-key', org.liveKey).set('version', v).expect(400);
      expect(res.body).toEqual({
        error: `unsupported version ${v.trim()}: the supported versions are v1, v2 and v3`,
        code: 'VALIDATION_FAILED',
        validationErrors: [{ property: 'version', error: 'must be one of v1, v2, v3' }],
      });
    }
  });

  it('sends version: v2 and v3 requests to those generations (v3 spells paths in kebab-case)', async () => {
    const plan = org.keys['plans.notes.team'];
    const q = 'successUrl=https://v.example.com/ok&cancelUrl=https://v.example.com/no&granteeId=g&owner=o';
    const v2 = await request(app).get(`/plans/${plan}/checkoutlink?${q}`).set('x-api-key', org.liveKey).set('version', 'v2').expect(200);
    expect(v2.body.checkoutUrl).toMatch(/^http/);
    await request(app).get(`/plans/${plan}/checkout-link?${q}`).set('x-api-key', org.liveKey).set('version', 'v2').expect(404);
    await request(app).get(`/plans/${plan}/checkout-link?${q}`).set('x-api-key', org.liveKey).set('version', 'v3').expect(200);
    const products = await request(app).get('/products').set('x-api-key', org.liveKey).set('version', 'v3').expect(200);
    expect(products.body).toMatchObject({ first: expect.any(String), last: expect.any(String), data: expect.any(Array) });
    expect((await request(app).get('/products').set('x-api-key', org.liveKey).set('version', 'v2').expect(200)).body[0]).toHaveProperty(
      'slug',
    );
  });

  it('sends version: v1 requests to v1, and header-less requests for paths legacy does not serve', async () => {
    const res = await request(app).get('/products').set('x-api-key', org.liveKey).set('version', 'v1').expect(200);
    expect(res.body[0]).toHaveProperty('isTest', false);
    const { subscription } = await purchase(world, org.keys['plans.notes.team'], 'srv', 2);
    const noHeader = await request(app).get(`/subscriptions/${subscription.id}`).set('x-api-key', org.liveKey).expect(200);
    expect(noHeader.body).toMatchObject({ uuid: subscription.id, quantity: 2 });
    await request(app)
      .put(`/subscriptions/${subscription.id}/change-plan`)
      .set('x-api-key', org.liveKey)
      .send({ planUuid: org.keys['plans.notes.business'] })
      .expect(204);
    await request(app)
      .put(`/subscriptions/${subscription.id}/updateplan/${org.keys['plans.notes.team']}`)
      .set('x-api-key', org.liveKey)
      .expect(204);
  });

  it('answers a header-less v1 path from v1, and a path no generation serves with 404 in the legacy shape', async () => {
    const res = await request(app).get('/licenses/count').set('x-api-key', org.liveKey).expect(200);
    expect(res.body).toEqual({ count: expect.any(Number), assigned: expect.any(Number), unassigned: expect.any(Number) });
    const plain = await request(app).get('/nowhere').set('x-api-key', org.liveKey).expect(404);
    expect(plain.body).toMatchObject({ code: 'ROUTE_NOT_FOUND' });
  });

  it('sends /api to the catalog generation (bearer key, catalog error shape)', async () => {
    const res = await request(app).get('/api/products').set('authorization', `Bearer ${org.liveKey}`).expect(200);
    expect(res.body).toMatchObject({ type: 'list', hasMore: false, previousCursor: null });
    expect(res.body.data[0].id).toBe(org.keys['products.notes']);
    const unauth = await request(app).get('/api/products').expect(401);
    expect(unauth.body).toMatchObject({ title: 'Unauthorized', errors: null });
    expect((await request(app).get('/api/nowhere').set('authorization', `Bearer ${org.liveKey}`).expect(404)).body.title).toBe('Not Found');
  });

  it('serves an OpenAPI document per generation, listing every operation the generation answers', async () => {
    for (const g of ['legacy', 'v1', 'catalog']) {
      const doc = (await request(app).get(`/openapi/${g}.json`).expect(200)).body;
      expect(doc.openapi).toBe('3.1.0');
      expect(Object.keys(doc.paths).length).toBeGreaterThan(5);
    }
    const v1doc = (await request(app).get('/openapi/v1.json')).body;
    const ops = operationsOf(v1doc);
    expect(ops).toHaveLength(43);
    for (const op of [
      'GET /licenses/{licenseUuid}',
      'PUT /licenses/{licenseUuid}',
      'DELETE /licenses/{licenseUuid}',
      'POST /licenses/cancel',
      'GET /licenses/purchaser',
      'GET /licenses/granteeId/{granteeId}',
      'GET /licenses/{licenseUuid}/usage',
      'PUT /usage',
      'PUT /subscriptions',
    ])
      expect(ops).toContain(op);
    expect(ops).toContain('GET /signing-key');
    const catalogOps = operationsOf((await request(app).get('/openapi/catalog.json')).body);
    for (const op of [
      'GET /api/tier-tags',
      'POST /api/tier-tags',
      'GET /api/products/export/{id}',
      'POST /api/products/import',
      'GET /api/webhooks',
      'POST /api/webhooks',
      'GET /api/webhooks/{id}',
      'PATCH /api/webhooks/{id}',
      'DELETE /api/webhooks/{id}',
      'POST /api/meters',
      'POST /api/usage/consume',
      'GET /api/balances',
      'GET /api/webhooks/{id}/attempts',
      'GET /api/events',
      'GET /api/events/{id}',
      'POST /api/events/{id}/resend',
    ])
      expect(catalogOps).toContain(op);
    expect(ops).toContain('GET /pricing-tables/{pricingTableUuid}/page-link');
    expect(ops).toContain('PUT /subscriptions/{subscriptionUuid}/seats');
    for (const p of Object.values(
      v1doc.paths as Record<
        string,
        Record<string, { responses: Record<string, { content?: { 'application/json': { schema: object } } }> }>
      >,
    )) {
      for (const op of Object.values(p))
        for (const r of Object.values(op.responses))
          if (r.content) expect(() => ajv.compile(r.content!['application/json'].schema)).not.toThrow();
    }
    const v2Ops = operationsOf((await request(app).get('/openapi/v2.json').expect(200)).body);
    const v3Ops = operationsOf((await request(app).get('/openapi/v3.json').expect(200)).body);
    for (const op of [
      'GET /plans/{planUuid}/checkoutlink',
      'PUT /subscriptions/{subscriptionUuid}/seats',
      'GET /licenses',
      'POST /sessions',
      'PUT /usage',
    ])
      expect(v2Ops).toContain(op);
    for (const op of ['GET /plans/{planUuid}/checkout-link', 'GET /plans', 'GET /features', 'GET /entitlements/check', 'POST /sessions'])
      expect(v3Ops).toContain(op);
    expect(v3Ops).not.toContain('GET /licenses');
    await request(app).get('/openapi/v4.json').set('x-api-key', org.liveKey).expect(404);
  });

  it('reports health without a key', async () => {
    expect((await request(app).get('/healthz').expect(200)).body).toEqual({ status: 'ok' });
  });
});
