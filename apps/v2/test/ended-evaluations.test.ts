/* An ad hoc evaluation license whose end has come, through v2 (docs/api/v2.md): once the sweep has
   written it CANCELED, neither `PUT /licenses/{uuid}` with an `endTime` nor `DELETE` revives or
   cancels it again (400 LICENSE_CANCELED: make a new license). Before the sweep, a moved end still
   takes. */
import request from 'supertest';
import { createTestWorld, seedOrganisation, type SeededOrg, type TestWorld } from '@tollgate/runtime/testing';
import { createV2App } from '../src';

const DAY = 86_400_000;
let world: TestWorld;
let org: SeededOrg;
let app: ReturnType<typeof createV2App>;

beforeAll(async () => {
  world = await createTestWorld();
  org = await seedOrganisation(world, 'v2-evaluations');
  app = createV2App(world);
});
afterAll(() => world?.close());

const call = (method: 'post' | 'put' | 'delete', path: string, body?: object) =>
  request(app)[method](path).set('x-api-key', org.liveKey).set('version', 'v2').send(body);

it('a swept evaluation answers 400 LICENSE_CANCELED to a new endTime and to DELETE; before the sweep its end still moves', async () => {
  const made = async (granteeId: string) =>
    (await call('post', '/licenses', { planUuid: org.keys['plans.notes.team'], member: 'm@example.com', granteeId }).expect(200)).body as {
      uuid: string;
      status: string;
      endTime: string;
    };
  const swept = await made('sam');
  const moved = await made('max');
  expect([swept.status, moved.status]).toEqual(['EVALUATION', 'EVALUATION']);
  world.clock.set(new Date(Date.parse(swept.endTime) + DAY));
  const ahead = new Date(world.clock.now().getTime() + 30 * DAY).toISOString();

  // Ended, not yet swept: a new end takes (the license is still EVALUATION), and the sweep leaves it.
  const revived = await call('put', `/licenses/${moved.uuid}`, { granteeId: 'max', endTime: ahead }).expect(200);
  expect(revived.body).toMatchObject({ status: 'EVALUATION', endTime: ahead });
  expect(await world.core.sweeps.endedEvaluations()).toBe(1);

  const put = await call('put', `/licenses/${swept.uuid}`, { granteeId: 'sam', endTime: ahead }).expect(400);
  expect(put.body.code).toBe('LICENSE_CANCELED');
  const del = await call('delete', `/licenses/${swept.uuid}`).expect(400);
  expect(del.body.code).toBe('LICENSE_CANCELED');
  expect(await world.core.licenses.get(org.tenant, swept.uuid)).toMatchObject({ status: 'CANCELED', endTime: new Date(swept.endTime) });
  expect(await world.core.licenses.get(org.tenant, moved.uuid)).toMatchObject({ status: 'EVALUATION', endTime: new Date(ahead) });
});
