import { FakePaymentProvider } from '@tollgate/core/testing';
import { ajv } from '@tollgate/http';
import { coreDownAfter, createTestWorld, purchase, seedOrganisation, type SeededOrg, type TestWorld } from '@tollgate/runtime/testing';
import { createCatalogApp } from '../src';
import {
  batchResultSchema,
  subscriptionItemSchema,
  subscriptionLineItemSchema,
  subscriptionPlanItemSchema,
  subscriptionSchema,
} from '../src/people-schemas';
import { ownerItemSchema } from '../src/routes/owners';
import { itemStepsOf } from '../src/routes/subscriptions';
import { listOf, objectOf } from '../src/response-schemas';
import { catalogApi } from './helpers';

/* The catalog API's subscriptions, subscription plans and owners (issue #20, published #52-55,
   #87-99). Every answer is also checked against its route's schema by the response audit. */

let world: TestWorld;
let org: SeededOrg;
let other: SeededOrg;
let app: ReturnType<typeof createCatalogApp>;
const payments = new FakePaymentProvider();

beforeAll(async () => {
  world = await createTestWorld({ payments });
  org = await seedOrganisation(world, 'subs-org');
  other = await seedOrganisation(world, 'subs-other');
  app = createCatalogApp(world);
});
afterAll(() => world?.close());

const api = (key = org.liveKey) => catalogApi(app, key);
const expectSchema = (schema: object, body: unknown) => {
  const validate = ajv.compile(schema);
  if (!validate(body)) throw new Error(`${JSON.stringify(validate.errors)}\n${JSON.stringify(body)}`);
};
/** A purchase by a member of our choosing (the owner), as a provider would report it. */
const buy = async (planKey: string, member: string, granteeId: string, quantity = 2, test = false) => {
  world.clock.advanceDays(1 / 86_400); // a second between purchases, so creation order is theirs
  return (
    await world.core.checkout.completePurchase({
      planId: (test ? org.testKeys : org.keys)[`plans.notes.${planKey}`],
      member,
      email: `${member}@example.com`,
      granteeId,
      quantity,
      currency: 'USD',
      paymentProvider: 'fake',
      paymentSubscriptionId: null,
      paymentCustomerId: null,
    })
  ).subscription;
};

describe('catalog subscriptions', () => {
  it('lists with owner, plan, product and status filters, pages with cursors, and expands owner and subscription plans', async () => {
    const a = await buy('team', 'lister-a', 'la', 2);
    const b = await buy('business', 'lister-b', 'lb', 2);
    const c = await buy('team', 'lister-b', 'lc', 2);
    const byOwner = await api().get('/api/subscriptions?owner=lister-b&expand=owner,subscriptionPlans').expect(200);
    expectSchema(listOf(subscriptionItemSchema), byOwner.body);
    expect(byOwner.body.data.map((s: { id: string }) => s.id)).toEqual([b.id, c.id]);
    const first = byOwner.body.data[0];
    expect(first).toMatchObject({ status: 'active', ownerId: b.customerId, owner: { value: 'lister-b' }, cancelAtPeriodEnd: false });
    expect(first.subscriptionPlans).toMatchObject({
      type: 'list',
      hasMore: false,
      data: [{ id: b.id, seats: b.quantity, planId: b.planId }],
    });
    expect(first.subscriptionPlans.data[0].plan.id).toBe(b.planId);
    const team = await api().get(`/api/subscriptions?plans=${org.keys['plans.notes.team']}&owner=lister-a`).expect(200);
    expect(team.body.data.map((s: { id: string }) => s.id)).toEqual([a.id]);
    expect(team.body.data[0]).not.toHaveProperty('owner');
    expect((await api().get(`/api/subscriptions?products=${org.keys['products.notes']}&id=${c.id}`).expect(200)).body.data).toHaveLength(1);
    expect((await api().get('/api/subscriptions?owner=nobody').expect(200)).body.data).toEqual([]);
    // Cursors: one at a time forward, then back.
    const p1 = (await api().get('/api/subscriptions?owner=lister-b&limit=1').expect(200)).body;
    expect(p1).toMatchObject({ hasMore: true, previousCursor: null });
    const p2 = (await api().get(`/api/subscriptions?owner=lister-b&limit=1&after=${p1.nextCursor}`).expect(200)).body;
    expect(p2.data[0].id).toBe(c.id);
    const back = (await api().get(`/api/subscriptions?owner=lister-b&limit=1&before=${p2.previousCursor}`).expect(200)).body;
    expect(back.data[0].id).toBe(b.id);
    // Status: canceled ones by either spelling; a word that is no status is 400 naming the field.
    await api().post(`/api/subscriptions/${c.id}/cancel`).expect(204);
    expect(
      (await api().get('/api/subscriptions?owner=lister-b&status=cancelled').expect(200)).body.data.map((s: { id: string }) => s.id),
    ).toEqual([c.id]);
    expect(
      (await api().get('/api/subscriptions?owner=lister-b&status=ACTIVE').expect(200)).body.data.map((s: { id: string }) => s.id),
    ).toEqual([b.id]);
    const bad = await api().get('/api/subscriptions?status=frozen').expect(400);
    expect(bad.body.errors).toEqual([{ property: 'status', message: 'frozen is not a subscription status' }]);
    // Another organisation and the other mode see none of these.
    expect((await api(other.liveKey).get('/api/subscriptions?owner=lister-b').expect(200)).body.data).toEqual([]);
    expect((await api(org.testKey).get('/api/subscriptions?owner=lister-b').expect(200)).body.data).toEqual([]);
  });

  it('sorts newest first with cursors leading on in that order; searches; filters by price and provider price', async () => {
    const made = [];
    for (const [i, plan] of ['team', 'business', 'team', 'business', 'team'].entries())
      made.push(await buy(plan, `sorter-${i}@mail.test`, `so${i}`, 2));
    const ids = made.map((s) => s.id);
    const q = '/api/subscriptions?search=sorter-&limit=2';
    // Newest first, page by page, then back: every one once, in order.
    const seen: string[] = [];
    const pages = [];
    let page = (await api().get(`${q}&sort=desc`).expect(200)).body;
    for (;;) {
      expectSchema(listOf(subscriptionItemSchema), page);
      pages.push(page);
      seen.push(...page.data.map((s: { id: string }) => s.id));
      if (!page.hasMore) break;
      page = (await api().get(`${q}&sort=desc&after=${page.nextCursor}`).expect(200)).body;
    }
    expect(seen).toEqual([...ids].reverse());
    expect(pages.map((p) => p.hasMore)).toEqual([true, true, false]);
    expect(pages[0].previousCursor).toBeNull();
    expect(pages[2].nextCursor).toBeNull();
    const back = (await api().get(`${q}&sort=DESC&before=${pages[2].previousCursor}`).expect(200)).body;
    expect(back.data.map((s: { id: string }) => s.id)).toEqual([ids[2], ids[1]]);
    const asc = (await api().get(`${q}&sort=asc`).expect(200)).body;
    expect(asc.data.map((s: { id: string }) => s.id)).toEqual(ids.slice(0, 2));
    expect((await api().get(`${q}&sort=sideways`).expect(400)).body.errors[0].property).toMatch('sort');
    // Search: part of the owner's value or e-mail, any case; or a whole subscription id.
    expect((await api().get('/api/subscriptions?search=SORTER-3').expect(200)).body.data.map((s: { id: string }) => s.id)).toEqual([
      ids[3],
    ]);
    expect((await api().get(`/api/subscriptions?search=${ids[4]}`).expect(200)).body.data.map((s: { id: string }) => s.id)).toEqual([
      ids[4],
    ]);
    expect((await api().get('/api/subscriptions?search=nobody-at-all').expect(200)).body.data).toEqual([]);
    expect((await api(other.liveKey).get('/api/subscriptions?search=sorter-').expect(200)).body.data).toEqual([]);
    // A price: the subscriptions to the plan that sells it; the provider's price id the same; unknown ones none.
    const price = (await api().get(`/api/prices?planId=${org.keys['plans.notes.business']}`).expect(200)).body.data[0];
    const business = [ids[1], ids[3]];
    expect(
      (await api().get(`/api/subscriptions?search=sorter-&limit=10&priceId=${price.id}`).expect(200)).body.data.map(
        (s: { id: string }) => s.id,
      ),
    ).toEqual(business);
    expect(
      (
        await api()
          .get(`/api/subscriptions?search=sorter-&limit=10&stripePriceId=${encodeURIComponent(price.paymentPriceId)}`)
          .expect(200)
      ).body.data.map((s: { id: string }) => s.id),
    ).toEqual(business);
    expect((await api().get(`${q}&stripePriceId=price_nobody_knows`).expect(200)).body.data).toEqual([]);
    expect((await api().get(`${q}&priceId=00000000-0000-4000-8000-000000000000`).expect(200)).body.data).toEqual([]);
    expect((await api(other.liveKey).get(`/api/subscriptions?priceId=${price.id}`).expect(200)).body.data).toEqual([]);
    expect((await api().get(`${q}&priceId=not-an-id`).expect(400)).body.errors[0].property).toMatch('priceId');
  });

  it('retrieves one with expand; unknown 404, another organisation 403, the other mode 404', async () => {
    const s = await buy('team', 'getter', 'g1', 3);
    const res = await api().get(`/api/subscriptions/${s.id}?expand=owner`).expect(200);
    expectSchema(objectOf(subscriptionItemSchema), res.body);
    expect(res.body.data).toMatchObject({
      id: s.id,
      organisation: org.tenant.organisationId,
      status: 'active',
      interval: 'month',
      intervalCount: 1,
      currencyShortCode: 'USD',
      isServiceOnly: false,
      owner: { value: 'getter', emailAddress: 'getter@example.com' },
    });
    expect(res.body.data).not.toHaveProperty('subscriptionPlans');
    expect((await api().get('/api/subscriptions/00000000-0000-4000-8000-000000000000').expect(404)).body.detail).toBe(
      'subscription not found',
    );
    await api(other.liveKey).get(`/api/subscriptions/${s.id}`).expect(403);
    await api(org.testKey).get(`/api/subscriptions/${s.id}`).expect(404);
    await api().get('/api/subscriptions/not-an-id').expect(400);
  });

  it('cancels now (204; again 400), and turns auto-renew off and on', async () => {
    const s = await buy('team', 'renewer', 'r1', 2);
    await api().put(`/api/subscriptions/${s.id}/auto-renew?id=${s.id}&status=disable`).expect(204);
    expect((await api().get(`/api/subscriptions/${s.id}`).expect(200)).body.data).toMatchObject({
      cancelAtPeriodEnd: true,
      status: 'active',
    });
    await api().put(`/api/subscriptions/${s.id}/auto-renew?status=enable`).expect(204);
    // A setting already so is no change: the same PUT again answers as the first did.
    await api().put(`/api/subscriptions/${s.id}/auto-renew?status=enable`).expect(204);
    await api().put(`/api/subscriptions/${s.id}/auto-renew?status=disable`).expect(204);
    await api().put(`/api/subscriptions/${s.id}/auto-renew?status=disable`).expect(204);
    await api().put(`/api/subscriptions/${s.id}/auto-renew?status=enable`).expect(204);
    expect((await api().get(`/api/subscriptions/${s.id}`).expect(200)).body.data.cancelAtPeriodEnd).toBe(false);
    expect((await api().put(`/api/subscriptions/${s.id}/auto-renew?status=sometimes`).expect(400)).body.errors[0].property).toBe('status');
    await api(org.readOnlyKey).post(`/api/subscriptions/${s.id}/cancel`).expect(403);
    await api().post(`/api/subscriptions/${s.id}/cancel`).expect(204);
    const canceled = (await api().get(`/api/subscriptions/${s.id}`).expect(200)).body.data;
    expect(canceled).toMatchObject({ status: 'canceled', cancelledAt: expect.any(String) });
    await api().post(`/api/subscriptions/${s.id}/cancel`).expect(400);
    // The grantee's check no longer answers anything.
    await api().get('/api/entitlements/check?granteeId=r1').expect(200);
  });

  it('adds a plan to a subscription and removes it again (its seats with it), all or nothing; refuses what cannot be', async () => {
    const s = await buy('team', 'mover', 'm1', 2);
    const team = s.planId;
    const business = org.keys['plans.notes.business'];
    const items = (list: object[]) => api().put(`/api/subscriptions/${s.id}/items`, { items: list, proration: 'none' });
    const plansNow = async () =>
      (await api().get(`/api/subscriptions/${s.id}?expand=subscriptionPlans`).expect(200)).body.data.subscriptionPlans.data as {
        id: string;
        planId: string;
        seats: number;
        plan: { id: string };
      }[];
    const entitlements = async (g: string) =>
      ((await api().get(`/api/entitlements/check?granteeId=${g}`).expect(200)).body.data.entitlements as { value: string }[])
        .map((e) => e.value)
        .sort();
    const seatsOf = async (planId: string) =>
      (await world.core.licenses.list(org.tenant, { subscriptionId: s.id, planId })).filter((l) => l.status !== 'CANCELED');
    expect(await entitlements('m1')).toEqual(['edit', 'export']);

    // add alone: a second plan, its seat to the subscription group's member.
    const calls = payments.calls.length;
    await items([{ planId: business, action: 'add' }]).expect(204);
    expect(payments.calls.slice(calls)).toMatchObject([
      { op: 'addPlan', request: { plan: { id: business }, quantity: 1, proration: 'none' } },
    ]);
    const [first, second] = await plansNow();
    expect(first).toMatchObject({ id: s.id, planId: team, seats: 2, plan: { id: team } });
    expect(second).toMatchObject({ planId: business, seats: 1, plan: { id: business } });
    expect(second.id).not.toBe(s.id);
    expect((await seatsOf(business)).map((l) => l.granteeId)).toEqual(['m1']);
    expect(await entitlements('m1')).toEqual(['admin', 'edit', 'export']);
    // Each plan is a subscription plan of its own (list, filter, detail, line items).
    const listed = (await api().get(`/api/subscription-plans?subscriptionId=${s.id}&expand=subscriptionPlanLineItems`).expect(200)).body
      .data;
    expect(listed.map((x: { id: string }) => x.id)).toEqual([s.id, second.id]);
    expect(
      listed[1].subscriptionPlanLineItems.data.every((li: { subscriptionPlanId: string }) => li.subscriptionPlanId === second.id),
    ).toBe(true);
    const lineItemId = listed[1].subscriptionPlanLineItems.data[0].id;
    expect((await api().get(`/api/subscription-plan-line-items/${lineItemId}`).expect(200)).body.data.subscriptionPlan.id).toBe(second.id);
    expect(
      (await api().get(`/api/subscription-plans?subscriptionId=${s.id}&plans=${business}`).expect(200)).body.data.map(
        (x: { id: string }) => x.id,
      ),
    ).toEqual([second.id]);
    expect((await api().get(`/api/subscription-plans/${second.id}?expand=plan`).expect(200)).body.data).toMatchObject({
      id: second.id,
      subscriptionId: s.id,
      groupId: s.id,
      planId: business,
      plan: { id: business },
    });
    expect(
      (await api().get(`/api/subscriptions?plans=${business}&owner=mover`).expect(200)).body.data.map((x: { id: string }) => x.id),
    ).toEqual([s.id]);
    // Its seats: set now (per seat), fewer removing unassigned ones only.
    await api().put(`/api/subscription-plans/${second.id}/seats`, { quantity: 3 }).expect(204);
    expect((await plansNow())[1].seats).toBe(3);
    expect(await seatsOf(business)).toHaveLength(3);
    await api().put(`/api/subscription-plans/${second.id}/seats`, { quantity: 2 }).expect(204);
    expect(await seatsOf(business)).toHaveLength(2);

    // Refusals change nothing.
    const addHeld = (await items([{ planId: business, action: 'add' }]).expect(400)).body.errors[0];
    expect(addHeld).toMatchObject({
      property: 'items[0].planId',
      message: expect.stringContaining(`/api/subscription-plans/${second.id}/seats`),
    });
    expect((await items([{ planId: org.keys['plans.notes.free'], action: 'remove' }]).expect(400)).body.errors[0].property).toBe(
      'items[0].planId',
    );
    expect(
      (
        await items([
          { planId: team, action: 'remove' },
          { planId: team, action: 'add' },
        ]).expect(400)
      ).body.errors[0].property,
    ).toBe('items');
    expect(
      (
        await items([
          { planId: business, action: 'remove' },
          { planId: team, action: 'replace', newPlanId: business },
        ]).expect(400)
      ).body.errors[0].property,
    ).toBe('items');
    // The first plan's replace (a plan change) comes alone: with another replace, 400 naming it.
    const mixed = await items([
      { planId: business, action: 'replace', newPlanId: org.keys['plans.notes.free'] },
      { planId: team, action: 'replace', newPlanId: org.keys['plans.notes.free'] },
    ]).expect(400);
    expect(mixed.body.errors[0]).toMatchObject({ property: 'items[1]', message: expect.stringContaining('in a request of its own') });
    // An added plan replaced by one the subscription holds already: the refusal names the replace's `newPlanId`.
    const heldAlready = await items([{ planId: business, action: 'replace', newPlanId: team }]).expect(400);
    expect(heldAlready.body.errors[0]).toMatchObject({
      property: 'items[0].newPlanId',
      message: expect.stringContaining('holds this plan'),
    });
    await items([{ planId: '6a1f1d8e-0000-4000-8000-000000000000', action: 'add' }]).expect(404);
    await items([{ planId: other.keys['plans.notes.business'], action: 'add' }]).expect(403);
    expect(await plansNow()).toHaveLength(2);

    // remove: the plan and its seats end; the other plan stays.
    await items([{ planId: business, action: 'remove' }]).expect(204);
    expect((await plansNow()).map((x) => x.planId)).toEqual([team]);
    expect(await seatsOf(business)).toEqual([]);
    expect(await entitlements('m1')).toEqual(['edit', 'export']);
    await api().get(`/api/subscription-plans/${second.id}`).expect(404);
    const removeLast = (await items([{ planId: team, action: 'remove' }]).expect(400)).body.errors[0];
    expect(removeLast).toMatchObject({
      property: 'items[0].action',
      message: expect.stringContaining(`/api/subscriptions/${s.id}/cancel`),
    });

    // remove its plan + add another in one request: a move; the plan held first keeps the subscription's id.
    await items([
      { planId: team, action: 'remove' },
      { planId: business, action: 'add', grantee: 'm1' },
    ]).expect(204);
    expect((await plansNow()).map((x) => [x.id, x.planId])).toEqual([[s.id, business]]);
    expect((await seatsOf(business)).map((l) => l.granteeId)).toEqual(['m1']);
    expect(await seatsOf(team)).toEqual([]);
    // replace: the first plan's plan change, with the seats the target needs (Team: at least 2).
    const below = await items([{ planId: business, action: 'replace', newPlanId: team }]).expect(400);
    expect(below.body.errors[0]).toMatchObject({ property: 'items[0].newPlanId', message: expect.stringContaining('at least 2 seats') });
    await api().put(`/api/subscription-plans/${s.id}/seats`, { quantity: 2 }).expect(204);
    await world.core.worker.drain();
    await items([{ planId: business, action: 'replace', newPlanId: team }]).expect(204);
    expect((await plansNow()).map((x) => x.planId)).toEqual([team]);
    await items([{ planId: team, action: 'replace', newPlanId: team }]).expect(400);
    await items([{ planId: team, action: 'replace' }]).expect(400);
    await items([{ planId: business, action: 'replace', newPlanId: team }]).expect(400);
  });

  it('lists invoices and gives a portal link', async () => {
    const s = await purchase(world, org.keys['plans.notes.team'], 'invoiced', 2);
    const invoices = await api().get(`/api/subscriptions/${s.subscription.id}/invoices`).expect(200);
    expect(Object.keys(invoices.body)).toEqual(['data']);
    expect(invoices.body.data.length).toBeGreaterThan(0);
    const portal = await api()
      .post(`/api/subscriptions/${s.subscription.id}/portal`, {
        returnUrl: 'https://vendor.example.com/account',
        features: { paymentMethodUpdate: { enabled: true }, subscriptionCancel: { enabled: true, when: 'end' } },
      })
      .expect(200);
    expect(portal.body).toEqual({ type: 'object', data: { url: expect.stringMatching(/^http/) } });
    expect((await api().post(`/api/subscriptions/${s.subscription.id}/portal`, {}).expect(400)).body.errors[0].property).toMatch(
      /features/,
    );
  });

  it('acts in batches: each outcome reported; an unknown id 404 and a foreign one 403 change nothing', async () => {
    const [x, y] = [await buy('team', 'batcher', 'b1', 2), await buy('team', 'batcher', 'b2', 2)];
    await api().post(`/api/subscriptions/${y.id}/cancel`).expect(204);
    const res = await api()
      .post('/api/subscriptions/batch', { action: 'disable-auto-renew', subscriptionIds: [x.id, y.id] })
      .expect(200);
    expectSchema(objectOf(batchResultSchema), res.body);
    expect(res.body.data).toMatchObject({ total: 2, succeeded: 1, skipped: 1, failed: 0 });
    expect(res.body.data.results).toEqual([
      { id: x.id, status: 'succeeded' },
      { id: y.id, status: 'skipped', reason: 'already canceled' },
    ]);
    const foreign = await buy('team', 'batcher', 'b3', 2, true);
    await api()
      .post('/api/subscriptions/batch', { action: 'cancel', subscriptionIds: [x.id, '00000000-0000-4000-8000-000000000000'] })
      .expect(404);
    await api(other.liveKey)
      .post('/api/subscriptions/batch', { action: 'cancel', subscriptionIds: [x.id] })
      .expect(403);
    expect((await api().get(`/api/subscriptions/${x.id}`).expect(200)).body.data.status).toBe('active');
    await api()
      .post('/api/subscriptions/batch', { action: 'delete', subscriptionIds: [x.id] })
      .expect(400);
    await api()
      .post('/api/subscriptions/batch', { action: 'pause', subscriptionIds: [x.id] })
      .expect(400);
    await api().post('/api/subscriptions/batch', { action: 'cancel', subscriptionIds: [] }).expect(400);
    const deleted = await api(org.testKey)
      .post('/api/subscriptions/batch', { action: 'delete', subscriptionIds: [foreign.id] })
      .expect(200);
    expect(deleted.body.data.succeeded).toBe(1);
    await api(org.testKey).get(`/api/subscriptions/${foreign.id}`).expect(404);
  });

  it('deletes a test-mode subscription with its licenses (204); a live one is 400', async () => {
    const live = await buy('team', 'deleter', 'd1', 2);
    expect((await api().del(`/api/subscriptions/${live.id}`).expect(400)).body.detail).toMatch(/test mode only/);
    const s = await buy('team', 'deleter', 'd2', 2, true);
    expect((await api(org.testKey).get('/api/entitlements/check?granteeId=d2').expect(200)).body.data.entitlements.length).toBeGreaterThan(
      0,
    );
    await api(org.testKey).del(`/api/subscriptions/${s.id}`).expect(204);
    await api(org.testKey).get(`/api/subscriptions/${s.id}`).expect(404);
    expect((await api(org.testKey).get('/api/entitlements/check?granteeId=d2').expect(200)).body.data.entitlements).toEqual([]);
    await api(org.testKey).del(`/api/subscriptions/${s.id}`).expect(404);
  });
});

describe('catalog subscriptions without payment', () => {
  it('answers one it created without reading the database after the commit (an outage then cannot turn a made change into a 503)', async () => {
    // Every call of the core after the write resolved fails as an outage would.
    const core = coreDownAfter(world.core, 'subscriptionDirectory.createServiceOnly');
    const afterCommitGone = createCatalogApp({ ...world, core });
    const created = await catalogApi(afterCommitGone, org.liveKey)
      .post('/api/subscriptions', {
        plans: [{ planId: org.keys['plans.notes.free'] }],
        owner: 'after-commit-owner',
        grantee: 'after-commit',
        interval: 'month',
        intervalCount: 1,
      })
      .expect(201);
    expect(created.body.data).toMatchObject({
      status: 'active',
      isServiceOnly: true,
      interval: 'month',
      intervalCount: 1,
      ownerId: expect.any(String),
    });
    expect(core.wrote()).toBe(true);
    const read = (await catalogApi(createCatalogApp(world), org.liveKey).get(`/api/subscriptions/${created.body.data.id}`).expect(200))
      .body;
    expect(created.body).toEqual(read);
  });

  it('creates one (201) for an owner and a grantee, with the seats asked; refuses what it cannot honour', async () => {
    const team = org.keys['plans.notes.team'];
    const body = {
      plans: [{ planId: team, metadata: { seats: { quantity: 3 } } }],
      owner: 'service-owner',
      grantee: 'svc-user',
      interval: 'month',
      intervalCount: 1,
      isPerpetual: true,
    };
    const created = await api().post('/api/subscriptions', body).expect(201);
    expectSchema(objectOf(subscriptionSchema), created.body);
    expect(created.body.data).toMatchObject({
      status: 'active',
      isServiceOnly: true,
      paymentSubscriptionId: null,
      cancelAtPeriodEnd: false,
    });
    const id = created.body.data.id;
    expect((await api().get(`/api/subscription-plans/${id}`).expect(200)).body.data).toMatchObject({ seats: 3, planId: team });
    expect((await api().get(`/api/owners/${created.body.data.ownerId}`).expect(200)).body.data.value).toBe('service-owner');
    const check = await api().get('/api/entitlements/check?granteeId=svc-user').expect(200);
    expect(check.body.data.entitlements.map((e: { value: string }) => e.value).sort()).toEqual(['edit', 'export']);
    // Without a grantee every seat starts free; cancelAtPeriodEnd ends it with its first period.
    const ending = await api()
      .post('/api/subscriptions', { ...body, grantee: undefined, cancelAtPeriodEnd: true, plans: [{ planId: team }] })
      .expect(201);
    expect(ending.body.data.cancelAtPeriodEnd).toBe(true);
    expect((await api().get(`/api/subscription-plans/${ending.body.data.id}`).expect(200)).body.data.seats).toBe(2);
    const refused = async (change: object, property: string) =>
      expect(
        (
          await api()
            .post('/api/subscriptions', { ...body, ...change })
            .expect(400)
        ).body.errors[0].property,
      ).toMatch(property);
    await refused({ plans: [{ planId: team }, { planId: team }] }, 'plans[1].planId');
    await refused({ plans: [] }, 'plans');
    // Several plans: one subscription holding each, the grantee on a seat of every one.
    const business = org.keys['plans.notes.business'];
    const [seatSlug] = (await api().get(`/api/plans/${business}?expand=lineItems`).expect(200)).body.data.lineItems.data
      .filter((l: { priceType: string }) => l.priceType === 'per_seat')
      .map((l: { slug: string }) => l.slug);
    const both = await api()
      .post('/api/subscriptions', {
        ...body,
        owner: 'two-plan-buyer',
        plans: [{ planId: team }, { planId: business, metadata: { [seatSlug]: { quantity: 2 } } }],
      })
      .expect(201);
    const parts = (await api().get(`/api/subscriptions/${both.body.data.id}?expand=subscriptionPlans`).expect(200)).body.data
      .subscriptionPlans.data;
    expect(parts.map((p: { planId: string; seats: number }) => [p.planId, p.seats])).toEqual([
      [team, 2],
      [business, 2],
    ]);
    const granted = await world.core.licenses.list(org.tenant, { subscriptionId: both.body.data.id, planId: business });
    expect(granted.map((l) => l.granteeId).sort()).toEqual(['svc-user', null].sort());
    await refused({ interval: 'year' }, 'interval');
    await refused({ expiryDate: new Date(world.clock.now().getTime() - 1000).toISOString() }, 'expiryDate');
    await refused({ expiryDate: 'next week' }, 'expiryDate');
    await refused({ owner: '' }, 'owner');
    await api()
      .post('/api/subscriptions', { ...body, plans: [{ planId: other.keys['plans.notes.team'] }] })
      .expect(403);
    await api()
      .post('/api/subscriptions', { ...body, plans: [{ planId: '00000000-0000-4000-8000-000000000000' }] })
      .expect(404);
    await api(org.testKey).post('/api/subscriptions', body).expect(404);
  });

  it('takes expiryDate: the first period ends there, and so does the subscription (unless cancelAtPeriodEnd: false)', async () => {
    const expiry = new Date(world.clock.now().getTime() + 10 * 86_400_000);
    const body = {
      plans: [{ planId: org.keys['plans.notes.team'] }],
      owner: 'expiring-owner',
      grantee: 'exp-user',
      interval: 'month',
      intervalCount: 1,
      expiryDate: expiry.toISOString(),
    };
    const created = await api().post('/api/subscriptions', body).expect(201);
    expectSchema(objectOf(subscriptionSchema), created.body);
    expect(created.body.data).toMatchObject({ status: 'active', cancelAtPeriodEnd: true });
    const plan = (await api().get(`/api/subscription-plans/${created.body.data.id}?expand=subscriptionPlanLineItems`).expect(200)).body
      .data;
    expect(plan.subscriptionPlanLineItems.data[0].expiryDate).toBe(expiry.toISOString());
    expect((await api().get('/api/entitlements/check?granteeId=exp-user').expect(200)).body.data.entitlements.length).toBeGreaterThan(0);
    // Renewing after the date, when asked to.
    const renewing = await api()
      .post('/api/subscriptions', { ...body, grantee: 'exp-user-2', cancelAtPeriodEnd: false })
      .expect(201);
    expect(renewing.body.data.cancelAtPeriodEnd).toBe(false);
    // The date passes: the expiring one is over, its grantee has nothing left.
    world.clock.advanceDays(11);
    expect((await api().get(`/api/subscriptions/${created.body.data.id}`).expect(200)).body.data.status).toBe('canceled');
    expect((await api().get('/api/entitlements/check?granteeId=exp-user').expect(200)).body.data.entitlements).toEqual([]);
  });
});

describe('catalog subscription plans', () => {
  it('lists and retrieves the plan each subscription holds, by owner and status', async () => {
    const s = await buy('team', 'planner', 'p1', 2);
    const list = await api().get('/api/subscription-plans?owner=planner&status=active&expand=plan,subscription').expect(200);
    expectSchema(listOf(subscriptionPlanItemSchema), list.body);
    expect(list.body.data).toEqual([
      expect.objectContaining({ id: s.id, subscriptionId: s.id, groupId: s.id, seats: 2, status: 'active', planId: s.planId }),
    ]);
    expect(list.body.data[0].plan.id).toBe(s.planId);
    expect(list.body.data[0].subscription.id).toBe(s.id);
    expect((await api().get('/api/subscription-plans?owner=planner&status=inactive').expect(200)).body.data).toEqual([]);
    // Unpaid (Stripe's retries over) or paused, its plans grant nothing: `inactive`, shown and filtered alike.
    for (const status of ['UNPAID', 'PAUSED'] as const) {
      await world.db.uow.run(async (r) => {
        const stored = await r.subscriptions.get(s.id);
        await r.subscriptions.save({ ...stored!, status });
      });
      expect((await api().get('/api/subscription-plans?owner=planner&status=active').expect(200)).body.data).toEqual([]);
      const inactive = (await api().get('/api/subscription-plans?owner=planner&status=inactive').expect(200)).body.data;
      expect(inactive).toEqual([expect.objectContaining({ id: s.id, status: 'inactive' })]);
    }
    await world.db.uow.run(async (r) => {
      const stored = await r.subscriptions.get(s.id);
      await r.subscriptions.save({ ...stored!, status: 'ACTIVE' });
    });
    const one = await api().get(`/api/subscription-plans/${s.id}`).expect(200);
    expectSchema(objectOf(subscriptionPlanItemSchema), one.body);
    expect(one.body.data).toMatchObject({ id: s.id, ownerId: s.customerId });
    await api(other.liveKey).get(`/api/subscription-plans/${s.id}`).expect(403);
    await api().get('/api/subscription-plans/00000000-0000-4000-8000-000000000000').expect(404);
  });

  it('sets the seats (204), applied by the worker; below the unassigned seats is 400', async () => {
    const s = await buy('team', 'seater', 's1', 2);
    // The same number asked twice before the worker runs (a retry, two clients): 4 seats, not 6.
    await api().put(`/api/subscription-plans/${s.id}/seats`, { quantity: 4 }).expect(204);
    await api().put(`/api/subscription-plans/${s.id}/seats`, { quantity: 4 }).expect(204);
    await world.core.worker.drain();
    expect((await api().get(`/api/subscription-plans/${s.id}`).expect(200)).body.data.seats).toBe(4);
    await api().put(`/api/subscription-plans/${s.id}/seats`, { quantity: 2 }).expect(204);
    await world.core.worker.drain();
    expect((await api().get(`/api/subscription-plans/${s.id}`).expect(200)).body.data.seats).toBe(2);
    // One seat is assigned (s1) and one free: going to 0 is refused.
    expect((await api().put(`/api/subscription-plans/${s.id}/seats`, { quantity: 0 }).expect(400)).body.errors[0].property).toBe(
      'quantity',
    );
    await api().put(`/api/subscription-plans/${s.id}/seats`, {}).expect(204);
  });
});

describe('catalog subscription-plan line items', () => {
  it("lists a subscription plan's line items, retrieves one, sets a per-seat quantity (the seats) and syncs", async () => {
    const s = await buy('team', 'liner', 'l1', 2);
    const plan = await api().get(`/api/subscription-plans/${s.id}?expand=subscriptionPlanLineItems`).expect(200);
    expectSchema(objectOf(subscriptionPlanItemSchema), plan.body);
    const items = plan.body.data.subscriptionPlanLineItems.data;
    expect(items).toHaveLength(1);
    expect(items[0]).toMatchObject({
      subscriptionPlanId: s.id,
      type: 'unit',
      quantity: 2,
      expiryDate: null,
      lineItem: { priceType: 'per_seat' },
    });
    const id = items[0].id;
    const one = await api().get(`/api/subscription-plan-line-items/${id}`).expect(200);
    expectSchema(objectOf(subscriptionLineItemSchema), one.body);
    expect(one.body.data).toMatchObject({
      id,
      quantity: 2,
      subscriptionPlan: { id: s.id, subscription: { id: s.id } },
      lineItem: { id: items[0].lineItem.id },
    });
    await api().put(`/api/subscription-plan-line-items/${id}`, { quantity: 5, proration: 'none' }).expect(204);
    await world.core.worker.drain();
    expect((await api().get(`/api/subscription-plan-line-items/${id}`).expect(200)).body.data.quantity).toBe(5);
    expect((await api().get(`/api/subscription-plans/${s.id}`).expect(200)).body.data.seats).toBe(5);
    await api().put(`/api/subscription-plan-line-items/${id}`, {}).expect(400);
    await api().put(`/api/subscription-plan-line-items/${id}/sync`).expect(204);
    await api(other.liveKey).get(`/api/subscription-plan-line-items/${id}`).expect(403);
    await api(org.testKey).put(`/api/subscription-plan-line-items/${id}/sync`).expect(404);
    await api().get('/api/subscription-plan-line-items/00000000-0000-4000-8000-000000000000').expect(404);
    // A metered (user) plan's line item has a quantity of 1: another is 400.
    const metered = await buy('metered', 'liner', 'l2', 1);
    const meteredItem = (await api().get(`/api/subscription-plans/${metered.id}?expand=subscriptionPlanLineItems`).expect(200)).body.data
      .subscriptionPlanLineItems.data[0];
    expect(meteredItem).toMatchObject({ type: 'metered', quantity: 1 });
    await api().put(`/api/subscription-plan-line-items/${meteredItem.id}`, { quantity: 1 }).expect(204);
    expect(
      (await api().put(`/api/subscription-plan-line-items/${meteredItem.id}`, { quantity: 3 }).expect(400)).body.errors[0].property,
    ).toBe('quantity');
    // Canceled at the period's end: the line item shows when it expires.
    await api().put(`/api/subscriptions/${s.id}/auto-renew?status=disable`).expect(204);
    expect((await api().get(`/api/subscription-plan-line-items/${id}`).expect(200)).body.data.expiryDate).toEqual(expect.any(String));
  });
});

describe('catalog owners', () => {
  it('lists by search and provider id, pages, and expands subscriptions', async () => {
    const s = await buy('team', 'owner-alpha', 'oa', 2);
    await buy('team', 'owner-beta', 'ob', 2);
    const list = await api().get('/api/owners?search=owner-&expand=subscriptions').expect(200);
    expectSchema(listOf(ownerItemSchema), list.body);
    expect(list.body.data.map((o: { value: string }) => o.value)).toEqual(['owner-alpha', 'owner-beta']);
    expect(list.body.data[0].subscriptions).toMatchObject({
      type: 'list',
      hasMore: false,
      data: [{ id: s.id }],
      path: '/api/subscriptions?owner=owner-alpha',
    });
    const page = (await api().get('/api/owners?search=owner-&limit=1').expect(200)).body;
    expect(page).toMatchObject({ hasMore: true, data: [{ value: 'owner-alpha' }] });
    expect(page.data[0]).not.toHaveProperty('subscriptions');
    expect((await api().get(`/api/owners?search=owner-&limit=1&after=${page.nextCursor}`).expect(200)).body.data[0].value).toBe(
      'owner-beta',
    );
    expect((await api().get('/api/owners?stripeCustomerId=cus_none').expect(200)).body.data).toEqual([]);
    expect((await api(other.liveKey).get('/api/owners?search=owner-').expect(200)).body.data).toEqual([]);
    await api(org.readOnlyKey).get('/api/owners').expect(403);
  });

  it('retrieves, updates (204; a taken value 400), and deletes only an owner without subscriptions (409)', async () => {
    const s = await buy('team', 'owner-gamma', 'og', 2);
    await buy('team', 'owner-delta', 'od', 2);
    const id = s.customerId;
    const one = await api().get(`/api/owners/${id}?expand=subscriptions`).expect(200);
    expectSchema(objectOf(ownerItemSchema), one.body);
    expect(one.body.data).toMatchObject({
      id,
      value: 'owner-gamma',
      emailAddress: 'owner-gamma@example.com',
      subscriptions: { data: [{ id: s.id }] },
    });
    // Its groups: the subscription's own, by the subscription's id.
    const withGroups = (await api().get(`/api/owners/${id}?expand=groups`).expect(200)).body.data;
    expect(withGroups.groups).toMatchObject({ type: 'list', hasMore: false, data: [{ id: s.id, ownerId: id }] });
    expect(withGroups).not.toHaveProperty('subscriptions');
    await api().put(`/api/owners/${id}`, { owner: 'owner-gamma-2', email: 'g2@example.com' }).expect(204);
    expect((await api().get(`/api/owners/${id}`).expect(200)).body.data).toMatchObject({
      value: 'owner-gamma-2',
      emailAddress: 'g2@example.com',
    });
    await api().put(`/api/owners/${id}`, { owner: 'owner-gamma-2', email: '' }).expect(204);
    expect((await api().get(`/api/owners/${id}`).expect(200)).body.data.emailAddress).toBeNull();
    expect((await api().put(`/api/owners/${id}`, { owner: 'owner-delta' }).expect(400)).body.errors[0].property).toBe('owner');
    expect((await api().put(`/api/owners/${id}`, { email: 'x@example.com' }).expect(400)).body.errors[0].property).toMatch(/owner/);
    await api().put(`/api/owners/${id}`, { owner: 'x', email: 'not an email' }).expect(400);
    await api().del(`/api/owners/${id}`).expect(409);
    await api(other.liveKey).del(`/api/owners/${id}`).expect(403);
    await api(org.testKey).get(`/api/owners/${id}`).expect(404);
    // Without its subscription (deleted in test mode) the owner can go.
    const t = await buy('team', 'owner-epsilon', 'oe', 2, true);
    await api(org.testKey).del(`/api/subscriptions/${t.id}`).expect(204);
    await api(org.testKey).del(`/api/owners/${t.customerId}`).expect(204);
    await api(org.testKey).get(`/api/owners/${t.customerId}`).expect(404);
  });
});

describe('an items body as steps (itemStepsOf)', () => {
  const held = { planIds: ['first', 'a', 'b'], first: 'first' };
  it('makes the replaces of added plans one change (each: the new plan added, the old one removed), so they apply together', () => {
    expect(
      itemStepsOf(
        [
          { planId: 'A', action: 'replace', newPlanId: 'x' },
          { planId: 'b', action: 'replace', newPlanId: 'y' },
        ],
        held,
      ),
    ).toEqual({
      replaces: [],
      steps: [
        { kind: 'add', planId: 'x', at: 'items[0]', field: 'items[0].newPlanId' },
        { kind: 'remove', planId: 'a', at: 'items[0]' },
        { kind: 'add', planId: 'y', at: 'items[1]', field: 'items[1].newPlanId' },
        { kind: 'remove', planId: 'b', at: 'items[1]' },
      ],
    });
  });
  it("keeps the first plan's replace a plan change of its own, and refuses it beside others naming it", () => {
    expect(itemStepsOf([{ planId: 'first', action: 'replace', newPlanId: 'x' }], held)).toEqual({
      steps: [],
      replaces: [{ at: 'items[0]', planId: 'first', to: 'x', first: true }],
    });
    const refused = (() => {
      try {
        itemStepsOf(
          [
            { planId: 'a', action: 'replace', newPlanId: 'x' },
            { planId: 'first', action: 'replace', newPlanId: 'y' },
          ],
          held,
        );
      } catch (e) {
        return e as { code: string; details: { property: string }[] };
      }
    })();
    expect([refused?.code, refused?.details[0].property]).toEqual(['VALIDATION_FAILED', 'items[1]']);
  });
});
