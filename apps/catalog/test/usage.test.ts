import { createPublicKey, createVerify } from 'node:crypto';
import request from 'supertest';
import { createTestWorld, purchase, seedOrganisation, type SeededOrg, type TestWorld } from '@tollgate/runtime/testing';
import { createCatalogApp } from '../src';
import { catalogApi } from './helpers';

let world: TestWorld;
let org: SeededOrg;
let other: SeededOrg;
let app: ReturnType<typeof createCatalogApp>;

beforeAll(async () => {
  world = await createTestWorld();
  org = await seedOrganisation(world, 'usage-org');
  other = await seedOrganisation(world, 'usage-other');
  app = createCatalogApp(world);
});
afterAll(() => world?.close());

// Every answer is checked against its route's response schema by the response audit (jest.after-env.js).
const api = (key = org.liveKey) => catalogApi(app, key);

describe('catalog usage', () => {
  beforeAll(async () => {
    expect((await api().post('/api/meters', { slug: 'tokens', name: 'Tokens', unitLabel: 'token' })).status).toBe(201);
  });

  it('creates and lists meters; a taken slug is 409, a bad one 400', async () => {
    expect((await api().post('/api/meters', { slug: 'tokens', name: 'again' })).status).toBe(409);
    const bad = await api().post('/api/meters', { slug: 'Not OK', name: 'x' });
    expect(bad.status).toBe(400);
    const list = await api().get('/api/meters');
    expect(list.status).toBe(200);
    expect(list.body.data.map((m: { slug: string }) => m.slug)).toEqual(['tokens']);
    expect((await api(other.liveKey).get('/api/meters')).body.data).toEqual([]);
  });

  it('grants, consumes (denial is 200 allowed:false), and reads balances', async () => {
    const grant = await api().post('/api/credits/grants', { owner: 'acme', meterSlug: 'tokens', amount: 100, priority: 10 });
    expect(grant.status).toBe(201);
    expect(grant.body.data).toMatchObject({ granted: 100, remaining: 100, owner: 'acme' });
    const ok = await api().post('/api/usage/consume', { owner: 'acme', meterSlug: 'tokens', quantity: 60 });
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({ type: 'object', data: expect.objectContaining({ allowed: true, remaining: 40, used: 60, granted: 100 }) });
    const no = await api().post('/api/usage/consume', { owner: 'acme', meterSlug: 'tokens', quantity: 41 });
    expect(no.status).toBe(200);
    expect(no.body.data).toMatchObject({ allowed: false, remaining: 40, used: 60 });
    const balances = await api().get('/api/balances?owner=acme');
    expect(balances.body.data).toEqual([
      expect.objectContaining({ owner: 'acme', meterSlug: 'tokens', granted: 100, used: 60, reserved: 0, remaining: 40 }),
    ]);
    expect((await api().get('/api/balances?owner=acme&meterSlug=nope')).status).toBe(400);
    expect((await api(other.liveKey).get('/api/balances?owner=acme')).body.data).toEqual([]);
  });

  it('reserve -> commit returns the rest; release is 204; a settled hold is 409, another tenant 403', async () => {
    await api().post('/api/credits/grants', { owner: 'llm', meterSlug: 'tokens', amount: 1000 });
    const hold = await api().post('/api/usage/reservations', { owner: 'llm', meterSlug: 'tokens', quantity: 800, ttlSeconds: 60 });
    expect(hold.status).toBe(201);
    expect(hold.body.data).toMatchObject({ allowed: true, reserved: 800, remaining: 200, quantity: 800 });
    const denied = await api().post('/api/usage/reservations', { owner: 'llm', meterSlug: 'tokens', quantity: 201, ttlSeconds: 60 });
    expect(denied.status).toBe(200);
    expect(denied.body.data.allowed).toBe(false);
    expect((await api(other.liveKey).post(`/api/usage/reservations/${hold.body.data.id}/commit`, { quantity: 1 })).status).toBe(403);
    const commit = await api().post(`/api/usage/reservations/${hold.body.data.id}/commit`, { quantity: 350 });
    expect(commit.status).toBe(200);
    expect(commit.body.data).toMatchObject({ used: 350, reserved: 0, remaining: 650 });
    expect((await api().post(`/api/usage/reservations/${hold.body.data.id}/release`)).status).toBe(409);
    const second = await api().post('/api/usage/reservations', { owner: 'llm', meterSlug: 'tokens', quantity: 10, ttlSeconds: 60 });
    const released = await api().post(`/api/usage/reservations/${second.body.data.id}/release`);
    expect(released.status).toBe(204);
    expect(released.text).toBe('');
  });

  it('records with idempotency-key: a replay counts once and answers the same; another body is 409', async () => {
    const body = { owner: 'rec', meterSlug: 'tokens', increment: 3 };
    // As published: 204, nothing in the body.
    const first = await api().post('/api/usage/record', body, 'rec-1');
    expect(first.status).toBe(204);
    expect(first.text).toBe('');
    // Prefer: return=representation answers the balance after it (a replay: the first answer).
    const again = await api().post('/api/usage/record', body, 'rec-1').set('prefer', 'return=representation');
    expect(again.status).toBe(200);
    expect(again.body.data).toMatchObject({ owner: 'rec', used: 3 });
    expect((await api().post('/api/usage/record', { ...body, increment: 4 }, 'rec-1')).status).toBe(409);
    expect((await api().post('/api/usage/record', body, 'x'.repeat(256))).status).toBe(400);
    const records = await api().get('/api/usage-records?owner=rec');
    expect(records.body.data).toEqual([
      expect.objectContaining({ owner: 'rec', meterSlug: 'tokens', type: 'record', count: 3, idempotencyKey: 'rec-1' }),
    ]);
  });

  it('refuses bad input naming the field with nothing written', async () => {
    for (const [body, field] of [
      [{ owner: 'bad', meterSlug: 'tokens', quantity: 0 }, 'quantity'],
      [{ owner: 'bad', meterSlug: 'tokens', quantity: -3 }, 'quantity'],
      [{ owner: 'bad', meterSlug: 'tokens', quantity: 1e13 }, 'quantity'],
      [{ owner: 'bad', meterSlug: 'nope', quantity: 1 }, 'meterSlug'],
      [{ owner: '', meterSlug: 'tokens', quantity: 1 }, 'owner'],
    ] as const) {
      const res = await api().post('/api/usage/consume', body);
      expect(res.status).toBe(400);
      expect(JSON.stringify(res.body)).toContain(field);
    }
    expect((await api().get('/api/balances?owner=bad')).body.data).toEqual([]);
  });

  it("answers a grantee's entitlements with meter entries, signed, with an expiry", async () => {
    await purchase(world, org.keys['plans.notes.team'], 'ent-grantee', 2);
    await api().post('/api/credits/grants', { owner: 'ent-grantee', meterSlug: 'tokens', amount: 50 });
    await api().post('/api/usage/consume', { owner: 'ent-grantee', meterSlug: 'tokens', quantity: 20 });
    const res = await api().get('/api/entitlements/check?granteeId=ent-grantee');
    expect(res.status).toBe(200);
    const data = res.body.data;
    expect(data.entitlements).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ type: 'entitlement', value: 'edit' }),
        { type: 'meter', value: 'tokens', expiryDate: null, remaining: 30, used: 20, granted: 50 },
      ]),
    );
    expect(JSON.parse(data.signed)).toEqual({ granteeId: 'ent-grantee', entitlements: data.entitlements, expiresAt: data.expiresAt });
    expect(new Date(data.expiresAt).getTime()).toBeGreaterThan(Date.now());
    // Verifiable offline with the organisation's public key (ECDSA P-256, DER signature).
    const pub = createPublicKey({
      key: Buffer.concat([Buffer.from('3059301306072a8648ce3d020106082a8648ce3d030107034200', 'hex'), Buffer.from(data.publicHash, 'hex')]),
      format: 'der',
      type: 'spki',
    });
    expect(createVerify('SHA256').update(data.signed).verify(pub, Buffer.from(data.signature, 'hex'))).toBe(true);
    expect((await api(other.liveKey).get('/api/entitlements/check?granteeId=ent-grantee')).body.data.entitlements).toEqual([]);
    expect((await api().get('/api/entitlements/check')).status).toBe(400);
  });

  it('needs the usage scope', async () => {
    expect((await api(org.readOnlyKey).post('/api/usage/consume', { owner: 'a', meterSlug: 'tokens', quantity: 1 })).status).toBe(403);
    expect((await request(app).post('/api/usage/consume').send({})).status).toBe(401);
  });

  it('a meter with decimal places takes fractional increments exactly; more places than its scale are a 400 naming the field', async () => {
    const meter = await api().post('/api/meters', { slug: 'gpu_hours', name: 'GPU hours', unitLabel: 'hour', scale: 3 });
    expect(meter.status).toBe(201);
    expect(meter.body.data).toMatchObject({ slug: 'gpu_hours', scale: 3 });
    expect((await api().post('/api/meters', { slug: 'too_fine', name: 'x', scale: 7 })).status).toBe(400);
    const record = (increment: unknown, key?: string) =>
      api().post('/api/usage/record', { owner: 'lab', meterSlug: 'gpu_hours', increment }, key).set('prefer', 'return=representation');
    expect((await record(1.5, 'gpu-1')).body.data).toMatchObject({ allowed: true, used: 1.5 });
    // 0.1 and 0.2 add up to 0.3 exactly (in binary fractions they would not).
    await record(0.1, 'gpu-2');
    expect((await record(0.2, 'gpu-3')).body.data.used).toBe(1.8);
    // The same key replays the first answer in units; the same key with another increment is 409.
    expect((await record(0.1, 'gpu-2')).body.data.used).toBe(1.6);
    expect((await record(0.2, 'gpu-2')).status).toBe(409);
    for (const [bad, error] of [
      [1.0005, "must have at most 3 decimal places (the meter's scale)"],
      [0.1 + 0.2, 'must have at most 15 significant digits'],
      [-0.5, 'must be greater than 0'],
    ] as const) {
      const refused = await record(bad);
      expect(refused.status).toBe(400);
      expect(refused.body.errors).toEqual([expect.objectContaining({ property: 'increment', message: error })]);
    }
    // A whole-unit meter still refuses a fraction, naming the field; nothing was written.
    const whole = await api().post('/api/usage/record', { owner: 'lab', meterSlug: 'tokens', increment: 1.5 });
    expect(whole.status).toBe(400);
    expect(whole.body.errors).toEqual([expect.objectContaining({ property: 'increment', message: 'must be a whole number' })]);
    expect((await api().get('/api/balances?owner=lab&meterSlug=tokens')).body.data).toEqual([]);

    // Grants, consumes and holds in the meter's units too; every view shows units.
    await api().post('/api/credits/grants', { owner: 'lab', meterSlug: 'gpu_hours', amount: 10.25 }).expect(201);
    const consumed = await api().post('/api/usage/consume', { owner: 'lab', meterSlug: 'gpu_hours', quantity: 0.451 });
    expect(consumed.body.data).toMatchObject({ allowed: true, used: 2.251, granted: 10.25, remaining: 7.999 });
    const hold = await api().post('/api/usage/reservations', { owner: 'lab', meterSlug: 'gpu_hours', quantity: 2.5, ttlSeconds: 60 });
    expect(hold.body.data).toMatchObject({ reserved: 2.5, remaining: 5.499, quantity: 2.5 });
    const committed = await api().post(`/api/usage/reservations/${hold.body.data.id}/commit`, { quantity: 1.25 });
    expect(committed.body.data).toMatchObject({ used: 3.501, reserved: 0, remaining: 6.749 });
    expect((await api().get('/api/balances?owner=lab&meterSlug=gpu_hours')).body.data).toEqual([
      expect.objectContaining({ granted: 10.25, used: 3.501, reserved: 0, remaining: 6.749 }),
    ]);
    const records = (await api().get('/api/usage-records?owner=lab&meterSlug=gpu_hours&limit=100')).body.data;
    expect(records.map((r: { count: number }) => r.count).sort((a: number, b: number) => a - b)).toEqual([0.1, 0.2, 0.451, 1.25, 1.5]);
    const answer = (await api().get('/api/entitlements/check?granteeId=nobody&owner=lab')).body.data;
    expect(answer.entitlements).toEqual([expect.objectContaining({ type: 'meter', value: 'gpu_hours', used: 3.501, remaining: 6.749 })]);
    // Whose meters they are is signed: the owner's balances cannot pass for the grantee's own.
    expect(JSON.parse(answer.signed)).toEqual({
      granteeId: 'nobody',
      owner: 'lab',
      entitlements: answer.entitlements,
      expiresAt: answer.expiresAt,
    });
  });
});
