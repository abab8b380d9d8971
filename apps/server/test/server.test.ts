import request from 'supertest';
import { createTestWorld, seedOrganisation, type SeededOrg, type TestWorld } from '@tollgate/runtime/testing';
import { createServerApp } from '../src';
import { generations } from '../src/generations';

let world: TestWorld;
let org: SeededOrg;
let app: ReturnType<typeof createServerApp>;

beforeAll(async () => {
  world = await createTestWorld();
  org = await seedOrganisation(world.container, 'server-org');
  app = createServerApp(world.container, generations(world.container));
});
afterAll(() => world?.close());

describe('combined server dispatch', () => {
  it('serves legacy without a version header', async () => {
    const res = await request(app).get('/products').set('x-api-key', org.liveKey).expect(200);
    expect(res.body[0].uuid).toBe(org.keys['products.notes']);
  });

  it('answers 400 "unsupported version" for any version other than v1', async () => {
    for (const v of ['v2', 'V1', '', '1']) {
      const res = await request(app).get('/products').set('x-api-key', org.liveKey).set('version', v).expect(400);
      expect(res.body.error).toMatch(/unsupported version/);
    }
  });

  it('reports health without a key', async () => {
    expect((await request(app).get('/healthz').expect(200)).body).toEqual({ status: 'ok' });
  });
});
