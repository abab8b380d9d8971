import request from 'supertest';
import { CHECK_GRANTEES_MAX, GRANTEE_ID_MAX_LENGTH } from '@tollgate/core';
import { createTestWorld, seedOrganisation, type SeededOrg, type TestWorld } from '@tollgate/runtime/testing';
import { createServerApp } from '../src';

// The resource audit: every grantee id a check was asked was kept in memory (15 KB ids ran the
// server out of heap). Every generation's check now refuses an id longer than a license holds and
// more than CHECK_GRANTEES_MAX ids, a 400 in its own shape; the fast path leaves them to the routers
// and nothing of them is cached.
let world: TestWorld;
let org: SeededOrg;
let app: ReturnType<typeof createServerApp>;

beforeAll(async () => {
  world = await createTestWorld();
  org = await seedOrganisation(world, 'check-bounds-org');
  app = createServerApp(world);
});
afterAll(() => world?.close());

type Gen = 'legacy' | 'v1' | 'v2' | 'v3';
const check = (gen: Gen, granteeIds: string) => {
  const path = gen === 'v3' ? '/entitlements/check' : '/licenses/check';
  const r = request(app).get(path).query({ productUuid: org.keys['products.notes'], granteeIds }).set('x-api-key', org.liveKey);
  return gen === 'legacy' ? r : r.set('version', gen);
};
const GENS: Gen[] = ['legacy', 'v1', 'v2', 'v3'];
const longId = 'x'.repeat(GRANTEE_ID_MAX_LENGTH + 1);
const manyIds = Array.from({ length: CHECK_GRANTEES_MAX + 1 }, (_, i) => `g${i}`).join(',');

describe('the check refuses what no license can answer', () => {
  it('a grantee id longer than a license holds: 400 naming granteeIds in each generation, not cached', async () => {
    const cache = () => world.core.checkCache.stats();
    // Warm: the cache is live (a check was answered).
    await check('v1', 'warm').expect(204);
    const before = { entries: cache().entries, misses: cache().misses, passed: app.fastPathStats().passed };
    for (const gen of GENS) {
      for (const ids of [longId, `ok,${longId}`, 'y'.repeat(15_000)]) {
        const res = await check(gen, ids);
        expect(res.status).toBe(400);
        expect(JSON.stringify(res.body)).toContain('granteeIds');
        expect(JSON.stringify(res.body)).toContain(`longer than ${GRANTEE_ID_MAX_LENGTH} characters`);
      }
    }
    expect(cache().entries).toBe(before.entries);
    expect(cache().misses).toBe(before.misses);
    // legacy, v1 and v2 asked /licenses/check three times each: the fast path left them all to the routers.
    expect(app.fastPathStats().passed - before.passed).toBe(9);
  });

  it('each shape: legacy and v1 validationErrors, v2 and v3 their own', async () => {
    const legacy = await check('legacy', longId);
    expect(legacy.body).toMatchObject({
      code: 'VALIDATION_FAILED',
      validationErrors: [{ property: 'granteeIds', error: `names a grantee id longer than ${GRANTEE_ID_MAX_LENGTH} characters` }],
    });
    const v1 = await check('v1', manyIds);
    expect(v1.body).toMatchObject({
      code: 'VALIDATION_FAILED',
      validationErrors: [{ property: 'granteeIds', error: `names more than ${CHECK_GRANTEES_MAX} grantees` }],
    });
    for (const gen of ['v2', 'v3'] as const) {
      const res = await check(gen, manyIds);
      expect(res.status).toBe(400);
      expect(JSON.stringify(res.body)).toContain(`names more than ${CHECK_GRANTEES_MAX} grantees`);
    }
  });

  it('the longest id a license holds and as many ids as allowed are checked as before', async () => {
    const ids = Array.from({ length: CHECK_GRANTEES_MAX }, (_, i) => `g${i}`);
    for (const gen of GENS) {
      expect([200, 204]).toContain((await check(gen, 'x'.repeat(GRANTEE_ID_MAX_LENGTH))).status);
      expect([200, 204]).toContain((await check(gen, ids.join(','))).status);
    }
  });

  it("the catalog API's check refuses a grantee id longer than 255 characters", async () => {
    const get = (granteeId: string) =>
      request(app).get('/api/entitlements/check').query({ granteeId }).set('authorization', `Bearer ${org.liveKey}`);
    expect((await get('x'.repeat(255))).status).toBe(200);
    const res = await get('x'.repeat(256));
    expect(res.status).toBe(400);
    expect(JSON.stringify(res.body)).toContain('granteeId');
  });
});
