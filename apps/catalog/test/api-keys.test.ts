import request from 'supertest';
import { createTestWorld, seedOrganisation, type SeededOrg, type TestWorld } from '@tollgate/runtime/testing';
import { createCatalogApp } from '../src';
import { catalogApi } from './helpers';

// API keys through the catalog API (#4-7). Every answer is checked against its route's schema by the response audit.
let world: TestWorld;
let org: SeededOrg;
let other: SeededOrg;
let app: ReturnType<typeof createCatalogApp>;

beforeAll(async () => {
  world = await createTestWorld();
  org = await seedOrganisation(world, 'keys-org');
  other = await seedOrganisation(world, 'keys-other');
  app = createCatalogApp(world);
});
afterAll(() => world?.close());

const api = (key = org.liveKey) => catalogApi(app, key);

describe('API keys (#4-7)', () => {
  it('creates a key shown once (no body: the creator scopes), lists and reads it masked, and revokes it', async () => {
    const created = (await api().post('/api/api-keys').expect(201)).body.data;
    expect(created).toMatchObject({ type: 'secret', scopes: ['*'], isTest: false, revokedAt: null });
    expect(created.value).toMatch(/^live_/);
    // The new key works.
    await request(app).get('/api/products').set('authorization', `Bearer ${created.value}`).expect(200);
    const listed = (await api().get('/api/api-keys').expect(200)).body.data;
    const mine = listed.find((k: { id: string }) => k.id === created.id);
    expect(mine.value).toBe(`${created.value.slice(0, 9)}…`);
    expect((await api().get(`/api/api-keys/${created.id}`).expect(200)).body.data.value).not.toBe(created.value);
    await api().del(`/api/api-keys/${created.id}`).expect(204);
    await request(app).get('/api/products').set('authorization', `Bearer ${created.value}`).expect(401);
    expect((await api().get('/api/api-keys').expect(200)).body.data.map((k: { id: string }) => k.id)).not.toContain(created.id);
    expect([403, 404]).toContain((await api().get(`/api/api-keys/${created.id}`)).status);
  });

  it('creates keys with chosen scopes within its own only; types follow the scopes; modes and organisations are apart', async () => {
    const client = (
      await api()
        .post('/api/api-keys', { name: 'browser', scopes: ['products:read', 'plans:read'] })
        .expect(201)
    ).body.data;
    expect(client).toMatchObject({ name: 'browser', type: 'publishable', scopes: ['products:read', 'plans:read'] });
    const restricted = (
      await api()
        .post('/api/api-keys', { scopes: ['api-keys:write', 'products:read'] })
        .expect(201)
    ).body.data;
    expect(restricted.type).toBe('restricted');
    // A restricted key cannot grant more than it holds.
    const escalate = await api(restricted.value)
      .post('/api/api-keys', { scopes: ['*'] })
      .expect(403);
    expect(escalate.body.errors[0].property).toBe('scopes');
    await api(restricted.value)
      .post('/api/api-keys', { scopes: ['products:read'] })
      .expect(201);
    await api(client.value).get('/api/api-keys').expect(403);
    await api()
      .post('/api/api-keys', { scopes: ['nope:read'] })
      .expect(400);
    const test = (await api(org.testKey).post('/api/api-keys').expect(201)).body.data;
    expect(test).toMatchObject({ isTest: true });
    expect(test.value).toMatch(/^test_/);
    expect((await api().get('/api/api-keys?limit=100').expect(200)).body.data.map((k: { id: string }) => k.id)).not.toContain(test.id);
    expect([403, 404]).toContain((await api(other.liveKey).get(`/api/api-keys/${client.id}`)).status);
    expect([403, 404]).toContain((await api(other.liveKey).del(`/api/api-keys/${client.id}`)).status);
    await request(app).get('/api/products').set('authorization', `Bearer ${client.value}`).expect(200);
  });

  it('revokes only keys whose every scope the caller could grant: api-keys:write alone cannot revoke the * key (403 naming it)', async () => {
    const keyAdmin = (
      await api()
        .post('/api/api-keys', { name: 'key admin', scopes: ['api-keys:write', 'products:read'] })
        .expect(201)
    ).body.data;
    const all = (await api().get('/api/api-keys?limit=100').expect(200)).body.data as { id: string; scopes: string[] }[];
    const secret = all.find((k) => k.scopes.includes('*'));
    expect(secret).toBeDefined();
    const refused = await api(keyAdmin.value).del(`/api/api-keys/${secret!.id}`).expect(403);
    expect(JSON.stringify(refused.body)).toContain(secret!.id);
    expect(JSON.stringify(refused.body)).toContain('*');
    // Still there, still working.
    await api().get(`/api/api-keys/${secret!.id}`).expect(200);
    await api().get('/api/products').expect(200);
    // A key holding a write it lacks is refused too; one within its scopes is revoked.
    const writer = (
      await api()
        .post('/api/api-keys', { scopes: ['products:write'] })
        .expect(201)
    ).body.data;
    await api(keyAdmin.value).del(`/api/api-keys/${writer.id}`).expect(403);
    const reader = (
      await api()
        .post('/api/api-keys', { scopes: ['products:read'] })
        .expect(201)
    ).body.data;
    await api(keyAdmin.value).del(`/api/api-keys/${reader.id}`).expect(204);
    // A key may revoke itself (it holds its own scopes).
    await api(keyAdmin.value).del(`/api/api-keys/${keyAdmin.id}`).expect(204);
    await api(writer.value).get('/api/products').expect(200);
  });

  it("keeps the organisation's last * key of each mode (409 naming it); with another made first, either may go, itself included", async () => {
    const solo = await seedOrganisation(world, 'keys-solo');
    const starKeys = async (key: string) =>
      ((await catalogApi(app, key).get('/api/api-keys?limit=100').expect(200)).body.data as { id: string; scopes: string[] }[]).filter(
        (k) => k.scopes.includes('*'),
      );
    const [live] = await starKeys(solo.liveKey);
    expect(await starKeys(solo.liveKey)).toHaveLength(1);
    const refused = await catalogApi(app, solo.liveKey).del(`/api/api-keys/${live.id}`).expect(409);
    expect(refused.body.errors[0].property).toBe('id');
    expect(JSON.stringify(refused.body)).toContain(live.id);
    expect(JSON.stringify(refused.body)).toContain('last key holding *');
    await catalogApi(app, solo.liveKey).get('/api/products').expect(200);
    // Modes are apart: test mode keeps its own last * key beside live mode's.
    const [test] = await starKeys(solo.testKey);
    await catalogApi(app, solo.testKey).del(`/api/api-keys/${test.id}`).expect(409);
    // With a second * key, the first may revoke itself; then the second is the last.
    const second = (await catalogApi(app, solo.liveKey).post('/api/api-keys').expect(201)).body.data;
    await catalogApi(app, solo.liveKey).del(`/api/api-keys/${live.id}`).expect(204);
    await catalogApi(app, solo.liveKey).get('/api/products').expect(401);
    await catalogApi(app, second.value).del(`/api/api-keys/${second.id}`).expect(409);
    await catalogApi(app, second.value).get('/api/products').expect(200);
    // Keys without * go as before.
    const reader = (
      await catalogApi(app, second.value)
        .post('/api/api-keys', { scopes: ['products:read'] })
        .expect(201)
    ).body.data;
    await catalogApi(app, second.value).del(`/api/api-keys/${reader.id}`).expect(204);
  });

  it('a revoked key revokes nothing, though its request was authenticated before (reread in the transaction)', async () => {
    const solo = await seedOrganisation(world, 'keys-revoker');
    const second = (await catalogApi(app, solo.liveKey).post('/api/api-keys').expect(201)).body.data;
    const reader = (
      await catalogApi(app, solo.liveKey)
        .post('/api/api-keys', { scopes: ['products:read'] })
        .expect(201)
    ).body.data;
    const secondKey = await world.core.apiKeys.authenticate(second.value);
    await catalogApi(app, solo.liveKey).del(`/api/api-keys/${second.id}`).expect(204);
    // As a request authenticated just before the revocation would: the key it read then.
    await expect(
      world.core.apiKeys.revokeFor({ organisationId: secondKey.organisationId, isTest: false }, secondKey, reader.id),
    ).rejects.toMatchObject({
      code: 'UNAUTHENTICATED',
    });
    await catalogApi(app, reader.value).get('/api/products').expect(200);
  });

  it('knows checks:read: publishable with the client scopes, granted by licenses:read, never as checks:write', async () => {
    const client = (
      await api()
        .post('/api/api-keys', { scopes: ['products:read', 'plans:read', 'pricing-tables:read', 'checks:read'] })
        .expect(201)
    ).body.data;
    expect(client.type).toBe('publishable');
    // The client scopes before checks:read: licenses:read lists licenses, so the key is restricted.
    const old = (
      await api()
        .post('/api/api-keys', { scopes: ['products:read', 'plans:read', 'pricing-tables:read', 'licenses:read', 'api-keys:write'] })
        .expect(201)
    ).body.data;
    expect(old.type).toBe('restricted');
    const narrowed = (
      await api(old.value)
        .post('/api/api-keys', { scopes: ['checks:read'] })
        .expect(201)
    ).body.data;
    expect(narrowed).toMatchObject({ type: 'publishable', scopes: ['checks:read'] });
    await api(narrowed.value)
      .post('/api/api-keys', { scopes: ['licenses:read'] })
      .expect(403);
    await api()
      .post('/api/api-keys', { scopes: ['checks:write'] })
      .expect(400);
  });

  it('a replay under an idempotency-key answers the new key masked (shown once, never kept), and only to the key that sent it', async () => {
    const restricted = (
      await api()
        .post('/api/api-keys', { scopes: ['api-keys:write', 'webhooks:write'] })
        .expect(201)
    ).body.data;
    const first = await api().post('/api/api-keys', {}, 'admin-creates-a-key').expect(201);
    const created = first.body.data;
    expect(created.value).toMatch(/^live_/);
    const again = await api().post('/api/api-keys', {}, 'admin-creates-a-key').expect(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body.data).toMatchObject({ id: created.id, scopes: ['*'], value: `${created.value.slice(0, 9)}…` });
    expect(JSON.stringify(again.body)).not.toContain(created.value);
    // Another key of the organisation (fewer scopes) sending the same key and body gets no answer of the first.
    const stolen = await api(restricted.value).post('/api/api-keys', {}, 'admin-creates-a-key').expect(409);
    expect(JSON.stringify(stolen.body)).not.toContain(created.value);
    // Nothing stored holds the key's value.
    const stored = await world.db.uow.run((r) =>
      r.idempotency.find({ ...org.tenant, key: 'admin-creates-a-key', route: 'POST /api/api-keys' }, new Date(0)),
    );
    expect(stored?.status).toBe(201);
    expect(JSON.stringify(stored?.body)).not.toContain(created.value);
    // A webhook endpoint's secret likewise.
    const hook = await api(restricted.value).post('/api/webhooks', { url: 'https://example.com/hooks' }, 'hook-once').expect(201);
    expect(hook.body.data.secret).toEqual(expect.any(String));
    const hookAgain = await api(restricted.value).post('/api/webhooks', { url: 'https://example.com/hooks' }, 'hook-once').expect(201);
    expect(hookAgain.body.data).toMatchObject({ id: hook.body.data.id, secret: null });
    await api().post('/api/webhooks', { url: 'https://example.com/hooks' }, 'hook-once').expect(409);
  });
});
