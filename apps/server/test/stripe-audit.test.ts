import nock from 'nock';
import request from 'supertest';
import { createTestWorld, seedOrganisation, type SeededOrg, type TestWorld } from '@tollgate/runtime/testing';
import { createServerApp } from '../src';
import { expectStripeMocksDone, paidCheckoutSession, postStripeEvent } from './stripe-harness';

// The payments audit (2026-11-25): Stripe `unpaid`/`paused`, test and live mode, checkout inputs.

const API = 'https://api.stripe.com';
const SECRET = 'whsec_tollgate_audit_secret';
const DAY = 86_400;
const now = Math.floor(Date.now() / 1000);

beforeAll(() => {
  nock.disableNetConnect();
  nock.enableNetConnect('127.0.0.1');
});
afterAll(() => nock.enableNetConnect());
afterEach(expectStripeMocksDone);

const event = (id: string, type: string, object: object, livemode = false) => ({
  id,
  object: 'event',
  type,
  data: { object },
  created: now,
  livemode,
  api_version: '2026-10-28.endive',
});
const stripeSubscription = (id: string, status: string, start: number, quantity = 1) => ({
  id,
  object: 'subscription',
  status,
  customer: `cus_${id}`,
  cancel_at_period_end: false,
  canceled_at: null,
  items: {
    object: 'list',
    data: [
      {
        id: `si_${id}`,
        quantity,
        current_period_start: start,
        current_period_end: start + 30 * DAY,
        price: { id: 'price_1', product: 'prod_1' },
      },
    ],
  },
});
const checkoutUrl = (planId: string, extra = '') =>
  `/plans/${planId}/checkoutlink?successUrl=https://v.example.com/ok&cancelUrl=https://v.example.com/no&granteeId=alice&member=m@example.com${extra}`;

/** Buys the plan through Stripe (link, then the paid session's webhook); the Stripe subscription is `sub`. */
async function buyThroughStripe(app: ReturnType<typeof createServerApp>, secret: string, planId: string, key: string, sub: string) {
  let ref = '';
  nock(API)
    .post('/v1/checkout/sessions', (b) => ((ref = b.client_reference_id), true))
    .reply(200, { id: `cs_${sub}`, url: `https://checkout.stripe.com/c/cs_${sub}` });
  await request(app).get(checkoutUrl(planId)).set('x-api-key', key).set('version', 'v1').expect(200);
  nock(API)
    .get(`/v1/checkout/sessions/cs_${sub}`)
    .query({ 'expand[0]': 'line_items' })
    .reply(200, paidCheckoutSession(`cs_${sub}`, ref, sub, 1, 'payer@example.com'));
  nock(API)
    .get(`/v1/subscriptions/${sub}`)
    .reply(200, stripeSubscription(sub, 'active', now));
  const e = event(`evt_buy_${sub}`, 'checkout.session.completed', { id: `cs_${sub}`, object: 'checkout.session' });
  expect((await postStripeEvent(app, secret, e).expect(200)).body.result).toBe('completed');
}

describe("Stripe `unpaid` and `paused`: no access while Stripe's period moves on, access again when it is active", () => {
  let world: TestWorld;
  let org: SeededOrg;
  let app: ReturnType<typeof createServerApp>;
  beforeAll(async () => {
    world = await createTestWorld({ config: { stripeSecretKey: 'sk_test_audit', stripeWebhookSecret: SECRET } });
    org = await seedOrganisation(world, 'unpaid-org');
    app = createServerApp(world);
  });
  afterAll(() => world?.close());
  const check = () =>
    request(app).get(`/licenses/check?productUuid=${org.keys['products.notes']}&granteeIds=alice`).set('x-api-key', org.liveKey);
  const sync = async (id: string, status: string, start: number) => {
    const sub = `sub_${id.split('_')[1]}`;
    nock(API)
      .get(`/v1/subscriptions/${sub}`)
      .reply(200, stripeSubscription(sub, status, start));
    const e = event(id, 'customer.subscription.updated', { id: sub, object: 'subscription' });
    expect((await postStripeEvent(app, SECRET, e).expect(200)).body.result).toBe('applied');
  };

  it.each(['unpaid', 'paused'])(
    '%s: the licenses stop granting (also when the period moves on); active again restores them',
    async (status) => {
      const sub = `sub_${status}`;
      await buyThroughStripe(app, SECRET, org.keys['plans.notes.business'], org.liveKey, sub);
      expect((await check().expect(200)).body.capabilities.length).toBeGreaterThan(0);
      await sync(`evt_${status}_1`, status, now + 30 * DAY);
      await check().expect(204);
      const held = (await world.core.licenses.list(org.tenant, {})).filter((l) => l.status !== 'CANCELED');
      expect(held.map((l) => [l.status, l.granteeId])).toEqual([['INACTIVE', 'alice']]);
      // The next period's re-sync (Stripe moves it on an unpaid subscription) gives no access either.
      await sync(`evt_${status}_2`, status, now + 60 * DAY);
      await check().expect(204);
      // Paid (or resumed): Stripe reports it active, alice's seat grants again.
      await sync(`evt_${status}_3`, 'active', now + 60 * DAY);
      expect((await check().expect(200)).body.capabilities.length).toBeGreaterThan(0);
      const live = (await world.core.licenses.list(org.tenant, {})).filter((l) => l.status !== 'CANCELED');
      expect(live.map((l) => [l.status, l.granteeId])).toEqual([['ACTIVE', 'alice']]);
      // Ended for the next case (a new subscription).
      nock(API)
        .get(`/v1/subscriptions/${sub}`)
        .reply(200, { ...stripeSubscription(sub, 'canceled', now), canceled_at: now });
      await postStripeEvent(app, SECRET, event(`evt_${status}_4`, 'customer.subscription.deleted', { id: sub })).expect(200);
    },
  );
});

const pathOf = (url: string) => new URL(url).pathname + new URL(url).search;

describe('a live Stripe key without test keys: test mode is billed by the sandbox, never by the live account', () => {
  let world: TestWorld;
  let org: SeededOrg;
  let app: ReturnType<typeof createServerApp>;
  beforeAll(async () => {
    world = await createTestWorld({ config: { stripeSecretKey: 'sk_live_audit', stripeWebhookSecret: SECRET } });
    org = await seedOrganisation(world, 'live-key-org');
    app = createServerApp(world);
  });
  afterAll(() => world?.close());
  const v1 = (key: string, method: 'get' | 'post', path: string) => request(app)[method](path).set('x-api-key', key).set('version', 'v1');

  it("a test-mode key's paid checkout goes to the sandbox (no Stripe call); its subscription stays there for links, invoices and renewals", async () => {
    const { body } = await v1(org.testKey, 'get', checkoutUrl(org.testKeys['plans.notes.business'])).expect(200);
    expect(body.checkoutUrl).toMatch(/^http:\/\/localhost:3000\/sandbox\/checkout\//);
    await request(app)
      .post(`${pathOf(body.checkoutUrl)}/pay`)
      .type('form')
      .send({})
      .expect(303);
    const [license] = (await v1(org.testKey, 'get', '/licenses').expect(200)).body;
    expect(license.paymentService).toBe('sandbox');
    const id = license.subscriptionUuid as string;
    expect((await v1(org.testKey, 'get', `/subscriptions/${id}/customer-portal`).expect(200)).body.url).toMatch(
      /^http:\/\/localhost:3000\/sandbox\/portal\//,
    );
    expect((await v1(org.testKey, 'get', `/subscriptions/${id}/invoices`).expect(200)).body.data).toHaveLength(1);
    const before = (await v1(org.testKey, 'get', `/subscriptions/${id}`)).body.expiryDate;
    world.clock.advanceDays(45);
    expect(await world.core.sweeps.renewals()).toBe(1);
    expect(new Date((await v1(org.testKey, 'get', `/subscriptions/${id}`)).body.expiryDate).getTime()).toBeGreaterThan(
      new Date(before).getTime(),
    );
  });

  it("a live key's checkout still goes to Stripe", async () => {
    nock(API).post('/v1/checkout/sessions').reply(200, { id: 'cs_live', url: 'https://checkout.stripe.com/c/cs_live' });
    const { body } = await v1(org.liveKey, 'get', checkoutUrl(org.keys['plans.notes.business'])).expect(200);
    expect(body.checkoutUrl).toBe('https://checkout.stripe.com/c/cs_live');
  });

  it('a test-mode event signed with the live secret is acknowledged and ignored: nothing fetched, nothing applied', async () => {
    const e = event('evt_wrong_mode', 'customer.subscription.updated', { id: 'sub_x', object: 'subscription' }, false);
    expect((await postStripeEvent(app, SECRET, e).expect(200)).body).toEqual({ received: true, result: 'ignored' });
  });
});

describe('live and test Stripe keys: each mode to its own account, webhooks checked against their mode', () => {
  const TEST_SECRET = 'whsec_tollgate_audit_test_account';
  let world: TestWorld;
  let org: SeededOrg;
  let app: ReturnType<typeof createServerApp>;
  beforeAll(async () => {
    world = await createTestWorld({
      config: {
        stripeSecretKey: 'sk_live_audit',
        stripeWebhookSecret: SECRET,
        stripeTestSecretKey: 'sk_test_audit_own',
        stripeTestWebhookSecret: TEST_SECRET,
      },
    });
    org = await seedOrganisation(world, 'two-keys-org');
    app = createServerApp(world);
  });
  afterAll(() => world?.close());

  it('a test-mode checkout goes to Stripe with the test key, a live one with the live key', async () => {
    const keys: string[] = [];
    nock(API)
      .post('/v1/checkout/sessions')
      .times(2)
      .reply(function () {
        keys.push(String(this.req.headers.authorization));
        return [200, { id: `cs_${keys.length}`, url: `https://checkout.stripe.com/c/cs_${keys.length}` }];
      });
    await request(app)
      .get(checkoutUrl(org.testKeys['plans.notes.business']))
      .set('x-api-key', org.testKey)
      .set('version', 'v1')
      .expect(200);
    await request(app).get(checkoutUrl(org.keys['plans.notes.business'])).set('x-api-key', org.liveKey).set('version', 'v1').expect(200);
    expect(keys).toEqual(['Bearer sk_test_audit_own', 'Bearer sk_live_audit']);
  });

  it('an event signed by the test account completes a test-mode checkout, read through the test key', async () => {
    await buyThroughStripeWith(app, TEST_SECRET, org.testKeys['plans.notes.business'], org.testKey, 'sub_t', 'sk_test_audit_own');
    const [license] = await world.core.licenses.list(org.testTenant, {});
    expect(license).toMatchObject({ paymentService: 'stripe', granteeId: 'alice' });
  });

  it('an event signed by the test account never completes a live checkout; a live event on the test secret is ignored', async () => {
    let ref = '';
    nock(API)
      .post('/v1/checkout/sessions', (b) => ((ref = b.client_reference_id), true))
      .reply(200, { id: 'cs_l', url: 'https://checkout.stripe.com/c/cs_l' });
    await request(app).get(checkoutUrl(org.keys['plans.notes.business'])).set('x-api-key', org.liveKey).set('version', 'v1').expect(200);
    nock(API, { reqheaders: { authorization: 'Bearer sk_test_audit_own' } })
      .get('/v1/checkout/sessions/cs_forged')
      .query({ 'expand[0]': 'line_items' })
      .reply(200, paidCheckoutSession('cs_forged', ref, 'sub_forged', 1, 'payer@example.com'));
    const forged = event('evt_forged', 'checkout.session.completed', { id: 'cs_forged', object: 'checkout.session' });
    expect((await postStripeEvent(app, TEST_SECRET, forged).expect(200)).body.result).toBe('ignored');
    expect(await world.core.licenses.list(org.tenant, {})).toEqual([]);
    const live = event('evt_live_on_test', 'checkout.session.completed', { id: 'cs_l', object: 'checkout.session' }, true);
    expect((await postStripeEvent(app, TEST_SECRET, live).expect(200)).body.result).toBe('ignored');
    expect(await world.core.licenses.list(org.tenant, {})).toEqual([]);
  });
});

/** As `buyThroughStripe`, every Stripe call made with `key`. */
async function buyThroughStripeWith(
  app: ReturnType<typeof createServerApp>,
  secret: string,
  planId: string,
  apiKey: string,
  sub: string,
  key: string,
) {
  let ref = '';
  nock(API, { reqheaders: { authorization: `Bearer ${key}` } })
    .post('/v1/checkout/sessions', (b) => ((ref = b.client_reference_id), true))
    .reply(200, { id: `cs_${sub}`, url: `https://checkout.stripe.com/c/cs_${sub}` });
  await request(app).get(checkoutUrl(planId)).set('x-api-key', apiKey).set('version', 'v1').expect(200);
  nock(API, { reqheaders: { authorization: `Bearer ${key}` } })
    .get(`/v1/checkout/sessions/cs_${sub}`)
    .query({ 'expand[0]': 'line_items' })
    .reply(200, paidCheckoutSession(`cs_${sub}`, ref, sub, 1, 'payer@example.com'));
  nock(API, { reqheaders: { authorization: `Bearer ${key}` } })
    .get(`/v1/subscriptions/${sub}`)
    .reply(200, stripeSubscription(sub, 'active', now));
  const e = event(`evt_buy_${sub}`, 'checkout.session.completed', { id: `cs_${sub}`, object: 'checkout.session' });
  expect((await postStripeEvent(app, secret, e).expect(200)).body.result).toBe('completed');
}

describe('checkout inputs at Stripe: customerId and reused deferred links', () => {
  let world: TestWorld;
  let org: SeededOrg;
  let other: SeededOrg;
  let app: ReturnType<typeof createServerApp>;
  beforeAll(async () => {
    world = await createTestWorld({ config: { stripeSecretKey: 'sk_test_inputs', stripeWebhookSecret: SECRET } });
    org = await seedOrganisation(world, 'inputs-org');
    other = await seedOrganisation(world, 'inputs-other-org');
    app = createServerApp(world);
  });
  afterAll(() => world?.close());

  it("customerId: only the Stripe customer of one of the caller's own customers (organisation and mode), else 400 naming it and no Stripe call", async () => {
    await buyThroughStripe(app, SECRET, org.keys['plans.notes.business'], org.liveKey, 'sub_own');
    await buyThroughStripe(app, SECRET, other.keys['plans.notes.business'], other.liveKey, 'sub_theirs');
    const link = (key: string, planId: string, customer: string) =>
      request(app)
        .get(checkoutUrl(planId, `&customerId=${customer}`))
        .set('x-api-key', key)
        .set('version', 'v1');
    for (const [key, planId, customer] of [
      [org.liveKey, org.keys['plans.notes.business'], 'cus_sub_theirs'],
      [org.testKey, org.testKeys['plans.notes.business'], 'cus_sub_own'],
      [org.liveKey, org.keys['plans.notes.business'], 'cus_unknown'],
    ]) {
      const res = await link(key, planId, customer).expect(400);
      expect(res.body).toMatchObject({ code: 'VALIDATION_FAILED', validationErrors: [{ property: 'customerId' }] });
    }
    let body: Record<string, string> = {};
    nock(API)
      .post('/v1/checkout/sessions', (b) => ((body = b), true))
      .reply(200, { id: 'cs_own', url: 'https://checkout.stripe.com/c/cs_own' });
    await link(org.liveKey, org.keys['plans.notes.business'], 'cus_sub_own').expect(200);
    expect(body.customer).toBe('cus_sub_own');
  });

  it("a deferred link followed again resumes its open Stripe session; after the plan's name changed, or once that session is paid, it makes a new one (new key)", async () => {
    const table = await request(app)
      .get(
        `/pricing-tables/${org.keys['pricingTables.notes.main']}?globalSuccessUrl=https://app.example.com/ok&globalCancelUrl=https://app.example.com/no&globalGranteeId=zoe&member=z@example.com`,
      )
      .set('x-api-key', org.liveKey)
      .set('version', 'v1')
      .expect(200);
    const team = table.body.plans.find((p: { plan: { displayName: string } }) => p.plan.displayName === 'Team').plan;
    const path = new URL(team.checkoutUrl).pathname;
    const keys: string[] = [];
    const names: string[] = [];
    const create = (id: string) =>
      nock(API)
        .post(
          '/v1/checkout/sessions',
          (b: Record<string, string>) => (names.push(b['line_items[0][price_data][product_data][name]']), true),
        )
        .reply(function () {
          keys.push(String(this.req.headers['idempotency-key']));
          return [200, { id, url: `https://checkout.stripe.com/c/${id}` }];
        });
    const retrieve = (id: string, status: string) =>
      nock(API)
        .get(`/v1/checkout/sessions/${id}`)
        .reply(200, { id, object: 'checkout.session', status, url: status === 'open' ? `https://checkout.stripe.com/c/${id}` : null });
    const follow = async () => (await request(app).get(path).expect(303)).headers.location;
    create('cs_deferred');
    expect(await follow()).toBe('https://checkout.stripe.com/c/cs_deferred');
    retrieve('cs_deferred', 'open');
    expect(await follow()).toBe('https://checkout.stripe.com/c/cs_deferred');
    await world.db.uow.run(async (r) => {
      const plan = (await r.plans.get(org.keys['plans.notes.team']))!;
      await r.plans.save({ ...plan, displayName: 'Team (renamed)' });
    });
    create('cs_renamed');
    expect(await follow()).toBe('https://checkout.stripe.com/c/cs_renamed');
    retrieve('cs_renamed', 'complete');
    create('cs_again');
    expect(await follow()).toBe('https://checkout.stripe.com/c/cs_again');
    expect(new Set(keys).size).toBe(3);
    expect(names.slice(1).every((n) => n.endsWith('Team (renamed)'))).toBe(true);
  });
});
