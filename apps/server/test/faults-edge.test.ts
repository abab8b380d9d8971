/* Issue #24, the edge: the failed-authentication budget, slow clients, deferred checkout links. */
import request from 'supertest';
import { createTestWorld, seedOrganisation, type SeededOrg, type TestWorld } from '@tollgate/runtime/testing';
import { createServerApp, createServerHttp } from '../src';

let world: TestWorld;
let org: SeededOrg;
let other: SeededOrg;

beforeAll(async () => {
  world = await createTestWorld();
  org = await seedOrganisation(world, 'edge-org');
  other = await seedOrganisation(world, 'edge-other');
});
afterAll(() => world?.close());

const limited = () =>
  createServerApp({
    ...world,
    config: { ...world.config, rateLimits: { enabled: true, authFailuresPerMinute: 30, writesPerMinute: 10_000 } },
  });

describe('the failed-authentication budget counts failures only', () => {
  it('lets 40 concurrent honest clients from one address through (no 429), on the fast path and the routers', async () => {
    const server = createServerHttp(limited()).listen(0, '127.0.0.1');
    try {
      const answers = await Promise.all(
        Array.from({ length: 40 }, (_, i) =>
          i % 2
            ? request(server).get('/products').set('x-api-key', org.liveKey)
            : request(server).get('/api/products').set('authorization', `Bearer ${org.liveKey}`),
        ),
      );
      expect(answers.map((a) => a.status)).toEqual(Array(40).fill(200));
    } finally {
      server.close();
    }
  });

  it("does not lock a key out for others' failures from its address; the failing key and unseen keys are refused", async () => {
    const app = limited();
    await request(app).get('/products').set('x-api-key', org.liveKey).expect(200);
    const bad = await Promise.all(Array.from({ length: 30 }, (_, i) => request(app).get('/products').set('x-api-key', `live_nope${i}`)));
    expect(bad.every((r) => r.status === 401)).toBe(true);
    const guess = await request(app).get('/products').set('x-api-key', 'live_guess').expect(429);
    expect(guess.body).toMatchObject({ code: 'RATE_LIMITED' });
    expect(Number(guess.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    // A key that authenticated from here keeps working, concurrently, in every generation.
    const good = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        i % 2
          ? request(app).get('/products').set('x-api-key', org.liveKey)
          : request(app).get('/api/products').set('authorization', `Bearer ${org.liveKey}`),
      ),
    );
    expect(good.map((a) => a.status)).toEqual(Array(40).fill(200));
    // A key never seen from this address waits like any guess (docs/decisions.md).
    await request(app).get('/products').set('x-api-key', other.liveKey).expect(429);
  });
});
