import nock from 'nock';
import request from 'supertest';
import { DomainError, ErrorCodes, type UnitOfWork } from '@tollgate/core';
import { createTestWorld, seedOrganisation, type SeededOrg, type TestWorld } from '@tollgate/runtime/testing';
import { createServerApp } from '../src';
import { expectStripeMocksDone, paidCheckoutSession, postStripeEvent } from './stripe-harness';

/**
 * A change Stripe took whose write here was lost (a crash, a kill -9, an outage after Stripe's
 * answer with its undo never reaching Stripe), repaired by Stripe's webhook re-sync from the plan
 * each item names (`metadata.tollgatePlan`): an added plan's orphan item is adopted, a plan change
 * at an inline price is followed. The crash is the write after Stripe's call failing (the unit of
 * work's transaction refused once) and the added plan's undo refused at Stripe: the state a
 * process killed right after Stripe's answer leaves.
 */
const API = 'https://api.stripe.com';
const SECRET = 'whsec_tollgate_orphans_secret';
const DAY = 86_400;
let world: TestWorld;
let org: SeededOrg;
let app: ReturnType<typeof createServerApp>;
const now = Math.floor(Date.now() / 1000);
const logged: { level: 'info' | 'error'; message: string; fields?: Record<string, unknown> }[] = [];
const logger = {
  info: (message: string, fields?: Record<string, unknown>) => void logged.push({ level: 'info', message, fields }),
  error: (message: string, fields?: Record<string, unknown>) => void logged.push({ level: 'error', message, fields }),
};

beforeAll(async () => {
  world = await createTestWorld({ config: { stripeSecretKey: 'sk_test_tollgate', stripeWebhookSecret: SECRET }, logger });
  org = await seedOrganisation(world, 'stripe-orphans-org');
  app = createServerApp(world);
});
afterAll(() => world?.close());
afterEach(() => {
  jest.restoreAllMocks();
  expectStripeMocksDone();
});

/**
 * The next transaction after `arm()` fails as an outage would (the runtime's unit of work is the
 * same class as the test database's: its prototype is patched, once).
 */
function crashNextWrite(): () => void {
  const proto = Object.getPrototypeOf(world.db.uow) as UnitOfWork;
  const spy = jest.spyOn(proto, 'run');
  return () =>
    void spy.mockImplementationOnce(() => Promise.reject(new DomainError(ErrorCodes.DATABASE_UNAVAILABLE, 'the database is unavailable')));
}

const bearer = (r: request.Test) => r.set('authorization', `Bearer ${org.liveKey}`);
const webhook = (event: object) => postStripeEvent(app, SECRET, event);
const event = (id: string, object: object) => ({
  id,
  object: 'event',
  type: 'customer.subscription.updated',
  data: { object },
  created: now,
  livemode: false,
  api_version: '2026-10-28.endive',
});
/** What an inline price bills, as Stripe shows it on the item's price (the sample catalog: Business $30, Team $12, Metered $5, monthly). */
const bills = (unitAmount: number, currency = 'usd') => ({
  unit_amount: unitAmount,
  currency,
  recurring: { interval: 'month', interval_count: 1 },
});
const BUSINESS = bills(3000);
const item = (id: string, price: string, quantity: number, planId?: string, billed: object = {}) => ({
  id,
  quantity,
  current_period_start: now,
  current_period_end: now + 30 * DAY,
  price: { id: price, product: 'prod_o', ...billed },
  metadata: planId ? { tollgatePlan: planId } : {},
});
const errors = (subscription: string) => logged.filter((l) => l.level === 'error' && l.fields?.subscriptionId === subscription);
const stripeSubscription = (id: string, items: object[]) => ({
  id,
  object: 'subscription',
  status: 'active',
  customer: `cus_${id}`,
  cancel_at_period_end: false,
  canceled_at: null,
  items: { object: 'list', has_more: false, data: items },
});
const check = (grantee: string) =>
  request(app).get(`/licenses/check?productUuid=${org.keys['products.notes']}&granteeIds=${grantee}`).set('x-api-key', org.liveKey);
const view = async (id: string) => (await world.core.subscriptionDirectory.get(org.tenant, id)).subscription;
const seats = async (id: string, plan: string) =>
  (await world.core.licenses.list(org.tenant, {})).filter(
    (l) => l.subscriptionId === id && l.planId === org.keys[plan] && l.status !== 'CANCELED',
  );

/** A Team subscription of 3 seats bought through Stripe (`sub`), `grantee` on one; its id here. */
async function buyTeam(sub: string, grantee: string): Promise<string> {
  let ref = '';
  nock(API)
    .post('/v1/checkout/sessions', (b) => ((ref = b.client_reference_id), true))
    .reply(200, { id: `cs_${sub}`, url: `https://checkout.stripe.com/c/cs_${sub}` });
  await request(app)
    .get(
      `/plans/${org.keys['plans.notes.team']}/checkoutlink?successUrl=https://v.example.com/ok&cancelUrl=https://v.example.com/no&granteeId=${grantee}&member=${grantee}@example.com&quantity=3`,
    )
    .set('x-api-key', org.liveKey)
    .set('version', 'v1')
    .expect(200);
  nock(API)
    .get(`/v1/checkout/sessions/cs_${sub}`)
    .query({ 'expand[0]': 'line_items' })
    .reply(200, paidCheckoutSession(`cs_${sub}`, ref, sub, 3, `${grantee}@example.com`));
  nock(API)
    .get(`/v1/subscriptions/${sub}`)
    .reply(200, stripeSubscription(sub, [item(`si_${sub}`, `price_inline_${sub}`, 3)]));
  const payload = { ...event(`evt_${sub}_paid`, { id: `cs_${sub}` }), type: 'checkout.session.completed' };
  expect((await webhook(payload).expect(200)).body.result).toBe('completed');
  const license = (await world.core.licenses.list(org.tenant, {})).find((l) => l.granteeId === grantee);
  return license?.subscriptionId as string;
}

describe('a plan added at Stripe whose write here was lost', () => {
  let id = '';
  const business = () => org.keys['plans.notes.business'];
  const orphan = () => item('si_orphan', 'price_inline_orphan', 1, business(), BUSINESS);

  it('the add: Stripe made the item, the write failed and the undo never reached Stripe; the request answered 503', async () => {
    id = await buyTeam('sub_a', 'alice');
    const arm = crashNextWrite();
    nock(API)
      .get('/v1/subscriptions/sub_a')
      .reply(200, stripeSubscription('sub_a', [item('si_sub_a', 'price_inline_sub_a', 3)]));
    nock(API)
      .post('/v1/subscription_items')
      .reply(200, () => (arm(), { id: 'si_orphan', object: 'subscription_item', quantity: 1 }));
    // The process died before its undo: Stripe never deletes the item.
    nock(API)
      .delete('/v1/subscription_items/si_orphan')
      .query(true)
      .reply(400, { error: { type: 'invalid_request_error', message: 'simulated: the process was gone before the undo' } });
    const res = await bearer(request(app).put(`/api/subscriptions/${id}/items`))
      .send({ items: [{ planId: business(), action: 'add' }], proration: 'always_invoice' })
      .expect(503);
    expect(JSON.stringify(res.body)).toContain('payment provider was told');
    // Stripe bills Business; Tollgate holds Team only.
    expect((await view(id)).addedPlans).toEqual([]);
    expect(await seats(id, 'plans.notes.business')).toEqual([]);
    expect((await check('alice').expect(200)).body.capabilities).toEqual(['edit', 'export']);
  });

  it("Stripe's re-sync adopts the item: the plan is held with its item and seats, as the completed add would have written", async () => {
    nock(API)
      .get('/v1/subscriptions/sub_a')
      .reply(200, stripeSubscription('sub_a', [item('si_sub_a', 'price_inline_sub_a', 3), orphan()]));
    expect((await webhook(event('evt_a1', { id: 'sub_a' })).expect(200)).body.result).toBe('applied');
    const s = await view(id);
    expect(s.addedPlans.map((a) => [a.planId, a.quantity, a.paymentItemId])).toEqual([[business(), 1, 'si_orphan']]);
    // The group's member gets the seat, as the add (no grantee named) would have given it.
    expect((await seats(id, 'plans.notes.business')).map((l) => l.granteeId)).toEqual(['alice']);
    expect((await check('alice').expect(200)).body.capabilities).toEqual(['admin', 'edit', 'export']);
    expect(s.quantity).toBe(3);
    expect(logged.some((l) => /adopted/.test(l.message) && l.fields?.itemId === 'si_orphan')).toBe(true);
  });

  it('nothing is doubled: the same event again, and another event with the same snapshot', async () => {
    const snapshot = () => stripeSubscription('sub_a', [item('si_sub_a', 'price_inline_sub_a', 3), orphan()]);
    // A delivery is a nudge: fetched before it is found to be a replay.
    nock(API).get('/v1/subscriptions/sub_a').reply(200, snapshot());
    expect((await webhook(event('evt_a1', { id: 'sub_a' })).expect(200)).body.result).toBe('duplicate');
    nock(API)
      .get('/v1/subscriptions/sub_a')
      .reply(200, stripeSubscription('sub_a', [item('si_sub_a', 'price_inline_sub_a', 3), orphan()]));
    expect((await webhook(event('evt_a2', { id: 'sub_a' })).expect(200)).body.result).toBe('applied');
    expect((await view(id)).addedPlans.map((a) => [a.planId, a.quantity, a.paymentItemId])).toEqual([[business(), 1, 'si_orphan']]);
    expect(await seats(id, 'plans.notes.business')).toHaveLength(1);
    expect(await seats(id, 'plans.notes.team')).toHaveLength(3);
    // A retry of the add finds it held (400 naming its seats), and nothing is sent to Stripe.
    const retry = await bearer(request(app).put(`/api/subscriptions/${id}/items`))
      .send({ items: [{ planId: business(), action: 'add' }] })
      .expect(400);
    expect(JSON.stringify(retry.body)).toContain('holds this plan already');
  });

  it('an item naming no plan of this organisation is left as it is (logged)', async () => {
    nock(API)
      .get('/v1/subscriptions/sub_a')
      .reply(
        200,
        stripeSubscription('sub_a', [
          item('si_sub_a', 'price_inline_sub_a', 3),
          orphan(),
          item('si_foreign', 'price_foreign', 1, '00000000-0000-4000-8000-000000000000'),
          item('si_junk', 'price_junk', 1, 'not-a-plan'),
        ]),
      );
    expect((await webhook(event('evt_a3', { id: 'sub_a' })).expect(200)).body.result).toBe('applied');
    expect((await view(id)).addedPlans).toHaveLength(1);
    const left = logged.filter((l) => /of no plan here/.test(l.message)).map((l) => l.fields?.itemId);
    expect(left).toEqual(expect.arrayContaining(['si_foreign', 'si_junk']));
  });
});

describe('a plan change at an inline price whose write here was lost', () => {
  let id = '';
  const business = () => org.keys['plans.notes.business'];

  it('the change: Stripe bills the new inline price, the write failed; the request answered 503', async () => {
    id = await buyTeam('sub_b', 'bea');
    const arm = crashNextWrite();
    let body: Record<string, string> = {};
    nock(API)
      .get('/v1/subscriptions/sub_b')
      .reply(200, stripeSubscription('sub_b', [item('si_sub_b', 'price_inline_sub_b', 3)]));
    nock(API)
      .post('/v1/subscriptions/sub_b', (b) => ((body = b), true))
      .reply(200, () => (arm(), stripeSubscription('sub_b', [item('si_sub_b', 'price_inline_new', 3, business(), BUSINESS)])));
    await request(app)
      .put(`/subscriptions/${id}/change-plan`)
      .set('x-api-key', org.liveKey)
      .set('version', 'v1')
      .send({ planUuid: business(), proration: 'none' })
      .expect(503);
    // The item names its plan, as the re-sync reads it.
    expect(body).toMatchObject({ 'items[0][id]': 'si_sub_b', 'items[0][metadata][tollgatePlan]': business() });
    expect((await view(id)).planId).toBe(org.keys['plans.notes.team']);
    expect((await check('bea').expect(200)).body.capabilities).toEqual(['edit', 'export']);
  });

  it("Stripe's re-sync follows it: the subscription and its seats move to the plan Stripe bills; a replay moves nothing more", async () => {
    const snapshot = () => stripeSubscription('sub_b', [item('si_sub_b', 'price_inline_new', 3, business(), BUSINESS)]);
    nock(API).get('/v1/subscriptions/sub_b').reply(200, snapshot());
    expect((await webhook(event('evt_b1', { id: 'sub_b' })).expect(200)).body.result).toBe('applied');
    expect(await view(id)).toMatchObject({ planId: business(), quantity: 3 });
    expect(await seats(id, 'plans.notes.business')).toHaveLength(3);
    expect(await seats(id, 'plans.notes.team')).toEqual([]);
    expect((await check('bea').expect(200)).body.capabilities).toEqual(['admin', 'edit', 'export']);
    nock(API).get('/v1/subscriptions/sub_b').reply(200, snapshot());
    expect((await webhook(event('evt_b1', { id: 'sub_b' })).expect(200)).body.result).toBe('duplicate');
    nock(API).get('/v1/subscriptions/sub_b').reply(200, snapshot());
    expect((await webhook(event('evt_b2', { id: 'sub_b' })).expect(200)).body.result).toBe('applied');
    expect(await view(id)).toMatchObject({ planId: business(), quantity: 3, addedPlans: [] });
    expect(await seats(id, 'plans.notes.business')).toHaveLength(3);
    // Nothing logged as "not followed" for the inline price of the plan now held.
    const notFollowed = logged.filter((l) => /not followed/.test(l.message) && l.fields?.subscriptionId === id);
    expect(notFollowed).toEqual([]);
  });
});

describe('an item whose name is not what it bills is not trusted (logged as an error, left)', () => {
  let id = '';
  const business = () => org.keys['plans.notes.business'];
  const first = (billed: object = bills(1200), planId?: string) => item('si_sub_c', 'price_inline_sub_c', 3, planId, billed);
  const sync = async (evt: string, items: object[]) => {
    nock(API).get('/v1/subscriptions/sub_c').reply(200, stripeSubscription('sub_c', items));
    expect((await webhook(event(evt, { id: 'sub_c' })).expect(200)).body.result).toBe('applied');
  };
  // Each test stands alone (run by name, too): the subscription is bought before any.
  beforeAll(async () => {
    id = await buyTeam('sub_c', 'cleo');
  });

  it.each([
    ['$0', bills(0)],
    ["Team's price", bills(1200)],
  ])('an item naming Business but billing %s is not adopted: no Business seat, an error naming it', async (label, billed) => {
    const itemId = `si_cheap_${label.length}`;
    await sync(`evt_c_${label.length}`, [first(), item(itemId, 'price_inline_cheap', 1, business(), billed)]);
    expect((await view(id)).addedPlans).toEqual([]);
    expect(await seats(id, 'plans.notes.business')).toEqual([]);
    expect((await check('cleo').expect(200)).body.capabilities).toEqual(['edit', 'export']);
    expect(errors(id).some((l) => l.fields?.itemId === itemId && l.fields?.planId === business() && /not adopted/.test(l.message))).toBe(
      true,
    );
  });

  it("a usage-based plan's item, at its price, is not adopted (an error)", async () => {
    const metered = org.keys['plans.notes.metered'];
    await sync('evt_c_metered', [first(), item('si_metered', 'price_inline_m', 1, metered, bills(500))]);
    expect((await view(id)).addedPlans).toEqual([]);
    expect(await seats(id, 'plans.notes.metered')).toEqual([]);
    expect(errors(id).some((l) => l.fields?.itemId === 'si_metered' && /usage-based/.test(String(l.fields?.reason)))).toBe(true);
  });

  it('a second item of a plan held (an add retried before its webhook) is an error an operator sees, not removed', async () => {
    await sync('evt_c_dup1', [first(), item('si_biz', 'price_inline_biz', 1, business(), BUSINESS)]);
    expect((await view(id)).addedPlans.map((a) => [a.planId, a.paymentItemId])).toEqual([[business(), 'si_biz']]);
    await sync('evt_c_dup2', [
      first(),
      item('si_biz', 'price_inline_biz', 1, business(), BUSINESS),
      item('si_biz2', 'price_inline_biz', 1, business(), BUSINESS),
    ]);
    expect((await view(id)).addedPlans.map((a) => [a.planId, a.paymentItemId])).toEqual([[business(), 'si_biz']]);
    expect(await seats(id, 'plans.notes.business')).toHaveLength(1);
    expect(errors(id).some((l) => l.fields?.itemId === 'si_biz2' && /holds this plan already/.test(String(l.fields?.reason)))).toBe(true);
  });

  it("the first plan's item renamed to a plan it does not bill (Business at Team's price) is not followed (an error)", async () => {
    const d = await buyTeam('sub_d', 'dora');
    nock(API)
      .get('/v1/subscriptions/sub_d')
      .reply(200, stripeSubscription('sub_d', [item('si_sub_d', 'price_inline_edited', 3, business(), bills(1200))]));
    expect((await webhook(event('evt_d1', { id: 'sub_d' })).expect(200)).body.result).toBe('applied');
    expect(await view(d)).toMatchObject({ planId: org.keys['plans.notes.team'], quantity: 3 });
    expect(await seats(d, 'plans.notes.business')).toEqual([]);
    expect((await check('dora').expect(200)).body.capabilities).toEqual(['edit', 'export']);
    expect(errors(d).some((l) => l.fields?.targetPlanId === business() && /not followed/.test(l.message))).toBe(true);
  });
});
