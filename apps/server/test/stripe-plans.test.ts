import nock from 'nock';
import request from 'supertest';
import { createTestWorld, seedOrganisation, type SeededOrg, type TestWorld } from '@tollgate/runtime/testing';
import { createServerApp } from '../src';
import { expectStripeMocksDone, postStripeEvent } from './stripe-harness';

/**
 * Plans added to and removed from a subscription paid through Stripe (issue #20, the lane
 * "stripeplans"): `PUT /api/subscriptions/:id/items` makes or deletes a Stripe subscription item,
 * its id is kept on the added plan, and the webhook re-sync tells the items apart by plan.
 */
const API = 'https://api.stripe.com';
const SECRET = 'whsec_tollgate_plans_secret';
const DAY = 86_400;
let world: TestWorld;
let org: SeededOrg;
let app: ReturnType<typeof createServerApp>;
let subscriptionId: string;
const now = Math.floor(Date.now() / 1000);
const logged: { message: string; fields?: Record<string, unknown> }[] = [];
const logger = {
  info: (message: string, fields?: Record<string, unknown>) => void logged.push({ message, fields }),
  error: () => undefined,
};

beforeAll(async () => {
  world = await createTestWorld({ config: { stripeSecretKey: 'sk_test_tollgate', stripeWebhookSecret: SECRET }, logger });
  org = await seedOrganisation(world, 'stripe-plans-org');
  app = createServerApp(world);
});
afterAll(() => world?.close());
afterEach(expectStripeMocksDone);

const bearer = (r: request.Test) => r.set('authorization', `Bearer ${org.liveKey}`);
const webhook = (event: object) => postStripeEvent(app, SECRET, event);
const event = (id: string, type: string, object: object) => ({
  id,
  object: 'event',
  type,
  data: { object },
  created: now,
  livemode: false,
  api_version: '2026-10-28.endive',
});
const item = (id: string, price: string, quantity: number) => ({
  id,
  quantity,
  current_period_start: now,
  current_period_end: now + 30 * DAY,
  price: { id: price, product: 'prod_p' },
});
const stripeSubscription = (items: object[]) => ({
  id: 'sub_p',
  object: 'subscription',
  status: 'active',
  customer: 'cus_p',
  cancel_at_period_end: false,
  canceled_at: null,
  items: { object: 'list', has_more: false, data: items },
});
const TEAM_ITEM = item('si_team', 'price_team', 3);
const seats = async (plan: string) =>
  (await world.core.licenses.list(org.tenant, {})).filter(
    (l) => l.subscriptionId === subscriptionId && l.planId === org.keys[plan] && l.status !== 'CANCELED',
  );
const check = (grantee: string) =>
  request(app).get(`/licenses/check?productUuid=${org.keys['products.notes']}&granteeIds=${grantee}`).set('x-api-key', org.liveKey);
const plansHeld = async () =>
  (await bearer(request(app).get(`/api/subscriptions/${subscriptionId}?expand=subscriptionPlans`)).expect(200)).body.data.subscriptionPlans
    .data as { id: string; planId: string }[];
const items = (body: object) => bearer(request(app).put(`/api/subscriptions/${subscriptionId}/items`)).send(body);
const addBusiness = { items: [{ planId: '', action: 'add', grantee: 'bob' }], proration: 'always_invoice' };
const business = () => ({ ...addBusiness, items: [{ ...addBusiness.items[0], planId: org.keys['plans.notes.business'] }] });

describe('plans added to and removed from a Stripe subscription', () => {
  it('a team plan bought through Stripe (3 seats, alice on one)', async () => {
    let ref = '';
    nock(API)
      .post('/v1/checkout/sessions', (b) => ((ref = b.client_reference_id), true))
      .reply(200, { id: 'cs_p', url: 'https://checkout.stripe.com/c/cs_p' });
    await request(app)
      .get(
        `/plans/${org.keys['plans.notes.team']}/checkoutlink?successUrl=https://v.example.com/ok&cancelUrl=https://v.example.com/no&granteeId=alice&member=m@example.com&quantity=3`,
      )
      .set('x-api-key', org.liveKey)
      .set('version', 'v1')
      .expect(200);
    nock(API)
      .get('/v1/checkout/sessions/cs_p')
      .query({ 'expand[0]': 'line_items' })
      .reply(200, {
        id: 'cs_p',
        object: 'checkout.session',
        mode: 'subscription',
        client_reference_id: ref,
        payment_status: 'paid',
        subscription: 'sub_p',
        customer: 'cus_p',
        customer_details: { email: 'payer@example.com' },
        line_items: { object: 'list', data: [{ id: 'li_p', quantity: 3 }] },
      });
    nock(API)
      .get('/v1/subscriptions/sub_p')
      .reply(200, stripeSubscription([TEAM_ITEM]));
    expect((await webhook(event('evt_p1', 'checkout.session.completed', { id: 'cs_p' })).expect(200)).body.result).toBe('completed');
    const alice = (await world.core.licenses.list(org.tenant, {})).find((l) => l.granteeId === 'alice');
    subscriptionId = alice?.subscriptionId as string;
    expect(await seats('plans.notes.team')).toHaveLength(3);
    await check('bob').expect(204);
  });

  it('adds a plan: one Stripe subscription item (price, seats, proration, idempotency key); its seats exist and the check grants its features', async () => {
    let body: Record<string, string> = {};
    // An inline price needs the subscription's product: read from its first item.
    nock(API)
      .get('/v1/subscriptions/sub_p')
      .reply(200, stripeSubscription([TEAM_ITEM]));
    nock(API)
      .post('/v1/subscription_items', (b) => ((body = b), true))
      .matchHeader('idempotency-key', /^tollgate-plan-add-[0-9a-f-]{36}-[0-9a-f-]{36}$/)
      .reply(200, { id: 'si_biz', object: 'subscription_item', quantity: 1 });
    await items(business()).expect(204);
    expect(body).toMatchObject({
      subscription: 'sub_p',
      quantity: '1',
      proration_behavior: 'always_invoice',
      'price_data[unit_amount]': '3000',
      'price_data[currency]': 'usd',
      'price_data[product]': 'prod_p',
      'price_data[recurring][interval]': 'month',
      'metadata[tollgatePlan]': org.keys['plans.notes.business'],
    });
    expect((await plansHeld()).map((p) => p.planId)).toEqual([org.keys['plans.notes.team'], org.keys['plans.notes.business']]);
    const added = await seats('plans.notes.business');
    expect(added.map((l) => l.granteeId)).toEqual(['bob']);
    expect(added[0].paymentService).toBe('stripe');
    expect((await check('bob').expect(200)).body.capabilities).toEqual(['admin', 'edit', 'export']);
    // The Stripe item's id is kept on the added plan.
    const s = (await world.core.subscriptionDirectory.get(org.tenant, subscriptionId)).subscription;
    expect(s.addedPlans.map((a) => a.paymentItemId)).toEqual(['si_biz']);
  });

  it('still refuses what is invalid before calling Stripe: a plan held already, a usage-based plan (400, nothing sent)', async () => {
    const res = await items(business()).expect(400);
    expect(res.body.errors[0].property).toBe('items[0].planId');
    await items({ items: [{ planId: org.keys['plans.notes.metered'], action: 'add' }] }).expect(400);
    expect(await plansHeld()).toHaveLength(2);
  });

  it("a webhook updating the added item's quantity changes only that plan's seats; an item of no plan here is left", async () => {
    nock(API)
      .get('/v1/subscriptions/sub_p')
      .reply(200, stripeSubscription([TEAM_ITEM, item('si_biz', 'price_inline_biz', 4), item('si_other', 'price_other', 7)]));
    expect((await webhook(event('evt_p2', 'customer.subscription.updated', { id: 'sub_p' })).expect(200)).body.result).toBe('applied');
    const biz = await seats('plans.notes.business');
    expect(biz).toHaveLength(4);
    expect(biz.filter((l) => l.granteeId === 'bob')).toHaveLength(1);
    expect(await seats('plans.notes.team')).toHaveLength(3);
    const s = (await world.core.subscriptionDirectory.get(org.tenant, subscriptionId)).subscription;
    expect(s.quantity).toBe(3);
    expect(s.addedPlans.map((a) => [a.quantity, a.paymentItemId])).toEqual([[4, 'si_biz']]);
    expect(logged.filter((l) => l.fields?.itemId === 'si_other').map((l) => l.fields?.subscriptionId)).toEqual([subscriptionId]);
    // Lowered at Stripe: unassigned seats go, bob's stays.
    nock(API)
      .get('/v1/subscriptions/sub_p')
      .reply(200, stripeSubscription([TEAM_ITEM, item('si_biz', 'price_inline_biz', 2)]));
    await webhook(event('evt_p3', 'customer.subscription.updated', { id: 'sub_p' })).expect(200);
    expect((await seats('plans.notes.business')).map((l) => l.granteeId).sort()).toEqual(['bob', null]);
    expect(await seats('plans.notes.team')).toHaveLength(3);
  });

  it("an added plan's seats set through the API: its Stripe item's quantity", async () => {
    const added = (await plansHeld())[1];
    let body: Record<string, string> = {};
    nock(API)
      .post('/v1/subscription_items/si_biz', (b) => ((body = b), true))
      .matchHeader('idempotency-key', /^tollgate-plan-seats-5-/)
      .reply(200, { id: 'si_biz', object: 'subscription_item', quantity: 5 });
    await bearer(request(app).put(`/api/subscription-plans/${added.id}/seats`))
      .send({ quantity: 5 })
      .expect(204);
    expect(body).toMatchObject({ quantity: '5', proration_behavior: 'create_prorations' });
    expect(await seats('plans.notes.business')).toHaveLength(5);
  });

  it('removes the plan: its Stripe item deleted (prorated as asked), its seats end, the check no longer grants it', async () => {
    let query = '';
    nock(API)
      .delete('/v1/subscription_items/si_biz')
      .query(true)
      .matchHeader('idempotency-key', /^tollgate-plan-remove-/)
      .reply(200, (uri) => ((query = uri), { id: 'si_biz', object: 'subscription_item', deleted: true }));
    await items({ items: [{ planId: org.keys['plans.notes.business'], action: 'remove' }], proration: 'none' }).expect(204);
    expect(decodeURIComponent(query)).toContain('proration_behavior=none');
    expect(await seats('plans.notes.business')).toEqual([]);
    expect((await plansHeld()).map((p) => p.planId)).toEqual([org.keys['plans.notes.team']]);
    await check('bob').expect(204);
    expect(await seats('plans.notes.team')).toHaveLength(3);
  });

  it('Stripe refusing the new item leaves the subscription unchanged (502, the provider error)', async () => {
    nock(API)
      .get('/v1/subscriptions/sub_p')
      .reply(200, stripeSubscription([TEAM_ITEM]));
    nock(API)
      .post('/v1/subscription_items')
      .reply(400, { error: { type: 'invalid_request_error', message: 'This customer has no attached payment source' } });
    const before = (await world.core.licenses.list(org.tenant, {})).length;
    const res = await items(business()).expect(502);
    expect(JSON.stringify(res.body)).toContain('no attached payment source');
    expect(JSON.stringify(res.body)).not.toContain('sk_test');
    expect((await plansHeld()).map((p) => p.planId)).toEqual([org.keys['plans.notes.team']]);
    expect(await world.core.licenses.list(org.tenant, {})).toHaveLength(before);
    await check('bob').expect(204);
  });

  it('Stripe refusing the second plan of a request: the item made for the first is deleted again, nothing written here', async () => {
    nock(API)
      .get('/v1/subscriptions/sub_p')
      .times(2)
      .reply(200, stripeSubscription([TEAM_ITEM]));
    nock(API)
      .post('/v1/subscription_items', (b) => b.quantity === '1' && b['price_data[unit_amount]'] === '3000')
      .reply(200, { id: 'si_made', object: 'subscription_item', quantity: 1 });
    nock(API)
      .post('/v1/subscription_items')
      .reply(400, { error: { type: 'invalid_request_error', message: 'No such price' } });
    let undone = '';
    nock(API)
      .delete('/v1/subscription_items/si_made')
      .query(true)
      .reply(200, (uri) => ((undone = uri), { id: 'si_made', object: 'subscription_item', deleted: true }));
    const before = (await world.core.licenses.list(org.tenant, {})).length;
    await items({
      items: [
        { planId: org.keys['plans.notes.business'], action: 'add', grantee: 'bob' },
        { planId: org.keys['plans.notes.free'], action: 'add' },
      ],
    }).expect(502);
    expect(decodeURIComponent(undone)).toContain('proration_behavior=none');
    expect((await plansHeld()).map((p) => p.planId)).toEqual([org.keys['plans.notes.team']]);
    expect(await world.core.licenses.list(org.tenant, {})).toHaveLength(before);
  });

  it("an added plan's item removed at Stripe ends that plan's seats at the next re-sync", async () => {
    nock(API)
      .get('/v1/subscriptions/sub_p')
      .reply(200, stripeSubscription([TEAM_ITEM]));
    nock(API).post('/v1/subscription_items').reply(200, { id: 'si_biz2', object: 'subscription_item', quantity: 1 });
    await items(business()).expect(204);
    expect((await check('bob').expect(200)).body.capabilities).toEqual(['admin', 'edit', 'export']);
    nock(API)
      .get('/v1/subscriptions/sub_p')
      .reply(200, stripeSubscription([TEAM_ITEM]));
    await webhook(event('evt_p4', 'customer.subscription.updated', { id: 'sub_p' })).expect(200);
    expect(await seats('plans.notes.business')).toEqual([]);
    expect((await plansHeld()).map((p) => p.planId)).toEqual([org.keys['plans.notes.team']]);
    await check('bob').expect(204);
    expect(await seats('plans.notes.team')).toHaveLength(3);
    expect((await check('alice').expect(200)).body.capabilities).toEqual(['edit', 'export']);
  });
});
