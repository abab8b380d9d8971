import nock from 'nock';
import request from 'supertest';
import { DomainError, ErrorCodes } from '@tollgate/core';
import { createTestWorld, seedOrganisation, type SeededOrg, type TestWorld } from '@tollgate/runtime/testing';
import { createServerApp } from '../src';
import { expectStripeMocksDone, postStripeEvent } from './stripe-harness';

const API = 'https://api.stripe.com';
const SECRET = 'whsec_tollgate_test_secret';
const DAY = 86_400;
let world: TestWorld;
let org: SeededOrg;
let app: ReturnType<typeof createServerApp>;
let sessionId: string;
const now = Math.floor(Date.now() / 1000);

beforeAll(async () => {
  world = await createTestWorld({ config: { stripeSecretKey: 'sk_test_tollgate', stripeWebhookSecret: SECRET } });
  org = await seedOrganisation(world, 'stripe-org');
  app = createServerApp(world);
});
afterAll(() => world?.close());
afterEach(expectStripeMocksDone);

const webhook = (event: object, options: { secret?: string; timestamp?: number } = {}) =>
  postStripeEvent(app, options.secret ?? SECRET, event, options.timestamp);
const event = (id: string, type: string, object: object) => ({
  id,
  object: 'event',
  type,
  data: { object },
  created: now,
  livemode: false,
  api_version: '2026-10-28.endive',
});
const stripeSubscription = (over: object = {}, item: object = {}) => ({
  id: 'sub_1',
  object: 'subscription',
  status: 'active',
  customer: 'cus_1',
  cancel_at_period_end: false,
  canceled_at: null,
  items: {
    object: 'list',
    data: [
      {
        id: 'si_1',
        quantity: 3,
        current_period_start: now,
        current_period_end: now + 30 * DAY,
        price: { id: 'price_1', product: 'prod_1' },
        ...item,
      },
    ],
  },
  ...over,
});
const licenses = () => world.core.licenses.list(org.tenant, {});
const check = (grantee: string) =>
  request(app).get(`/licenses/check?productUuid=${org.keys['products.notes']}&granteeIds=${grantee}`).set('x-api-key', org.liveKey);
const sessionReply = () => ({
  id: 'cs_1',
  object: 'checkout.session',
  mode: 'subscription',
  client_reference_id: sessionId,
  payment_status: 'paid',
  subscription: 'sub_1',
  customer: 'cus_1',
  customer_details: { email: 'payer@example.com' },
  line_items: { object: 'list', data: [{ id: 'li_1', quantity: 3 }] },
});

describe('Stripe through the server: checkout links and verified webhooks', () => {
  it('sends the checkout link request to Stripe', async () => {
    let body: Record<string, string> = {};
    nock(API)
      .post('/v1/checkout/sessions', (b) => ((body = b), true))
      .reply(200, { id: 'cs_1', url: 'https://checkout.stripe.com/c/cs_1' });
    const res = await request(app)
      .get(
        `/plans/${org.keys['plans.notes.team']}/checkoutlink?successUrl=https://v.example.com/ok&cancelUrl=https://v.example.com/no&granteeId=alice&member=m@example.com&quantity=3`,
      )
      .set('x-api-key', org.liveKey)
      .set('version', 'v1')
      .expect(200);
    expect(res.body.checkoutUrl).toBe('https://checkout.stripe.com/c/cs_1');
    expect(body).toMatchObject({
      mode: 'subscription',
      'line_items[0][quantity]': '3',
      'line_items[0][price_data][unit_amount]': '1200',
      currency: 'usd',
    });
    sessionId = body.client_reference_id;
    expect(sessionId).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('refuses a bad or stale signature with 400 and changes nothing', async () => {
    const e = event('evt_bad', 'checkout.session.completed', { id: 'cs_1', object: 'checkout.session' });
    await webhook(e, { secret: 'whsec_wrong' }).expect(400);
    await webhook(e, { timestamp: now - 3600 }).expect(400);
    await request(app).post('/webhooks/stripe').set('content-type', 'application/json').send(JSON.stringify(e)).expect(400);
    expect(await licenses()).toEqual([]);
  });

  it('checkout.session.completed: re-fetches the session, creates subscription and licenses, syncs the period; a replay applies once', async () => {
    nock(API).get('/v1/checkout/sessions/cs_1').query({ 'expand[0]': 'line_items' }).reply(200, sessionReply());
    nock(API).get('/v1/subscriptions/sub_1').reply(200, stripeSubscription());
    const e = event('evt_1', 'checkout.session.completed', {
      id: 'cs_1',
      object: 'checkout.session',
      client_reference_id: 'forged-in-body',
    });
    expect((await webhook(e).expect(200)).body).toEqual({ received: true, result: 'completed' });
    const created = await licenses();
    expect(created).toHaveLength(3);
    expect(created.every((l) => l.paymentService === 'stripe' && l.endTime?.getTime() === (now + 30 * DAY) * 1000)).toBe(true);
    expect((await check('alice').expect(200)).body.capabilities).toEqual(['edit', 'export']);

    // A replay (Stripe retrying after a sync that failed once the checkout had committed) syncs again.
    nock(API).get('/v1/checkout/sessions/cs_1').query({ 'expand[0]': 'line_items' }).reply(200, sessionReply());
    nock(API).get('/v1/subscriptions/sub_1').reply(200, stripeSubscription());
    expect((await webhook(e).expect(200)).body.result).toBe('duplicate');
    expect(await licenses()).toHaveLength(3);
  });

  it('items of a Stripe subscription: what is invalid is refused before anything is sent to Stripe (400, nothing changed)', async () => {
    // Adding and removing plans on Stripe: apps/server/test/stripe-plans.test.ts. Here only what
    // is refused as on the sandbox: a plan held already, a usage-based plan, the only plan removed.
    const alice = (await licenses()).find((l) => l.granteeId === 'alice');
    const put = (items: object[]) =>
      request(app).put(`/api/subscriptions/${alice?.subscriptionId}/items`).set('authorization', `Bearer ${org.liveKey}`).send({ items });
    const held = await put([{ planId: org.keys['plans.notes.team'], action: 'add' }]).expect(400);
    expect(held.body.errors[0]).toMatchObject({ property: 'items[0].planId', message: expect.stringContaining('holds this plan already') });
    expect((await put([{ planId: org.keys['plans.notes.metered'], action: 'add' }]).expect(400)).body.errors[0].property).toBe(
      'items[0].planId',
    );
    expect((await put([{ planId: org.keys['plans.notes.team'], action: 'remove' }]).expect(400)).body.errors[0].property).toBe(
      'items[0].action',
    );
    const plans = (
      await request(app)
        .get(`/api/subscriptions/${alice?.subscriptionId}?expand=subscriptionPlans`)
        .set('authorization', `Bearer ${org.liveKey}`)
    ).body.data.subscriptionPlans.data;
    expect(plans).toHaveLength(1);
    expect(await licenses()).toHaveLength(3);
  });

  it("sync (#86) moves Stripe's subscription item to the line item's current price, unprorated", async () => {
    const alice = (await licenses()).find((l) => l.granteeId === 'alice');
    const plan = (
      await request(app)
        .get(`/api/subscription-plans/${alice?.subscriptionId}?expand=subscriptionPlanLineItems`)
        .set('authorization', `Bearer ${org.liveKey}`)
        .expect(200)
    ).body.data;
    const lineItem = plan.subscriptionPlanLineItems.data[0].id as string;
    let update: Record<string, string> = {};
    nock(API).get('/v1/subscriptions/sub_1').reply(200, stripeSubscription());
    nock(API)
      .post('/v1/subscriptions/sub_1', (b) => ((update = b), true))
      .reply(200, stripeSubscription());
    await request(app).put(`/api/subscription-plan-line-items/${lineItem}/sync`).set('authorization', `Bearer ${org.liveKey}`).expect(204);
    expect(update).toMatchObject({
      'items[0][id]': 'si_1',
      'items[0][price_data][unit_amount]': '1200',
      'items[0][price_data][product]': 'prod_1',
      proration_behavior: 'none',
    });
  });

  it('customer.subscription.updated: syncs status, scheduled cancellation and seats from the re-fetched subscription', async () => {
    nock(API)
      .get('/v1/subscriptions/sub_1')
      .reply(200, stripeSubscription({ cancel_at_period_end: true }, { quantity: 5 }));
    const e = event('evt_2', 'customer.subscription.updated', { id: 'sub_1', object: 'subscription', status: 'canceled' });
    expect((await webhook(e).expect(200)).body.result).toBe('applied');
    const ls = await licenses();
    expect(ls).toHaveLength(5);
    expect(ls.every((l) => l.cancelAtPeriodEnd && l.status === 'ACTIVE')).toBe(true);
    // A replay re-fetches (Stripe is the truth) but applies nothing.
    nock(API)
      .get('/v1/subscriptions/sub_1')
      .reply(200, stripeSubscription({ cancel_at_period_end: false }, { quantity: 9 }));
    expect((await webhook(e).expect(200)).body.result).toBe('duplicate');
    expect(await licenses()).toHaveLength(5);
  });

  it('two events of one subscription at once: a snapshot fetched before the other sync committed is fetched again, never written over it', async () => {
    // Stripe sends webhooks concurrently. The first event's fetch answers late with the state before
    // the second's (2 seats), the second's at once with the newer one (6 seats, no cancellation).
    nock(API)
      .get('/v1/subscriptions/sub_1')
      .delay(400)
      .reply(200, stripeSubscription({ cancel_at_period_end: true }, { quantity: 2 }));
    nock(API)
      .get('/v1/subscriptions/sub_1')
      .reply(200, stripeSubscription({}, { quantity: 6 }));
    // The first one's fetch again, after the second applied: Stripe's state now.
    nock(API)
      .get('/v1/subscriptions/sub_1')
      .reply(200, stripeSubscription({}, { quantity: 6 }));
    const first = webhook(event('evt_race_1', 'customer.subscription.updated', { id: 'sub_1' })).then((r) => r);
    await new Promise((resolve) => setTimeout(resolve, 100));
    const second = await webhook(event('evt_race_2', 'customer.subscription.updated', { id: 'sub_1' })).expect(200);
    expect(second.body.result).toBe('applied');
    // The first delivery applied (its record rolled back with the stale attempt, so not a 'duplicate').
    expect((await first).body.result).toBe('applied');
    const ls = (await licenses()).filter((l) => l.status !== 'CANCELED');
    expect(ls).toHaveLength(6);
    expect(ls.some((l) => l.cancelAtPeriodEnd)).toBe(false);
    // Back to the state the next tests start from.
    nock(API)
      .get('/v1/subscriptions/sub_1')
      .reply(200, stripeSubscription({ cancel_at_period_end: true }, { quantity: 5 }));
    expect((await webhook(event('evt_race_3', 'customer.subscription.updated', { id: 'sub_1' })).expect(200)).body.result).toBe('applied');
  });

  it('invoice.paid: extends the licenses to the paid period', async () => {
    nock(API)
      .get('/v1/invoices/in_1')
      .reply(200, {
        id: 'in_1',
        object: 'invoice',
        parent: { type: 'subscription_details', subscription_details: { subscription: 'sub_1' } },
        lines: { object: 'list', data: [{ id: 'il_1', period: { start: now + 30 * DAY, end: now + 60 * DAY } }] },
      });
    expect((await webhook(event('evt_3', 'invoice.paid', { id: 'in_1', object: 'invoice' })).expect(200)).body.result).toBe('applied');
    expect((await licenses()).every((l) => l.endTime?.getTime() === (now + 60 * DAY) * 1000)).toBe(true);
  });

  it('customer.subscription.deleted: cancels the subscription and its licenses; the check shows nothing', async () => {
    nock(API)
      .get('/v1/subscriptions/sub_1')
      .reply(200, stripeSubscription({ status: 'canceled', canceled_at: now }));
    expect(
      (await webhook(event('evt_4', 'customer.subscription.deleted', { id: 'sub_1', object: 'subscription' })).expect(200)).body.result,
    ).toBe('applied');
    expect((await licenses()).every((l) => l.status === 'CANCELED')).toBe(true);
    await check('alice').expect(204);
  });

  it('waits for an asynchronous payment: completed-but-unpaid does nothing, async_payment_succeeded completes', async () => {
    let ref = '';
    nock(API)
      .post('/v1/checkout/sessions', (b) => ((ref = b.client_reference_id), true))
      .reply(200, { id: 'cs_2', url: 'https://checkout.stripe.com/c/cs_2' });
    await request(app)
      .get(
        `/plans/${org.keys['plans.notes.business']}/checkoutlink?successUrl=https://v.example.com/ok&cancelUrl=https://v.example.com/no&granteeId=bea&member=bea@example.com`,
      )
      .set('x-api-key', org.liveKey)
      .set('version', 'v1')
      .expect(200);
    const session = (payment_status: string) => ({
      ...sessionReply(),
      id: 'cs_2',
      client_reference_id: ref,
      payment_status,
      subscription: 'sub_2',
      line_items: { data: [{ quantity: 1 }] },
    });
    nock(API).get('/v1/checkout/sessions/cs_2').query(true).reply(200, session('unpaid'));
    expect((await webhook(event('evt_7', 'checkout.session.completed', { id: 'cs_2' })).expect(200)).body.result).toBe('awaiting payment');
    await check('bea').expect(204);
    nock(API).get('/v1/checkout/sessions/cs_2').query(true).reply(200, session('paid'));
    nock(API)
      .get('/v1/subscriptions/sub_2')
      .reply(200, stripeSubscription({ id: 'sub_2' }, { quantity: 1 }));
    expect((await webhook(event('evt_8', 'checkout.session.async_payment_succeeded', { id: 'cs_2' })).expect(200)).body.result).toBe(
      'completed',
    );
    expect((await check('bea').expect(200)).body.capabilities).toEqual(['admin', 'edit', 'export']);
  });

  it('an event met by a database outage answers 503, so Stripe sends it again, and applies when it does', async () => {
    const sync = world.core.providerSync.sync;
    world.core.providerSync.sync = () =>
      Promise.reject(new DomainError(ErrorCodes.DATABASE_UNAVAILABLE, 'the database is unavailable; nothing was changed, retry later'));
    const e = event('evt_outage', 'customer.subscription.updated', { id: 'sub_2' });
    try {
      nock(API)
        .get('/v1/subscriptions/sub_2')
        .reply(200, stripeSubscription({ id: 'sub_2', status: 'trialing' }, { quantity: 1 }));
      const res = await webhook(e).expect(503);
      expect(res.body.code).toBe('DATABASE_UNAVAILABLE');
    } finally {
      world.core.providerSync.sync = sync;
    }
    nock(API)
      .get('/v1/subscriptions/sub_2')
      .reply(200, stripeSubscription({ id: 'sub_2', status: 'trialing' }, { quantity: 1 }));
    expect((await webhook(e).expect(200)).body.result).toBe('applied');
  });

  it('customer.subscription.created for a subscription already recorded: syncs it', async () => {
    nock(API)
      .get('/v1/subscriptions/sub_2')
      .reply(200, stripeSubscription({ id: 'sub_2', status: 'trialing' }, { quantity: 1 }));
    expect((await webhook(event('evt_9', 'customer.subscription.created', { id: 'sub_2' })).expect(200)).body.result).toBe('applied');
    const bea = (await licenses()).find((l) => l.granteeId === 'bea');
    expect(bea?.status).toBe('TRIALING');
  });

  it("a plan switched in Stripe's customer portal is followed: the subscription and its seats move to the plan of that price", async () => {
    // Team has a Stripe price of its own; bea's Business subscription is switched to it at Stripe.
    await world.db.uow.run(async (r) => {
      const team = (await r.plans.get(org.keys['plans.notes.team']))!;
      await r.plans.save({ ...team, providerPlanId: 'price_team' });
    });
    try {
      nock(API)
        .get('/v1/subscriptions/sub_2')
        .reply(
          200,
          stripeSubscription({ id: 'sub_2', status: 'trialing' }, { quantity: 1, price: { id: 'price_team', product: 'prod_1' } }),
        );
      expect((await webhook(event('evt_portal', 'customer.subscription.updated', { id: 'sub_2' })).expect(200)).body.result).toBe(
        'applied',
      );
      expect((await check('bea').expect(200)).body.capabilities).toEqual(['edit', 'export']);
      const bea = (await licenses()).find((l) => l.granteeId === 'bea');
      expect(bea?.planId).toBe(org.keys['plans.notes.team']);
    } finally {
      // Team is sold at an inline price again (as the next tests expect).
      await world.db.uow.run(async (r) => r.plans.save({ ...(await r.plans.get(org.keys['plans.notes.team']))!, providerPlanId: null }));
    }
  });

  it('acknowledges events it does not handle, and ones about objects that are not ours', async () => {
    expect((await webhook(event('evt_5', 'customer.created', { id: 'cus_2', object: 'customer' })).expect(200)).body.result).toBe(
      'ignored',
    );
    nock(API)
      .get('/v1/subscriptions/sub_other')
      .reply(200, stripeSubscription({ id: 'sub_other' }));
    expect((await webhook(event('evt_6', 'customer.subscription.updated', { id: 'sub_other' })).expect(200)).body.result).toBe('unknown');
  });

  it('a quick checkout for a group (grantee `grp_<id>`): Stripe is told the group, and the completed session seats its members', async () => {
    const group = await world.core.groups.create(org.tenant, {
      owner: 'group-payer@example.com',
      grantees: [{ granteeId: 'gia' }, { granteeId: 'hugo' }, { granteeId: 'ines' }],
    });
    let body: Record<string, string> = {};
    nock(API)
      .post('/v1/checkout/sessions', (b) => ((body = b), true))
      .reply(200, { id: 'cs_g', url: 'https://checkout.stripe.com/c/cs_g' });
    await request(app)
      .post('/api/checkout')
      .set('authorization', `Bearer ${org.liveKey}`)
      .send({
        planId: org.keys['plans.notes.team'],
        owner: 'group-payer@example.com',
        grantee: `grp_${group.id}`,
        interval: 'month',
        intervalCount: 1,
        successUrl: 'https://v.example.com/ok',
        cancelUrl: 'https://v.example.com/no',
      })
      .expect(200);
    // Three members: three seats (the plan's minimum is two), and the metadata names the group.
    expect(body).toMatchObject({ 'line_items[0][quantity]': '3', 'metadata[granteeId]': `grp_${group.id}` });
    const groupSession = body.client_reference_id;
    nock(API)
      .get('/v1/checkout/sessions/cs_g')
      .query({ 'expand[0]': 'line_items' })
      .reply(200, { ...sessionReply(), id: 'cs_g', client_reference_id: groupSession, subscription: 'sub_g', customer: 'cus_g' });
    nock(API)
      .get('/v1/subscriptions/sub_g')
      .reply(200, stripeSubscription({ id: 'sub_g', customer: 'cus_g' }, { id: 'si_g', quantity: 3 }));
    expect(
      (await webhook(event('evt_g', 'checkout.session.completed', { id: 'cs_g', object: 'checkout.session' })).expect(200)).body.result,
    ).toBe('completed');
    const seats = (await licenses()).filter((l) => l.purchaser === 'group-payer@example.com');
    expect(seats.map((l) => l.granteeId).sort()).toEqual(['gia', 'hugo', 'ines']);
    expect((await check('ines').expect(200)).body.capabilities).toEqual(['edit', 'export']);
  });

  it('a cart of two plans is one Stripe checkout with a price per plan, paid into one subscription holding both', async () => {
    const bearer = (r: request.Test) => r.set('authorization', `Bearer ${org.liveKey}`);
    const cart = (
      await bearer(request(app).post('/api/carts'))
        .send({ owner: 'cart-payer@example.com', interval: 'month', intervalCount: 1, currency: 'USD' })
        .expect(201)
    ).body.data.id as string;
    for (const [plan, grantee] of [
      ['plans.notes.team', 'tia'],
      ['plans.notes.business', 'ulf'],
    ])
      await bearer(request(app).post('/api/cart-items'))
        .send({ cartId: cart, planId: org.keys[plan], grantee, interval: 'month', intervalCount: 1 })
        .expect(201);
    let body: Record<string, string> = {};
    nock(API)
      .post('/v1/checkout/sessions', (b) => ((body = b), true))
      .reply(200, { id: 'cs_c', url: 'https://checkout.stripe.com/c/cs_c' });
    await bearer(request(app).post(`/api/carts/${cart}/checkout`))
      .send({ successUrl: 'https://v.example.com/ok', cancelUrl: 'https://v.example.com/no' })
      .expect(200);
    expect(body).toMatchObject({
      'line_items[0][quantity]': '2',
      'line_items[0][price_data][unit_amount]': '1200',
      'line_items[1][quantity]': '1',
      'line_items[1][price_data][unit_amount]': '3000',
    });
    expect(body['line_items[2][quantity]']).toBeUndefined();
    nock(API)
      .get('/v1/checkout/sessions/cs_c')
      .query({ 'expand[0]': 'line_items' })
      .reply(200, {
        ...sessionReply(),
        id: 'cs_c',
        client_reference_id: body.client_reference_id,
        subscription: 'sub_c',
        customer: 'cus_c',
        line_items: {
          object: 'list',
          data: [
            { id: 'li_c1', quantity: 2 },
            { id: 'li_c2', quantity: 1 },
          ],
        },
      });
    nock(API)
      .get('/v1/subscriptions/sub_c')
      .reply(200, stripeSubscription({ id: 'sub_c', customer: 'cus_c' }, { id: 'si_c', quantity: 2 }));
    expect(
      (await webhook(event('evt_c', 'checkout.session.completed', { id: 'cs_c', object: 'checkout.session' })).expect(200)).body.result,
    ).toBe('completed');
    const subs = (await bearer(request(app).get('/api/subscriptions?owner=cart-payer@example.com&expand=subscriptionPlans')).expect(200))
      .body.data;
    expect(subs).toHaveLength(1);
    expect(subs[0].subscriptionPlans.data.map((p: { planId: string }) => p.planId)).toEqual([
      org.keys['plans.notes.team'],
      org.keys['plans.notes.business'],
    ]);
    expect((await check('ulf').expect(200)).body.capabilities).toEqual(['admin', 'edit', 'export']);
    expect((await bearer(request(app).get(`/api/carts/${cart}`)).expect(200)).body.data.status).toBe('complete');
    // Stripe's quantity (its first item's) is the first plan's seats: the re-sync kept every seat of both plans.
    const seats = (await licenses()).filter((l) => l.subscriptionId === subs[0].id && l.status !== 'CANCELED');
    expect(seats.filter((l) => l.planId === org.keys['plans.notes.team'])).toHaveLength(2);
    expect(seats.filter((l) => l.planId === org.keys['plans.notes.business'])).toHaveLength(1);
  });
});
