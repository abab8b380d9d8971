/* An ad hoc evaluation license whose end has come, through v1: once the background work's sweep has
   passed, `GET /licenses` shows it CANCELED (its end kept), `status=evaluation` and its count no
   longer hold it, `status=canceled` does. */
import { licenseCountSchema } from '../src';
import { licenseSchema } from '@tollgate/http';
import { BackgroundWork } from '@tollgate/runtime';
import { createTestWorld, seedOrganisation, type SeededOrg, type TestWorld } from '@tollgate/runtime/testing';
import { createV1App } from '../src';
import { arrayOf, expectSchema, v1 } from './helpers';

const DAY = 86_400_000;
let world: TestWorld;
let org: SeededOrg;
let api: ReturnType<typeof v1>;

beforeAll(async () => {
  world = await createTestWorld();
  org = await seedOrganisation(world, 'v1-evaluations');
  api = v1(createV1App(world), org.liveKey);
});
afterAll(() => world?.close());

type Row = { uuid: string; status: string; endTime: string | null };
const uuids = (rows: Row[]) => rows.map((l) => l.uuid);

it('after the sweep, an ended evaluation is CANCELED in the list, the status filters and the counts', async () => {
  const made = (
    await api
      .post('/licenses', [
        { planUuid: org.keys['plans.notes.team'], member: 'm@example.com', granteeId: 'eve' },
        { planUuid: org.keys['plans.notes.free'], member: 'm@example.com', granteeId: 'eve' },
      ])
      .expect(200)
  ).body as Row[];
  const [evaluation, free] = made;
  expect(evaluation.status).toBe('EVALUATION');
  world.clock.set(new Date(Date.parse(evaluation.endTime as string) + DAY));

  // Before the sweep its end has passed, but every list still says EVALUATION.
  expect(uuids((await api.get('/licenses?status=evaluation').expect(200)).body)).toEqual([evaluation.uuid]);
  expect((await api.get('/licenses/count?status=evaluation').expect(200)).body).toMatchObject({ count: 1, assigned: 1 });
  const byPurchaser = (status: string) => `/licenses/purchaser?purchaser=m@example.com&status=${status}`;
  expect(uuids((await api.get(byPurchaser('evaluation')).expect(200)).body)).toEqual([evaluation.uuid]);
  expect((await api.get(byPurchaser('canceled')).expect(200)).body).toEqual([]);

  const background = new BackgroundWork(
    world.core.worker,
    world.core.sweeps,
    world.wake,
    { info: () => undefined, error: () => undefined },
    60_000,
  );
  await background.tick();
  await background.stop();

  const all = (await api.get('/licenses').expect(200)).body as Row[];
  expectSchema(arrayOf(licenseSchema), all);
  expect(all.find((l) => l.uuid === evaluation.uuid)).toMatchObject({ status: 'CANCELED', endTime: evaluation.endTime });
  expect(all.find((l) => l.uuid === free.uuid)).toMatchObject({ status: 'ACTIVE', endTime: null });
  expect((await api.get('/licenses?status=evaluation').expect(200)).body).toEqual([]);
  expect(uuids((await api.get('/licenses?status=canceled').expect(200)).body)).toEqual([evaluation.uuid]);
  const evaluations = (await api.get('/licenses/count?status=evaluation').expect(200)).body;
  expectSchema(licenseCountSchema, evaluations);
  expect(evaluations).toMatchObject({ count: 0, assigned: 0, unassigned: 0 });
  expect((await api.get('/licenses/count?status=canceled').expect(200)).body).toMatchObject({ count: 1, assigned: 1 });
  expect((await api.get(byPurchaser('evaluation')).expect(200)).body).toEqual([]);
  const canceled = (await api.get(byPurchaser('canceled')).expect(200)).body as Row[];
  expectSchema(arrayOf(licenseSchema), canceled);
  expect(canceled).toEqual([expect.objectContaining({ uuid: evaluation.uuid, status: 'CANCELED', endTime: evaluation.endTime })]);
  // Its webhook event, once.
  const events = (await world.core.webhookEvents.list(org.tenant, { limit: 100, types: ['license.cancelled'] })).items;
  expect(events.map((e) => e.orderingKey)).toEqual([evaluation.uuid]);
});
