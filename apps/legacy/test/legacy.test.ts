import { verify, webcrypto } from 'node:crypto';
import request from 'supertest';
import { sql } from 'kysely';
import { ajv, checkSchema, legacyErrorSchema, legacyPlanSchema, legacyProductSchema, licenseSchema } from '@tollgate/http';
import { publicKeyFromUncompressedHex } from '@tollgate/adapter-hmac';
import { createTestWorld, purchase, seedOrganisation, type SeededOrg, type TestWorld } from '@tollgate/runtime/testing';
import { createLegacyApp, legacyFeatureWithOptionsSchema, legacyPlanFeatureSchema } from '../src';

const DAY = 86_400_000;
let world: TestWorld;
let app: ReturnType<typeof createLegacyApp>;
let a: SeededOrg;
let b: SeededOrg;

function expectSchema(schema: object, body: unknown) {
  const validate = ajv.compile(schema);
  if (!validate(body)) throw new Error(`response does not match the contract: ${ajv.errorsText(validate.errors)}\n${JSON.stringify(body)}`);
}
const arrayOf = (items: object) => ({ type: 'array', items });

beforeAll(async () => {
  world = await createTestWorld();
  app = createLegacyApp(world);
  a = await seedOrganisation(world, 'acme');
  b = await seedOrganisation(world, 'globex');
  await purchase(world, a.keys['plans.notes.team'], 'alice', 3);
  await purchase(world, a.testKeys['plans.notes.business'], 'alice', 1);
});
afterAll(() => world?.close());

const get = (path: string, key?: string) => {
  const r = request(app).get(path);
  return key ? r.set('x-api-key', key) : r;
};

describe('legacy products, plans and features', () => {
  it("GET /products lists the key organisation's products in the contract shape", async () => {
    const res = await get('/products', a.liveKey).expect(200);
    expect(res.headers['content-type']).toBe('application/json');
    expectSchema(arrayOf(legacyProductSchema), res.body);
    expect(res.body.map((p: { uuid: string }) => p.uuid)).toEqual([a.keys['products.notes']]);
    expect(res.body[0]).toMatchObject({ name: 'notes-app', displayName: 'Notes', status: 'ACTIVE', paid: true, logoUrl: null });
  });

  it('GET /products/:uuid/plans lists its plans', async () => {
    const res = await get(`/products/${a.keys['products.notes']}/plans`, a.liveKey).expect(200);
    expectSchema(arrayOf(legacyPlanSchema), res.body);
    expect(res.body.map((p: { displayName: string }) => p.displayName)).toEqual(['Free', 'Team', 'Business', 'Metered', 'Metered Pro']);
    expect(res.body[1]).toMatchObject({
      licenseType: 'perSeat',
      evaluation: true,
      evalDays: 14,
      pricingType: 'paid',
      interval: 'month',
      length: 1,
    });
  });

  it('GET /products/:uuid/features includes featureEnumOptions (empty unless enum)', async () => {
    const res = await get(`/products/${a.keys['products.notes']}/features`, a.liveKey).expect(200);
    expectSchema(arrayOf(legacyFeatureWithOptionsSchema), res.body);
    expect(res.body.map((f: { featureEnumOptions: { name: string }[] }) => f.featureEnumOptions.map((o) => o.name))).toEqual([
      [],
      ['light', 'dark'],
      [],
    ]);
  });

  it('GET /plans/:uuid/features gives values with feature and enumValue', async () => {
    const res = await get(`/plans/${a.keys['plans.notes.team']}/features`, a.liveKey).expect(200);
    expectSchema(arrayOf(legacyPlanFeatureSchema), res.body);
    const theme = res.body.find((f: { feature: { name: string } }) => f.feature.name === 'theme');
    expect(theme).toMatchObject({ value: '', enumValue: { name: 'dark' } });
    expect(res.body.find((f: { feature: { name: string } }) => f.feature.name === 'projects')).toMatchObject({
      isUnlimited: true,
      enumValue: null,
    });
  });
});

describe('legacy capability check', () => {
  const check = (query: string, key = a.liveKey) => get(`/licenses/check?${query}`, key);

  it('returns the capabilities of the grantees with a signature the public key alone verifies', async () => {
    const res = await check(`productUuid=${a.keys['products.notes']}&granteeIds=[alice]`).expect(200);
    expectSchema(checkSchema, res.body);
    expect(res.body.capabilities).toEqual(['edit', 'export']);
    expect(res.body.capsHashed).toBe('edit,export');
    const key = publicKeyFromUncompressedHex(res.body.publicHash);
    expect(verify('sha256', Buffer.from(res.body.capsHashed), key, Buffer.from(res.body.signature, 'hex'))).toBe(true);
    expect(verify('sha256', Buffer.from('edit,exporx'), key, Buffer.from(res.body.signature, 'hex'))).toBe(false);
  });

  it('gives a WebCrypto-verifiable signature with sigEncode=P1363', async () => {
    const res = await check(`productUuid=${a.keys['products.notes']}&granteeIds=alice,bob&sigEncode=P1363`).expect(200);
    const key = await webcrypto.subtle.importKey(
      'raw',
      Buffer.from(res.body.publicHash, 'hex'),
      { name: 'ECDSA', namedCurve: 'P-256' },
      false,
      ['verify'],
    );
    const ok = (m: string) =>
      webcrypto.subtle.verify({ name: 'ECDSA', hash: 'SHA-256' }, key, Buffer.from(res.body.signature, 'hex'), Buffer.from(m));
    expect(await ok(res.body.capsHashed)).toBe(true);
    expect(await ok(`${res.body.capsHashed}x`)).toBe(false);
  });

  it('adds grace days to the end dates, refuses grace of 0 or below, and drops expired licenses', async () => {
    const plain = (await check(`productUuid=${a.keys['products.notes']}&granteeIds=alice`).expect(200)).body;
    const graced = (await check(`productUuid=${a.keys['products.notes']}&granteeIds=alice&grace=3`).expect(200)).body;
    expect(new Date(graced.capabilitiesEndDates.edit).getTime() - new Date(plain.capabilitiesEndDates.edit).getTime()).toBe(3 * DAY);
    for (const g of ['0', '-2', '1.5', 'x']) {
      const res = await check(`productUuid=${a.keys['products.notes']}&granteeIds=alice&grace=${g}`).expect(400);
      expectSchema(legacyErrorSchema, res.body);
      expect(res.body.code).toBe('CHECK_GRACE_INVALID');
    }
    const end = new Date(plain.capabilitiesEndDates.edit).getTime();
    world.clock.set(new Date(end + DAY));
    try {
      await check(`productUuid=${a.keys['products.notes']}&granteeIds=alice`).expect(204);
      await check(`productUuid=${a.keys['products.notes']}&granteeIds=alice&grace=2`).expect(200);
    } finally {
      world.clock.set(new Date());
    }
  });

  it('answers 204 for grantees with nothing, 400 for missing parameters, 404 for an unknown product', async () => {
    await check(`productUuid=${a.keys['products.notes']}&granteeIds=nobody`).expect(204);
    expect((await check(`granteeIds=alice`).expect(400)).body.validationErrors).toEqual([
      { property: 'productUuid', error: 'is required' },
    ]);
    await check(`productUuid=${a.keys['products.notes']}`).expect(400);
    await check(`productUuid=${a.keys['products.notes']}&granteeIds=[]`).expect(400);
    const unknown = await check(`productUuid=00000000-0000-4000-8000-000000000000&granteeIds=alice`).expect(404);
    expect(unknown.body).toEqual({ error: 'product not found', code: 'NOT_FOUND' });
  });
});

describe('legacy POST /licenses', () => {
  const post = (body: unknown, key = a.liveKey) =>
    request(app)
      .post('/licenses')
      .set('x-api-key', key)
      .send(body as object);

  it('creates one ad hoc license (201) and shows it in the check', async () => {
    const res = await post({ planUuid: a.keys['plans.notes.free'], member: 'm@example.com', granteeId: 'carol' }).expect(201);
    expectSchema(licenseSchema, res.body);
    expect(res.body).toMatchObject({
      granteeId: 'carol',
      status: 'ACTIVE',
      endTime: null,
      capabilities: [{ name: 'edit' }],
      isTest: false,
    });
    const check = await get(`/licenses/check?productUuid=${a.keys['products.notes']}&granteeIds=carol`, a.liveKey).expect(200);
    expect(check.body.capabilities).toEqual(['edit']);
  });

  it('creates several at once (array in, array out); an evaluation plan gives EVALUATION', async () => {
    const res = await post([
      { planUuid: a.keys['plans.notes.team'], member: 'm', granteeId: null },
      { planUuid: a.keys['plans.notes.free'], member: 'm', granteeId: 'dave' },
    ]).expect(201);
    expectSchema(arrayOf(licenseSchema), res.body);
    expect(res.body.map((l: { status: string }) => l.status)).toEqual(['EVALUATION', 'ACTIVE']);
  });

  it('validates planUuid, member and granteeId (400) and refuses paid plans (400), all or nothing', async () => {
    const bad = await post({ planUuid: 'nope', granteeId: 5 }).expect(400);
    expectSchema(legacyErrorSchema, bad.body);
    expect(bad.body.code).toBe('VALIDATION_FAILED');
    await post({ planUuid: a.keys['plans.notes.free'], member: 'm' }).expect(400);
    await post('not json at all').set('content-type', 'application/json').expect(400);
    const before = (await get(`/licenses/check?productUuid=${a.keys['products.notes']}&granteeIds=erin`, a.liveKey)).status;
    expect(before).toBe(204);
    const paid = await post([
      { planUuid: a.keys['plans.notes.free'], member: 'm', granteeId: 'erin' },
      { planUuid: a.keys['plans.notes.business'], member: 'm', granteeId: 'erin' },
    ]).expect(400);
    expect(paid.body.code).toBe('PLAN_NOT_FREE_OR_EVALUATION');
    await get(`/licenses/check?productUuid=${a.keys['products.notes']}&granteeIds=erin`, a.liveKey).expect(204);
    await post({ planUuid: '00000000-0000-4000-8000-000000000000', member: 'm', granteeId: 'x' }).expect(404);
  });
});

describe('legacy authentication, scopes and tenancy', () => {
  const paths = () => [
    `/products/${a.keys['products.notes']}/plans`,
    `/products/${a.keys['products.notes']}/features`,
    `/plans/${a.keys['plans.notes.team']}/features`,
    `/licenses/check?productUuid=${a.keys['products.notes']}&granteeIds=alice`,
  ];

  it('answers 401 without a key, with an unknown key and with a revoked key', async () => {
    for (const p of ['/products', ...paths()]) {
      const res = await get(p).expect(401);
      expectSchema(legacyErrorSchema, res.body);
      await get(p, 'live_unknownkey').expect(401);
    }
    const apiKeys = world.core.apiKeys;
    const created = await apiKeys.create({ organisation: 'acme', scopes: ['*'], isTest: false });
    await get('/products', created.plaintext).expect(200);
    await apiKeys.revoke(created.record.id);
    await get('/products', created.plaintext).expect(401);
  });

  it('answers 403 on every product, plan and license path of another organisation', async () => {
    for (const p of paths()) {
      const res = await get(p, b.liveKey).expect(403);
      expect(res.body.code).toBe('FORBIDDEN');
    }
    const res = await request(app)
      .post('/licenses')
      .set('x-api-key', b.liveKey)
      .send({ planUuid: a.keys['plans.notes.free'], member: 'm', granteeId: 'x' })
      .expect(403);
    expect(res.body.code).toBe('FORBIDDEN');
  });

  it('answers 403 when the key lacks the scope', async () => {
    await get('/products', a.readOnlyKey).expect(200);
    await request(app)
      .post('/licenses')
      .set('x-api-key', a.readOnlyKey)
      .send({ planUuid: a.keys['plans.notes.free'], member: 'm', granteeId: 'x' })
      .expect(403);
  });

  it("keeps test and live apart on every path: the other mode's record is 404", async () => {
    const testProducts = (await get('/products', a.testKey).expect(200)).body;
    expect(testProducts.map((p: { uuid: string }) => p.uuid)).toEqual([a.testKeys['products.notes']]);
    for (const p of paths()) expect((await get(p, a.testKey).expect(404)).body.code).toBe('NOT_FOUND');
    const testPaths = [
      `/products/${a.testKeys['products.notes']}/plans`,
      `/products/${a.testKeys['products.notes']}/features`,
      `/plans/${a.testKeys['plans.notes.team']}/features`,
    ];
    for (const p of testPaths) {
      await get(p, a.testKey).expect(200);
      await get(p, a.liveKey).expect(404);
    }
    const testCheck = await get(`/licenses/check?productUuid=${a.testKeys['products.notes']}&granteeIds=alice`, a.testKey).expect(200);
    expect(testCheck.body.capabilities).toEqual(['admin', 'edit', 'export']);
    await get(`/licenses/check?productUuid=${a.testKeys['products.notes']}&granteeIds=alice`, a.liveKey).expect(404);
    const created = await request(app)
      .post('/licenses')
      .set('x-api-key', a.testKey)
      .send({ planUuid: a.testKeys['plans.notes.free'], member: 'm', granteeId: 'tess' })
      .expect(201);
    expect(created.body.isTest).toBe(true);
    await request(app)
      .post('/licenses')
      .set('x-api-key', a.testKey)
      .send({ planUuid: a.keys['plans.notes.free'], member: 'm', granteeId: 'tess' })
      .expect(404);
  });

  it('answers 404 in the error shape for unknown paths and unknown ids, 400 for a malformed id', async () => {
    expectSchema(legacyErrorSchema, (await get('/nowhere', a.liveKey).expect(404)).body);
    const unknown = await get('/products/00000000-0000-4000-8000-000000000000/plans', a.liveKey).expect(404);
    expectSchema(legacyErrorSchema, unknown.body);
    expect(unknown.body.code).toBe('NOT_FOUND');
    await get('/plans/not-a-uuid/features', a.liveKey).expect(400);
  });

  it('never stores API keys in plain text', async () => {
    const rows = await sql<{ row: string }>`select row_to_json(k)::text as row from api_keys k`.execute(world.db.db);
    expect(rows.rows.length).toBeGreaterThanOrEqual(6);
    for (const key of [a.liveKey, a.testKey, a.readOnlyKey, b.liveKey]) {
      for (const r of rows.rows) {
        expect(r.row).not.toContain(key);
        expect(r.row).not.toContain(key.slice(9));
      }
    }
  });
});

describe('legacy check input', () => {
  it('refuses a productUuid that is not a uuid with 400, not a fault', async () => {
    const res = await get('/licenses/check?productUuid=not-a-uuid&granteeIds=alice', a.liveKey).expect(400);
    expect(res.body.validationErrors[0].property).toBe('productUuid');
  });
});
