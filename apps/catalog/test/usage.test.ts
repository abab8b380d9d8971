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
});
