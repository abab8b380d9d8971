import request from 'supertest';
import { createTestWorld, seedOrganisation, type SeededOrg, type TestWorld } from '@tollgate/runtime/testing';
import { createServerApp } from '../src';

// The bad-input audit: a grantee id the license check cannot read back (a comma splits it, blanks,
// quotes and brackets at its ends are trimmed) was sold but never granted. Every generation now
// refuses it where it is written (400 naming the field); plain ids are sold and checked as before.
let world: TestWorld;
let org: SeededOrg;
let app: ReturnType<typeof createServerApp>;

beforeAll(async () => {
  world = await createTestWorld();
  org = await seedOrganisation(world, 'grantee-ids-org');
  app = createServerApp(world);
});
afterAll(() => world?.close());

const key = () => org.liveKey;
const post = (path: string, body: object, version?: string) => {
  const r = path.startsWith('/api/')
    ? request(app).post(path).set('authorization', `Bearer ${key()}`)
    : request(app).post(path).set('x-api-key', key());
  return (version ? r.set('version', version) : r).send(body);
};
const UNREADABLE = ['team,user-7', ' user-7', 'user-7 ', '[user-7]', '"user-7"', "user-7'", '[user-7', 'user-7]'];

/** The 400 names the field (in the generation's own shape: somewhere in its JSON body). */
const refused = (res: request.Response, field: string) => {
  expect(res.status).toBe(400);
  expect(JSON.stringify(res.body)).toContain(field);
  expect(JSON.stringify(res.body)).toContain('could not read it back');
};

describe('grantee ids the license check cannot read back', () => {
  it('legacy, v1 and v2 POST /licenses (v3 has none) refuse them 400 naming granteeId', async () => {
    const planUuid = org.keys['plans.notes.free'];
    for (const granteeId of UNREADABLE) {
      refused(await post('/licenses', { planUuid, member: 'm@example.com', granteeId }), 'granteeId');
      for (const v of ['v1', 'v2']) refused(await post('/licenses', { planUuid, member: 'm@example.com', granteeId }, v), 'granteeId');
    }
    // Nothing was written: the grantee holds no license.
    const all = await request(app).get('/licenses').set('x-api-key', key()).set('version', 'v1').expect(200);
    expect(JSON.stringify(all.body)).not.toContain('user-7');
  });

  it('v1 checkout links and v2 license updates refuse them; the catalog API refuses them for grantees, groups and checkouts', async () => {
    const plan = org.keys['plans.notes.business'];
    const link = await request(app)
      .get(`/plans/${plan}/checkoutlink`)
      .query({
        granteeId: 'team,user-7',
        member: 'buyer@example.com',
        successUrl: 'https://x.example/ok',
        cancelUrl: 'https://x.example/no',
      })
      .set('x-api-key', key())
      .set('version', 'v1');
    refused(link, 'granteeId');
    const [lic] = (await post('/licenses', { planUuid: org.keys['plans.notes.free'], member: 'm@example.com', granteeId: 'ok-1' }, 'v1'))
      .body;
    refused(
      await request(app).put(`/licenses/${lic.uuid}`).set('x-api-key', key()).set('version', 'v2').send({ granteeId: 'a,b' }),
      'granteeId',
    );
    refused(
      await request(app)
        .put('/licenses')
        .set('x-api-key', key())
        .set('version', 'v1')
        .send([{ uuid: lic.uuid, granteeId: 'a,b' }]),
      'granteeId',
    );
    refused(await post('/api/grantees', { granteeId: 'team,user-7' }), 'granteeId');
    refused(await post('/api/groups', { owner: 'team-owner', grantees: [{ granteeId: '[user-7]' }] }), 'grantees[0].granteeId');
    refused(
      await post('/api/checkout', {
        planId: plan,
        owner: 'buyer@example.com',
        grantee: 'team,user-7',
        interval: 'month',
        intervalCount: 1,
      }),
      'grantee',
    );
  });

  it('a plain id (the SDKs send one) is still sold and checked, alone or in a list', async () => {
    const planUuid = org.keys['plans.notes.free'];
    await post('/licenses', { planUuid, member: 'm@example.com', granteeId: "o'neil@example.com" }).expect(201);
    const product = (await request(app).get('/products').set('x-api-key', key()).expect(200)).body[0].uuid;
    for (const granteeIds of ["o'neil@example.com", "[o'neil@example.com]", "other,o'neil@example.com", '["o\'neil@example.com"]'])
      await request(app).get('/licenses/check').query({ productUuid: product, granteeIds }).set('x-api-key', key()).expect(200);
  });

  it('an id stored before the rule is sent back unchanged (v2 PUT moves the end; v1 batch re-sends it); refusals name where the id stands', async () => {
    const planUuid = org.keys['plans.notes.free'];
    const [lic] = (await post('/licenses', [{ planUuid, member: 'm@example.com', granteeId: 'stored-1' }], 'v1')).body;
    await world.db.uow.run(async (r) => {
      const l = await r.licenses.get(lic.uuid);
      if (l) await r.licenses.saveMany([{ ...l, granteeId: 'team,user-9' }]);
    });
    const endTime = new Date(Date.now() + 40 * 86_400_000).toISOString();
    const v2 = await request(app)
      .put(`/licenses/${lic.uuid}`)
      .set('x-api-key', key())
      .set('version', 'v2')
      .send({ granteeId: 'team,user-9', endTime })
      .expect(200);
    expect([v2.body.granteeId, v2.body.endTime]).toEqual(['team,user-9', endTime]);
    await request(app)
      .put('/licenses')
      .set('x-api-key', key())
      .set('version', 'v1')
      .send([{ uuid: lic.uuid, granteeId: 'team,user-9' }])
      .expect(200);
    // An array of one names its item; v1's PUT of one license (an object) names the field itself.
    const one = await post('/licenses', [{ planUuid, member: 'm@example.com', granteeId: 'a,b' }], 'v1');
    expect([one.status, one.body.validationErrors?.[0]?.property]).toEqual([400, '[0].granteeId']);
    const single = await request(app).put(`/licenses/${lic.uuid}`).set('x-api-key', key()).set('version', 'v1').send({ granteeId: 'c,d' });
    expect([single.status, single.body.validationErrors?.[0]?.property]).toEqual([400, 'granteeId']);
    // The catalog's owner, the seat holder when no grantee is named, is told why and what to do.
    const checkout = await post('/api/checkout', {
      planId: org.keys['plans.notes.business'],
      owner: 'Doe, Jo',
      interval: 'month',
      intervalCount: 1,
    });
    refused(checkout, 'owner');
    expect(JSON.stringify(checkout.body)).toContain('gets the seat when no grantee is named');
  });
});
