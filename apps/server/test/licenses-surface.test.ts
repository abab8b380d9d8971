import request from 'supertest';
import { licenseSchema } from '@tollgate/http';
import { createTestWorld, purchase, seedOrganisation, type SeededOrg, type TestWorld } from '@tollgate/runtime/testing';
import { ajv } from '@tollgate/http';
import { licenseUsageSchema } from '@tollgate/app-v1';
import { createServerApp } from '../src';

// The rest of the real v1 license surface, driven as the real clients do: no `version` header,
// through the combined server's dispatch.
let world: TestWorld;
let org: SeededOrg;
let other: SeededOrg;
let app: ReturnType<typeof createServerApp>;

beforeAll(async () => {
  world = await createTestWorld();
  org = await seedOrganisation(world, 'surface-org');
  other = await seedOrganisation(world, 'surface-other');
  app = createServerApp(world);
});
afterAll(() => world?.close());

const as = (key: string) => ({
  get: (path: string) => request(app).get(path).set('x-api-key', key),
  put: (path: string, body: object) => request(app).put(path).set('x-api-key', key).send(body),
  post: (path: string, body: object) => request(app).post(path).set('x-api-key', key).send(body),
  delete: (path: string) => request(app).delete(path).set('x-api-key', key),
});
const isLicense = ajv.compile(licenseSchema);
const licenseUsageList = { type: 'array', items: licenseUsageSchema };
// Set-up through v1's create (without the header POST /licenses is legacy's, as the contract says).
const adHoc = async (granteeId: string | null, member = 'buyer@example.com') =>
  (await as(org.liveKey).post('/licenses', { planUuid: org.keys['plans.notes.free'], member, granteeId }).set('version', 'v1').expect(200))
    .body[0];

describe('v1 licenses, one by one (no version header)', () => {
  it('gets a license; another organisation gets 403, the other mode and an unknown id 404', async () => {
    const lic = await adHoc('gwen');
    const res = await as(org.liveKey).get(`/licenses/${lic.uuid}`).expect(200);
    expect(isLicense(res.body)).toBe(true);
    expect(res.body).toMatchObject({ uuid: lic.uuid, granteeId: 'gwen' });
    expect((await as(other.liveKey).get(`/licenses/${lic.uuid}`).expect(403)).body.code).toBe('FORBIDDEN');
    expect((await as(org.testKey).get(`/licenses/${lic.uuid}`).expect(404)).body.code).toBe('NOT_FOUND');
    expect((await as(org.liveKey).get('/licenses/00000000-0000-4000-8000-000000000000').expect(404)).body.code).toBe('NOT_FOUND');
    await as(org.liveKey).get('/licenses/not-a-uuid').expect(400);
    // The fixed paths are still theirs.
    await as(org.liveKey).get('/licenses/count').expect(200);
  });

  it("answers the usage of a license (none is metered: an empty list); another organisation's 403, the other mode's 404", async () => {
    const lic = await adHoc('ursula');
    const res = await as(org.liveKey).get(`/licenses/${lic.uuid}/usage`).expect(200);
    expect(res.body).toEqual([]);
    expect(ajv.compile(licenseUsageList)(res.body)).toBe(true);
    await as(other.liveKey).get(`/licenses/${lic.uuid}/usage`).expect(403);
    await as(org.testKey).get(`/licenses/${lic.uuid}/usage`).expect(404);
    await as(org.liveKey).get('/licenses/not-a-uuid/usage').expect(400);
    await request(app).get(`/licenses/${lic.uuid}/usage`).expect(401);
  });

  it('assigns and unassigns the grantee with PUT /licenses/:uuid', async () => {
    const lic = await adHoc(null);
    const assigned = await as(org.liveKey).put(`/licenses/${lic.uuid}`, { granteeId: 'hugo' }).expect(200);
    expect(isLicense(assigned.body)).toBe(true);
    expect(assigned.body.granteeId).toBe('hugo');
    const check = `/licenses/check?productUuid=${org.keys['products.notes']}&granteeIds=hugo`;
    expect((await as(org.liveKey).get(check).expect(200)).body.capabilities).toEqual(['edit']);
    expect((await as(org.liveKey).put(`/licenses/${lic.uuid}`, { granteeId: null }).expect(200)).body.granteeId).toBeNull();
    await as(org.liveKey).get(check).expect(204);
    await as(org.liveKey).put(`/licenses/${lic.uuid}`, { granteeId: 'x', extra: 1 }).expect(400);
    await as(org.readOnlyKey).put(`/licenses/${lic.uuid}`, { granteeId: 'x' }).expect(403);
  });

  it('cancels ad hoc licenses one (DELETE) or many (POST /licenses/cancel), all or none', async () => {
    const one = await adHoc('ivan');
    await as(org.liveKey).delete(`/licenses/${one.uuid}`).expect(204);
    expect((await as(org.liveKey).get(`/licenses/${one.uuid}`).expect(200)).body.status).toBe('CANCELED');
    await as(org.liveKey).get(`/licenses/check?productUuid=${org.keys['products.notes']}&granteeIds=ivan`).expect(204);
    const [a, b] = [await adHoc('jan'), await adHoc('kim')];
    // One unknown id: nothing is canceled.
    await as(org.liveKey)
      .post('/licenses/cancel', { uuids: [a.uuid, '00000000-0000-4000-8000-000000000000'] })
      .expect(404);
    expect((await as(org.liveKey).get(`/licenses/${a.uuid}`).expect(200)).body.status).toBe('ACTIVE');
    await as(org.liveKey)
      .post('/licenses/cancel', { uuids: [a.uuid, b.uuid] })
      .expect(204);
    for (const l of [a, b]) expect((await as(org.liveKey).get(`/licenses/${l.uuid}`).expect(200)).body.status).toBe('CANCELED');
    await as(org.liveKey).post('/licenses/cancel', { uuids: [] }).expect(400);
  });

  it("refuses to cancel a subscription's seat (409): seats change through the seat operations", async () => {
    const { subscription } = await purchase(world, org.keys['plans.notes.team'], 'lena', 2);
    const seat = (await as(org.liveKey).get(`/licenses?subscriptionUuid=${subscription.id}`).expect(200)).body[0];
    const refused = await as(org.liveKey).delete(`/licenses/${seat.uuid}`).expect(409);
    expect(refused.body.error).toMatch(/seat of subscription/);
    expect((await as(org.liveKey).get(`/licenses/${seat.uuid}`).expect(200)).body.status).toBe('ACTIVE');
  });

  it('lists by purchaser (optionally product and status) and by grantee, streamed', async () => {
    const mine = [await adHoc('mia', 'olga@example.com'), await adHoc('nils', 'olga@example.com')];
    const byPurchaser = await as(org.liveKey).get('/licenses/purchaser?purchaser=olga@example.com').expect(200);
    expect(byPurchaser.body.map((l: { uuid: string }) => l.uuid).sort()).toEqual(mine.map((l) => l.uuid).sort());
    expect(byPurchaser.body.every((l: object) => isLicense(l))).toBe(true);
    const filtered = await as(org.liveKey)
      .get(`/licenses/purchaser?purchaser=olga@example.com&productUuid=${org.keys['products.notes']}&status=ACTIVE`)
      .expect(200);
    expect(filtered.body).toHaveLength(2);
    await as(org.liveKey).delete(`/licenses/${mine[0].uuid}`).expect(204);
    expect((await as(org.liveKey).get('/licenses/purchaser?purchaser=olga@example.com&status=active').expect(200)).body).toHaveLength(1);
    await as(org.liveKey).get('/licenses/purchaser').expect(400);
    const byGrantee = await as(org.liveKey).get('/licenses/granteeId/nils').expect(200);
    expect(byGrantee.body.map((l: { uuid: string }) => l.uuid)).toEqual([mine[1].uuid]);
    expect(
      (
        await as(org.liveKey)
          .get(`/licenses/granteeId/${encodeURIComponent('no one')}`)
          .expect(200)
      ).body,
    ).toEqual([]);
    // Another tenant sees none of them.
    expect((await as(other.liveKey).get('/licenses/purchaser?purchaser=olga@example.com').expect(200)).body).toEqual([]);
    expect((await as(other.liveKey).get('/licenses/granteeId/nils').expect(200)).body).toEqual([]);
  });
});
