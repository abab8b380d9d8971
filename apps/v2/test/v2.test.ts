import request from 'supertest';
import { ajv } from '@tollgate/http';
import { coreDownAfter, createTestWorld, purchase, seedOrganisation, type SeededOrg, type TestWorld } from '@tollgate/runtime/testing';
import { createV2App, versionRoutes, VERSION_ERROR_STATUS, type Version } from '../src';

let world: TestWorld;
let org: SeededOrg;
let other: SeededOrg;
let app: ReturnType<typeof createV2App>;

beforeAll(async () => {
  world = await createTestWorld();
  org = await seedOrganisation(world, 'v2-org');
  other = await seedOrganisation(world, 'v2-other');
  app = createV2App(world);
});
afterAll(() => world?.close());

const api = (version: string | null, key = org.liveKey) => {
  const h = (r: request.Test) => (version === null ? r.set('x-api-key', key) : r.set('x-api-key', key).set('version', version));
  return {
    get: (p: string) => h(request(app).get(p)),
    put: (p: string, body?: unknown) => h(request(app).put(p)).send(body as object),
    post: (p: string, body?: unknown) => h(request(app).post(p)).send(body as object),
  };
};
const schemaOf = (version: Version, method: string, path: string) => {
  const r = versionRoutes({ ...world, config: { publicUrl: 'http://x' } } as never, version).find(
    (x) => x.method === method && x.path === path,
  );
  return r?.response.schema as object;
};
const expectSchema = (schema: object, body: unknown) => {
  const validate = ajv.compile(schema);
  if (!validate(body)) throw new Error(ajv.errorsText(validate.errors));
};

describe('v2 and v3 alone (createV2App)', () => {
  it('answers what it wrote without reading the database after the commit (licenses, subscriptions, change of plan)', async () => {
    // Each request runs on a core that fails every call made after its write resolved, as an outage would.
    const after = async (write: string, version: 'v2' | 'v3', method: 'post' | 'put', path: string, body: object) => {
      const core = coreDownAfter(world.core, write);
      const res = await request(createV2App({ ...world, core }))
        [method](path)
        .set('x-api-key', org.liveKey)
        .set('version', version)
        .send(body);
      expect([res.status, core.wrote()]).toEqual([200, true]);
      return res.body;
    };
    const created = await after('subscriptionAdmin.create', 'v2', 'post', '/subscriptions', {
      planUuid: org.keys['plans.notes.free'],
      granteeId: 'ac',
      owner: 'ac-owner',
    });
    expect(created).toMatchObject({ owner: 'ac-owner', planUuid: org.keys['plans.notes.free'] });
    const moved = await after('subscriptionAdmin.updateOwner', 'v2', 'put', `/subscriptions/${created.uuid}`, { owner: 'ac-next' });
    expect(moved).toMatchObject({ uuid: created.uuid, owner: 'ac-next' });
    // v3's change of plan answers the subscription it moved, also from its own transaction.
    const bought = (await purchase(world, org.keys['plans.notes.team'], 'ac-team', 2)).subscription.id;
    const changed = await after('subscriptions.changePlan', 'v3', 'put', `/subscriptions/${bought}/change-plan`, {
      planUuid: org.keys['plans.notes.business'],
    });
    expect(changed).toMatchObject({ uuid: bought, planUuid: org.keys['plans.notes.business'] });
    // Licenses: the ad hoc license with its capabilities, and a grantee and end moved.
    const license = await after('licenses.createAdHoc', 'v2', 'post', '/licenses', {
      planUuid: org.keys['plans.notes.free'],
      member: 'm',
      granteeId: 'ac-license',
    });
    expect(license).toMatchObject({ granteeId: 'ac-license', capabilities: [expect.objectContaining({ name: 'edit' })] });
    const later = new Date(world.clock.now().getTime() + 86400_000).toISOString();
    const updated = await after('licenses.update', 'v2', 'put', `/licenses/${license.uuid}`, { granteeId: 'ac-other', endTime: later });
    expect(updated).toMatchObject({ uuid: license.uuid, granteeId: 'ac-other', endTime: later });
    expect((await api('v2').get(`/licenses/${license.uuid}`).expect(200)).body).toEqual(updated);
  });

  it('is a complete service: health and readiness without a key; the version header picks v2 or v3; any other is 400 naming both', async () => {
    await request(app).get('/healthz').expect(200);
    await request(app).get('/readyz').expect(200);
    expect((await api('v2').get('/products').expect(200)).body).toEqual(expect.any(Array));
    expect((await api('v3').get('/products').expect(200)).body).toMatchObject({ data: expect.any(Array) });
    for (const v of [null, 'v1', 'v4']) {
      const res = await api(v).get('/products').expect(400);
      expect(res.body).toMatchObject({ code: 'VALIDATION_FAILED', error: expect.stringMatching(/the supported versions are v2 and v3$/) });
    }
  });

  it('answers bad input with 400 naming the field, unknown paths with 404, in the shape the SDK reads', async () => {
    const sub = (await purchase(world, org.keys['plans.notes.team'], 'v2-bad', 2)).subscription.id;
    const bad = await api('v3').post(`/subscriptions/${sub}/seats`, { increment: 0 }).expect(400);
    expect(bad.body.validationErrors).toEqual(
      expect.arrayContaining([expect.objectContaining({ property: expect.stringMatching(/increment/) })]),
    );
    const both = await api('v3')
      .put(`/subscriptions/${sub}/manage-seats`, [{ type: 'replace', granteeId: 'v2-bad' }])
      .expect(400);
    expect(JSON.stringify(both.body.validationErrors)).toMatch(/newGranteeId/);
    const seat = await api('v2')
      .put(`/subscriptions/${sub}/manage-seats`, [{ type: 'assign', granteeId: 'v2-bad' }])
      .expect(400);
    expect(seat.body.validationErrors).toEqual([{ property: '[0].granteeId', error: 'v2-bad already holds a seat of this subscription' }]);
    await api('v2').get('/subscriptions?take=0').expect(400);
    await api('v2').get('/subscriptions?cursor=nope').expect(400);
    await api('v3').get(`/pricing-tables/${org.keys['pricingTables.notes.main']}`).expect(400);
    await api('v3').get('/licenses').expect(404);
    await api('v2').get('/features').expect(404);
    const create = await api('v2').post('/subscriptions', { planUuid: org.keys['plans.notes.free'], granteeId: 'g' }).expect(400);
    expect(JSON.stringify(create.body)).toMatch(/owner/);
    // v2-bad's own seat: given to another grantee, the one-seat rule would refuse it first.
    const seatId = (await api('v2').get(`/subscriptions/${sub}/seats`).expect(200)).body.data.find(
      (x: { granteeId: string | null }) => x.granteeId === 'v2-bad',
    ).uuid;
    const later = new Date(world.clock.now().getTime() + 86400_000).toISOString();
    // A refusal that is 409 in v1 is 400 in v2/v3 (the SDK reads the body of a 400 only), same body and code.
    expect((await api('v2').put(`/licenses/${seatId}`, { granteeId: 'v2-bad', endTime: later }).expect(400)).body.code).toBe('CONFLICT');
    // Except a request still in progress under its idempotency key: 409, retried later (a 400 says: do not retry).
    expect([
      VERSION_ERROR_STATUS.IDEMPOTENCY_KEY_IN_USE,
      VERSION_ERROR_STATUS.CONFLICT,
      VERSION_ERROR_STATUS.IDEMPOTENCY_KEY_REUSED,
    ]).toEqual([409, 400, 400]);
    const past = await api('v2').put(`/licenses/${seatId}`, { granteeId: 'v2-bad', endTime: '2001-01-01T00:00:00Z' }).expect(400);
    expect(past.body.code).toBe('CONFLICT');
    const adHoc = (await api('v2').post('/licenses', { planUuid: org.keys['plans.notes.free'], member: 'm', granteeId: 'x' }).expect(200))
      .body;
    const early = await api('v2').put(`/licenses/${adHoc.uuid}`, { granteeId: 'x', endTime: '2001-01-01T00:00:00Z' }).expect(400);
    expect(early.body.validationErrors).toEqual([{ property: 'endTime', error: 'must lie in the future' }]);
    const expiry = await api('v2')
      .post('/subscriptions', { planUuid: org.keys['plans.notes.free'], granteeId: 'g', owner: 'o', expiryDate: '2001-01-01T00:00:00Z' })
      .expect(400);
    expect(expiry.body.validationErrors).toEqual([{ property: 'expiryDate', error: 'must lie in the future' }]);
  });

  it("keeps tenants apart: another organisation's subscription, seats and usage are refused, its lists are empty", async () => {
    const sub = (await purchase(world, org.keys['plans.notes.team'], 'v2-iso', 2)).subscription.id;
    for (const path of [`/subscriptions/${sub}`, `/subscriptions/${sub}/seats`, `/subscriptions/${sub}/seats/count`])
      expect([403, 404]).toContain((await api('v3', other.liveKey).get(path)).status);
    expect([403, 404]).toContain((await api('v3', other.liveKey).put(`/subscriptions/${sub}`, { owner: 'thief' })).status);
    expect((await api('v3', other.liveKey).get('/subscriptions?owner=buyer@example.com').expect(200)).body).toEqual({
      first: null,
      last: null,
      data: [],
    });
    expect(
      (await api('v2', other.liveKey).get(`/usage/current?granteeId=v2-iso&planUuid=${org.keys['plans.notes.team']}`)).status,
    ).toBeGreaterThanOrEqual(403);
    // The test key of the same organisation sees none of the live records.
    expect((await api('v2', org.testKey).get('/subscriptions').expect(200)).body.data).toEqual([]);
  });

  it('copes with what the SDK sends: `=undefined` options read as absent, `unique-key: undefined` as no key', async () => {
    await purchase(world, org.keys['plans.notes.team'], 'v2-quirks', 2);
    const page = await api('v2').get('/subscriptions?status=undefined&take=2&email=undefined').expect(200);
    expectSchema(schemaOf('v2', 'get', '/subscriptions'), page.body);
    expect(page.body.data).toHaveLength(2);
    const plan = org.keys['plans.notes.team'];
    const body = { granteeId: 'v2-quirks', planUuid: plan, countOptions: { increment: 2 } };
    for (let i = 0; i < 2; i++) {
      const res = await api('v3').put('/usage', body).set('unique-key', 'undefined').expect(200);
      expect(res.headers['content-length']).toBe('0');
    }
    // A real key counts once.
    await api('v3').put('/usage', body).set('unique-key', 'k-1').expect(200);
    await api('v3').put('/usage', body).set('unique-key', 'k-1').expect(200);
    const records = await api('v2').get('/usage?granteeId=v2-quirks&type=undefined').expect(200);
    expectSchema(schemaOf('v2', 'get', '/usage'), records.body);
    expect(records.body.data.map((r: { unitCount: number }) => r.unitCount)).toEqual([2, 2, 2]);
    expect((await api('v2').get('/usage?granteeId=v2-quirks&type=final').expect(200)).body.data).toEqual([]);
    const subOf = (await api('v2').get(`/licenses/granteeId/v2-quirks`).expect(200)).body[0].subscriptionUuid;
    expect((await api('v2').get(`/usage?granteeId=v2-quirks&subscriptionUuid=${subOf}&take=1`).expect(200)).body.data).toHaveLength(1);
    const current = await api('v3').get(`/usage/current?granteeId=v2-quirks&planUuid=${plan}`).expect(200);
    expectSchema(schemaOf('v3', 'get', '/usage/current'), current.body);
    expect(current.body.unitCount).toBe(6);
    // Bodiless PUTs (cancel, reactivate) carry Content-Type JSON and Content-Length 0; void answers send Content-Length 0.
    const sub = (await api('v2').get('/subscriptions?owner=buyer@example.com&sort=desc&take=1').expect(200)).body.data[0].uuid;
    const cancel = await api('v2').put(`/subscriptions/${sub}/cancel?when=end`).set('content-type', 'application/json').expect(204);
    expect(cancel.headers['content-length']).toBe('0');
  });

  it('PUT /usage takes a decimal increment exactly on a meter with decimal places; a whole-unit meter answers a fraction as before', async () => {
    const dec = await seedOrganisation(world, 'v2-decimal');
    // The plan's usage feature (`projects`) counts on a meter made beforehand with three decimal places.
    await world.core.usage.createMeter(dec.tenant, { slug: 'projects', name: 'Project hours', scale: 3 });
    await purchase(world, dec.keys['plans.notes.team'], 'v2-dec', 2);
    const plan = dec.keys['plans.notes.team'];
    const put = (increment: unknown, version = 'v2') =>
      api(version, dec.liveKey).put('/usage', { granteeId: 'v2-dec', planUuid: plan, countOptions: { increment } });
    await put(1.25).set('unique-key', 'dec-1').expect(200);
    await put(1.25).set('unique-key', 'dec-1').expect(200);
    await put(0.5, 'v3').expect(200);
    await put(0.1).expect(200);
    const current = await api('v3', dec.liveKey).get(`/usage/current?granteeId=v2-dec&planUuid=${plan}`).expect(200);
    expectSchema(schemaOf('v3', 'get', '/usage/current'), current.body);
    expect(current.body.unitCount).toBe(1.85);
    const records = await api('v2', dec.liveKey).get('/usage?granteeId=v2-dec').expect(200);
    expectSchema(schemaOf('v2', 'get', '/usage'), records.body);
    // One record per counted increment, in the meter's units (the test clock gives them one time).
    expect(records.body.data.map((r: { unitCount: number }) => r.unitCount).sort()).toEqual([0.1, 0.5, 1.25]);
    for (const [increment, error] of [
      [0.0001, "must have at most 3 decimal places (the meter's scale)"],
      // 0.1 + 0.2 as a client computes it is 0.30000000000000004: refused, not rounded.
      [0.1 + 0.2, 'must have at most 15 significant digits'],
      [0, 'must be greater than 0'],
      [-0.5, 'must be greater than 0'],
      // The bound in the meter's units (10^12 steps of a 3-place meter), not its count of steps.
      [1e10, 'must be at most 1000000000'],
    ] as const) {
      const res = await put(increment).expect(400);
      expect(res.body).toMatchObject({ code: 'VALIDATION_FAILED', validationErrors: [{ property: 'countOptions.increment', error }] });
    }
    // Nothing the refusals carried was counted.
    expect((await api('v2', dec.liveKey).get(`/usage/current?granteeId=v2-dec&planUuid=${plan}`).expect(200)).body.unitCount).toBe(1.85);
    // On a whole-unit meter (org's `projects`, made on first use) a fraction is refused with the message it always had.
    await purchase(world, org.keys['plans.notes.team'], 'v2-whole', 2);
    const whole = await api('v3')
      .put('/usage', { granteeId: 'v2-whole', planUuid: org.keys['plans.notes.team'], countOptions: { increment: 1.5 } })
      .expect(400);
    expect(whole.body).toEqual({
      error: 'countOptions.increment must be integer',
      code: 'VALIDATION_FAILED',
      validationErrors: [{ property: 'countOptions.increment', error: 'must be integer' }],
    });
  });

  it('v2 and v3 views differ where the SDK says: v3 drops name, appType and the legacy plan flags, and pages its lists', async () => {
    const product = org.keys['products.notes'];
    const v2 = (await api('v2').get(`/products/${product}`).expect(200)).body;
    const v3 = (await api('v3').get(`/products/${product}?expand=organisationPaymentIntegration`).expect(200)).body;
    expect(v2).toMatchObject({ name: expect.any(String), appType: expect.any(String), slug: 'notes' });
    expect(v3).not.toHaveProperty('name');
    expect(v3).not.toHaveProperty('appType');
    expect(v3).toHaveProperty('organisationPaymentIntegration');
    const plan = (await api('v3').get(`/plans/${org.keys['plans.notes.team']}`).expect(200)).body;
    for (const gone of ['name', 'trialDays', 'evaluation', 'active', 'planType', 'environment']) expect(plan).not.toHaveProperty(gone);
    const features = await api('v3').get(`/features?productUuid=${product}&take=2`).expect(200);
    expect(features.body.data.map((f: { variableName: string }) => f.variableName)).toEqual(['projects', 'theme']);
    const next = await api('v3').get(`/features?productUuid=${product}&take=2&cursor=${features.body.last}`).expect(200);
    expect(next.body.data.map((f: { variableName: string }) => f.variableName)).toEqual(['sso']);
    const desc = await api('v3').get(`/features?productUuid=${product}&sort=desc&take=1`).expect(200);
    expect(desc.body.data[0].variableName).toBe('sso');
  });

  it('shows a pricing table in one currency, marking the plans the customer (v3 owner) or grantee (v2) holds', async () => {
    await purchase(world, org.keys['plans.notes.team'], 'pt-grantee', 2);
    const table = org.keys['pricingTables.notes.main'];
    const team = org.keys['plans.notes.team'];
    const v3 = await api('v3').get(`/pricing-tables/${table}?owner=buyer@example.com&currency=eur`).expect(200);
    expectSchema(schemaOf('v3', 'get', '/pricing-tables/:pricingTableUuid'), v3.body);
    const byPlan = Object.fromEntries(
      v3.body.plans.map((p: { planUuid: string; plan: { isSubscribed: boolean } }) => [p.planUuid, p.plan]),
    );
    expect(byPlan[team].isSubscribed).toBe(true);
    expect(byPlan[org.keys['plans.notes.free']].isSubscribed).toBe(false);
    expect(byPlan[team].currencies.map((c: { currency: { shortName: string } }) => c.currency.shortName)).toEqual(['EUR']);
    expect(v3.body.product.currencies.map((c: { currency: { shortName: string } }) => c.currency.shortName)).toEqual(['EUR']);
    const v2 = await api('v2').get(`/products/${org.keys['products.notes']}/pricingtable?granteeId=pt-grantee`).expect(200);
    expect(v2.body.plans.find((p: { uuid: string }) => p.uuid === team).isSubscribed).toBe(true);
    expect((await api('v2').get(`/pricing-tables/${table}`).expect(200)).body.plans[0].plan).not.toHaveProperty('isSubscribed');
    const bad = await api('v2').get(`/pricing-tables/${table}?currency=JPY`).expect(400);
    expect(bad.body.validationErrors).toEqual([{ property: 'currency', error: 'the product is sold in USD, EUR' }]);
  });

  it('lists subscriptions with their plans on expand=plan; a status only the real service has gives an empty page', async () => {
    await purchase(world, org.keys['plans.notes.team'], 'list-plan', 2);
    const page = await api('v3').get('/subscriptions?expand=plan&take=3').expect(200);
    expectSchema(schemaOf('v3', 'get', '/subscriptions'), page.body);
    for (const s of page.body.data) expect(s.plan.uuid).toBe(s.planUuid);
    expect((await api('v2').get('/subscriptions?status=PAUSED').expect(200)).body).toEqual({ first: null, last: null, data: [] });
    await api('v2').get('/subscriptions?status=paused').expect(400);
    await api('v2').get('/subscriptions?expand=owner').expect(400);
  });

  it('serves an OpenAPI document per version from its route table', () => {
    const ops = (v: Version) =>
      versionRoutes({ ...world, config: { publicUrl: 'http://x' } } as never, v).map((r) => `${r.method} ${r.path}`);
    expect(ops('v2')).toContain('get /plans/:planUuid/checkoutlink');
    expect(ops('v3')).toContain('get /plans/:planUuid/checkout-link');
    for (const v of ['v2', 'v3'] as const) {
      const routes = versionRoutes({ ...world, config: { publicUrl: 'http://x' } } as never, v);
      expect(new Set(routes.map((r) => r.operationId)).size).toBe(routes.length);
      for (const r of routes) expect(r.description.length).toBeGreaterThan(10);
    }
  });
});
