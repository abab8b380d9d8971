import { FakePaymentProvider } from '@tollgate/core/testing';
import { ajv } from '@tollgate/http';
import { createTestWorld, seedOrganisation, type SeededOrg, type TestWorld } from '@tollgate/runtime/testing';
import { createCatalogApp } from '../src';
import { granteeSchema, groupSchema } from '../src/people-schemas';
import { listOf, objectOf } from '../src/response-schemas';
import { granteeDetailSchema } from '../src/routes/grantees';
import { groupItemSchema } from '../src/routes/groups';
import { catalogApi } from './helpers';

/* The catalog API's grantees and groups (issue #20, published #33-43). Every answer is also
   checked against its route's schema by the response audit. */

let world: TestWorld;
let org: SeededOrg;
let other: SeededOrg;
let app: ReturnType<typeof createCatalogApp>;

beforeAll(async () => {
  world = await createTestWorld({ payments: new FakePaymentProvider() });
  org = await seedOrganisation(world, 'people-org');
  other = await seedOrganisation(world, 'people-other');
  app = createCatalogApp(world);
});
afterAll(() => world?.close());

const api = (key = org.liveKey) => catalogApi(app, key);
const expectSchema = (schema: object, body: unknown) => {
  const validate = ajv.compile(schema);
  if (!validate(body)) throw new Error(`${JSON.stringify(validate.errors)}\n${JSON.stringify(body)}`);
};
const tick = () => world.clock.advanceDays(1 / 86_400);
/** A per-seat subscription of `member` with `seats` seats, the first one held by `granteeId`. */
const buySeats = async (member: string, granteeId: string, seats: number) => {
  tick();
  return (
    await world.core.checkout.completePurchase({
      planId: org.keys['plans.notes.team'],
      member,
      email: null,
      granteeId,
      quantity: seats,
      currency: 'USD',
      paymentProvider: 'fake',
      paymentSubscriptionId: null,
      paymentCustomerId: null,
    })
  ).subscription;
};
const entitlementsOf = async (granteeId: string) =>
  ((await api().get(`/api/entitlements/check?granteeId=${granteeId}`).expect(200)).body.data.entitlements as { value: string }[]).map(
    (e) => e.value,
  );

describe('a subscription group: members take its seats', () => {
  it("a grantee added to the subscription plan's group shows up in the check and its entitlements; removed, it does not", async () => {
    const s = await buySeats('team-owner', 'lead', 3);
    const plan = (await api().get(`/api/subscription-plans/${s.id}`).expect(200)).body.data;
    expect(await entitlementsOf('newcomer')).toEqual([]);
    await api()
      .post(`/api/groups/${plan.groupId}/grantees`, [
        { type: 'add', granteeId: 'newcomer', name: 'New Comer' },
        { type: 'add', granteeId: 'second' },
      ])
      .expect(204);
    expect((await entitlementsOf('newcomer')).sort()).toEqual(['edit', 'export']);
    expect((await entitlementsOf('second')).sort()).toEqual(['edit', 'export']);
    const group = await api().get(`/api/groups/${plan.groupId}?expand=owner,memberships`).expect(200);
    expectSchema(objectOf(groupItemSchema), group.body);
    expect(group.body.data).toMatchObject({ id: s.id, ownerId: s.customerId, owner: { value: 'team-owner' } });
    const members = group.body.data.memberships.data.map((m: { grantee: { granteeId: string } }) => m.grantee.granteeId);
    expect(members).toEqual(expect.arrayContaining(['newcomer', 'second']));
    // expand=subscriptionPlans: the subscription plan whose seats the group takes.
    const withPlans = await api().get(`/api/groups/${plan.groupId}?expand=subscriptionPlans`).expect(200);
    expectSchema(objectOf(groupItemSchema), withPlans.body);
    expect(withPlans.body.data.subscriptionPlans).toMatchObject({
      type: 'list',
      hasMore: false,
      data: [{ id: s.id, groupId: plan.groupId, subscriptionId: s.id, planId: s.planId, seats: 3, status: 'active' }],
    });
    expect(withPlans.body.data).not.toHaveProperty('memberships');
    // All seats are taken (lead, newcomer, second): a fourth is 400 and nothing of the batch is done.
    const full = await api()
      .post(`/api/groups/${plan.groupId}/grantees`, [
        { type: 'remove', granteeId: 'second' },
        { type: 'add', granteeId: 'fourth' },
        { type: 'add', granteeId: 'fifth' },
      ])
      .expect(400);
    expect(full.body.errors[0].property).toBe('[2].granteeId');
    expect(await entitlementsOf('second')).not.toEqual([]);
    expect(await entitlementsOf('fourth')).toEqual([]);
    // Replace hands the seat over; remove frees it.
    await api()
      .post(`/api/groups/${plan.groupId}/grantees`, [{ type: 'replace', granteeId: 'second', newGranteeId: 'third' }])
      .expect(204);
    expect(await entitlementsOf('second')).toEqual([]);
    expect((await entitlementsOf('third')).sort()).toEqual(['edit', 'export']);
    await api()
      .post(`/api/groups/${plan.groupId}/grantees`, [{ type: 'remove', granteeId: 'third' }])
      .expect(204);
    expect(await entitlementsOf('third')).toEqual([]);
    await api()
      .post(`/api/groups/${plan.groupId}/grantees`, [{ type: 'replace', granteeId: 'nobody', newGranteeId: 'x' }])
      .expect(400);
    await api()
      .post(`/api/groups/${plan.groupId}/grantees`, [{ type: 'move', granteeId: 'x' }])
      .expect(400);
    await api().post(`/api/groups/${plan.groupId}/grantees`, []).expect(400);
    // A subscription's group goes with its subscription.
    await api().del(`/api/groups/${plan.groupId}`).expect(400);
    // Tenancy.
    await api(other.liveKey)
      .post(`/api/groups/${plan.groupId}/grantees`, [{ type: 'add', granteeId: 'intruder' }])
      .expect(403);
    await api(org.testKey).get(`/api/groups/${plan.groupId}`).expect(404);
    await api().get('/api/groups/00000000-0000-4000-8000-000000000000').expect(404);
    // The grantee shows its membership of the subscription's group.
    const newcomer = (await api().get('/api/grantees').expect(200)).body.data.find(
      (g: { granteeId: string }) => g.granteeId === 'newcomer',
    );
    expect(newcomer.name).toBe('New Comer');
    const detail = await api().get(`/api/grantees/${newcomer.id}?expand=memberships`).expect(200);
    expectSchema(objectOf(granteeDetailSchema), detail.body);
    expect(detail.body.data.memberships.data).toEqual([
      expect.objectContaining({ groupId: s.id, granteeId: newcomer.id, group: expect.objectContaining({ id: s.id }) }),
    ]);
    // The group's members through the grantee list.
    const byGroup = (await api().get(`/api/grantees?groupId=${s.id}`).expect(200)).body.data.map((g: { granteeId: string }) => g.granteeId);
    expect(byGroup).toEqual(['newcomer']);
  });
});

describe('catalog grantees', () => {
  it('creates (200; a taken granteeId 409), lists with cursors, retrieves, renames and deletes', async () => {
    tick();
    const created = await api().post('/api/grantees', { granteeId: 'gina', name: 'Gina' }).expect(200);
    expectSchema(objectOf(granteeSchema), created.body);
    expect(created.body.data).toMatchObject({ granteeId: 'gina', name: 'Gina', organisation: org.tenant.organisationId });
    await api().post('/api/grantees', { granteeId: 'gina' }).expect(409);
    await api().post('/api/grantees', { name: 'no id' }).expect(400);
    await api().post('/api/grantees', { granteeId: 'x', extra: 1 }).expect(400);
    tick();
    await api().post('/api/grantees', { granteeId: 'hank' }).expect(200);
    const page = (await api().get('/api/grantees?limit=1').expect(200)).body;
    expectSchema(listOf(granteeSchema), page);
    expect(page.hasMore).toBe(true);
    const all: string[] = [];
    let cursor: string | null = null;
    do {
      const res: { body: { data: { granteeId: string }[]; nextCursor: string | null } } = await api()
        .get(`/api/grantees?limit=1${cursor ? `&after=${cursor}` : ''}`)
        .expect(200);
      all.push(...res.body.data.map((g) => g.granteeId));
      cursor = res.body.nextCursor;
    } while (cursor);
    expect(all).toEqual(expect.arrayContaining(['gina', 'hank']));
    expect(all.indexOf('gina')).toBeLessThan(all.indexOf('hank'));
    const id = created.body.data.id;
    expect((await api().get(`/api/grantees/${id}`).expect(200)).body.data).not.toHaveProperty('memberships');
    // A new granteeId takes the grantee's licenses along.
    await buySeats('gina-owner', 'gina', 2);
    expect(await entitlementsOf('gina')).not.toEqual([]);
    await api().put(`/api/grantees/${id}`, { granteeId: 'gina-2', name: null }).expect(204);
    expect((await api().get(`/api/grantees/${id}`).expect(200)).body.data).toMatchObject({ granteeId: 'gina-2', name: null });
    expect(await entitlementsOf('gina')).toEqual([]);
    expect(await entitlementsOf('gina-2')).not.toEqual([]);
    expect((await api().put(`/api/grantees/${id}`, { granteeId: 'hank' }).expect(400)).body.errors[0].property).toBe('granteeId');
    await api().put(`/api/grantees/${id}`, { name: 'no id' }).expect(400);
    await api(other.liveKey).get(`/api/grantees/${id}`).expect(403);
    await api(org.testKey).del(`/api/grantees/${id}`).expect(404);
    // Deleted: its seat is freed.
    await api().del(`/api/grantees/${id}`).expect(204);
    await api().get(`/api/grantees/${id}`).expect(404);
    expect(await entitlementsOf('gina-2')).toEqual([]);
    await api(org.readOnlyKey).get('/api/grantees').expect(403);
  });
});

describe('catalog groups', () => {
  it('creates a group of an owner with grantees (200), lists by owner, renames, manages members and deletes', async () => {
    tick();
    const created = await api()
      .post('/api/groups', { owner: 'agency', name: 'Design', grantees: [{ granteeId: 'ann', name: 'Ann' }, { granteeId: 'bob' }] })
      .expect(200);
    expectSchema(objectOf(groupSchema), created.body);
    const id = created.body.data.id;
    expect(created.body.data).toMatchObject({ name: 'Design' });
    // A group of no subscription takes no seats: its subscription plans are none.
    const planless = await api().get(`/api/groups/${id}?expand=subscriptionPlans`).expect(200);
    expectSchema(objectOf(groupItemSchema), planless.body);
    expect(planless.body.data.subscriptionPlans).toMatchObject({ type: 'list', data: [], hasMore: false });
    const listed = await api().get('/api/groups?owner=agency&expand=owner').expect(200);
    expectSchema(listOf(groupItemSchema), listed.body);
    expect(listed.body.data).toEqual([expect.objectContaining({ id, owner: expect.objectContaining({ value: 'agency' }) })]);
    expect((await api().get('/api/groups?owner=nobody').expect(200)).body.data).toEqual([]);
    expect((await api(other.liveKey).get('/api/groups?owner=agency').expect(200)).body.data).toEqual([]);
    const members = async () =>
      (
        (await api().get(`/api/groups/${id}?expand=memberships`).expect(200)).body.data.memberships.data as {
          grantee: { granteeId: string };
        }[]
      ).map((m) => m.grantee.granteeId);
    expect((await members()).sort()).toEqual(['ann', 'bob']);
    await api()
      .post(`/api/groups/${id}/grantees`, [
        { type: 'add', granteeId: 'cid' },
        { type: 'remove', granteeId: 'ann' },
        { type: 'replace', granteeId: 'bob', newGranteeId: 'dee', name: 'Dee' },
      ])
      .expect(204);
    expect((await members()).sort()).toEqual(['cid', 'dee']);
    // A group without a subscription holds no seats: its members get nothing from it.
    expect(await entitlementsOf('cid')).toEqual([]);
    // Rename the group and a member (by its record id).
    const detail = (await api().get(`/api/groups/${id}?expand=memberships`).expect(200)).body.data;
    const cid = detail.memberships.data.find((m: { grantee: { granteeId: string } }) => m.grantee.granteeId === 'cid').grantee.id;
    await api()
      .put(`/api/groups/${id}`, { id, name: 'Design team', grantees: [{ id: cid, granteeId: 'cid-2', name: 'Cid' }] })
      .expect(204);
    expect((await api().get(`/api/groups/${id}`).expect(200)).body.data.name).toBe('Design team');
    expect((await members()).sort()).toEqual(['cid-2', 'dee']);
    await api().put(`/api/groups/${id}`, { id: org.keys['plans.notes.team'], grantees: [] }).expect(400);
    await api()
      .put(`/api/groups/${id}`, { id, grantees: [{ id: org.keys['plans.notes.team'], granteeId: 'x' }] })
      .expect(400);
    await api().put(`/api/groups/${id}`, { name: 'no id' }).expect(400);
    await api(other.liveKey).del(`/api/groups/${id}`).expect(403);
    await api().del(`/api/groups/${id}`).expect(204);
    await api().get(`/api/groups/${id}`).expect(404);
    await api().post('/api/groups', { name: 'no owner' }).expect(400);
  });
});
