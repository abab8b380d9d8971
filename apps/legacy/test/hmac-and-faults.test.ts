import { createHmac } from 'node:crypto';
import request from 'supertest';
import { coreDownAfter, createTestWorld, purchase, seedOrganisation, type SeededOrg, type TestWorld } from '@tollgate/runtime/testing';
import { createLegacyApp } from '../src';

let world: TestWorld;
let org: SeededOrg;

beforeAll(async () => {
  world = await createTestWorld({ config: { signer: 'hmac' } });
  org = await seedOrganisation(world, 'hmac-org');
  await purchase(world, org.keys['plans.notes.business'], 'alice');
});
afterAll(() => world?.close());

it('signs checks with the organisation HMAC secret when SIGNER=hmac', async () => {
  const res = await request(createLegacyApp(world))
    .get(`/licenses/check?productUuid=${org.keys['products.notes']}&granteeIds=alice`)
    .set('x-api-key', org.liveKey)
    .expect(200);
  expect(res.body.capsHashed).toBe('admin,edit,export');
  const signer = world.core.signing;
  const [key] = await signer.active(org.tenant);
  const secret = signer.reveal(key);
  expect(res.body.signature).toBe(createHmac('sha256', secret).update(res.body.capsHashed).digest('hex'));
  expect(createHmac('sha256', secret).update('admin,edit,exporT').digest('hex')).not.toBe(res.body.signature);
});

it('answers an unexpected fault with a generic 500 that leaks nothing', async () => {
  const checks = Object.assign(Object.create(world.core.checks), {
    check: async () => {
      throw new Error('connection to postgres://admin:hunter2@db failed');
    },
  });
  const errors: unknown[] = [];
  const logger = { info: () => undefined, error: (_m: string, f?: Record<string, unknown>) => void errors.push(f) };
  const res = await request(createLegacyApp({ ...world, core: { ...world.core, checks }, logger }))
    .get(`/licenses/check?productUuid=${org.keys['products.notes']}&granteeIds=alice`)
    .set('x-api-key', org.liveKey)
    .expect(500);
  expect(res.body).toEqual({ error: 'internal error', code: 'INTERNAL' });
  expect(JSON.stringify(res.body)).not.toMatch(/hunter2|stack|at /);
  expect(JSON.stringify(errors)).toContain('hunter2');
});

it('answers a license it created without reading the database after the commit (an outage then cannot turn a made change into a 503)', async () => {
  // Every call of the core after the write resolved fails as an outage would.
  const core = coreDownAfter(world.core, 'licenses.createAdHoc');
  const res = await request(createLegacyApp({ ...world, core }))
    .post('/licenses')
    .set('x-api-key', org.liveKey)
    .send({ planUuid: org.keys['plans.notes.free'], member: 'm@example.com', granteeId: 'after-commit' })
    .expect(201);
  expect(core.wrote()).toBe(true);
  expect(res.body).toMatchObject({ granteeId: 'after-commit', capabilities: [expect.objectContaining({ name: 'edit' })] });
});
