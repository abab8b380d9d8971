import nock from 'nock';
import request from 'supertest';
import { randomUUID } from 'node:crypto';
import { createTestWorld, seedOrganisation, type SeededOrg, type TestWorld } from '@tollgate/runtime/testing';
import { createServerApp } from '../src';
import { expectStripeMocksDone, paidCheckoutSession, postStripeEvent } from './stripe-harness';

// A checkout paid at Stripe is recorded, whatever the vendor changed in the catalog since the link;
// one that still cannot be recorded is never acknowledged (Stripe sends it again) and is logged.

const API = 'https://api.stripe.com';
const SECRET = 'whsec_tollgate_completion_secret';
const DAY = 86_400;
const now = Math.floor(Date.now() / 1000);
const errors: { message: string; fields?: Record<string, unknown> }[] = [];
let world: TestWorld;
let org: SeededOrg;
let app: ReturnType<typeof createServerApp>;

beforeAll(async () => {
  nock.disableNetConnect();
  nock.enableNetConnect(/127\.0\.0\.1|localhost/);
  world = await createTestWorld({
    config: { stripeSecretKey: 'sk_test_tollgate', stripeWebhookSecret: SECRET },
    logger: { info: () => undefined, error: (message: string, fields?: Record<string, unknown>) => errors.push({ message, fields }) },
  });
  org = await seedOrganisation(world, 'stripe-completion-org');
  app = createServerApp(world);
});
afterAll(() => world?.close());
afterEach(expectStripeMocksDone);

const webhook = (event: object) => postStripeEvent(app, SECRET, event);
const completed = (id: string, session: string) => ({
  id,
  object: 'event',
  type: 'checkout.session.completed',
  data: { object: { id: session, object: 'checkout.session' } },
  created: now,
  livemode: false,
  api_version: '2026-10-28.endive',
});

/** A Stripe checkout link for the plan; returns Tollgate's session id (Stripe's `client_reference_id`). */
async function link(planKey: string, cs: string, grantee: string, quantity?: number): Promise<string> {
  let ref = '';
  nock(API)
    .post('/v1/checkout/sessions', (b) => ((ref = b.client_reference_id), true))
    .reply(200, { id: cs, url: `https://checkout.stripe.com/c/${cs}` });
  await request(app)
    .get(
      `/plans/${org.keys[planKey]}/checkoutlink?successUrl=https://v.example.com/ok&cancelUrl=https://v.example.com/no&granteeId=${grantee}&member=${grantee}@example.com${quantity ? `&quantity=${quantity}` : ''}`,
    )
    .set('x-api-key', org.liveKey)
    .set('version', 'v1')
    .expect(200);
  return ref;
}

/** Stripe reports the session paid: the webhook re-fetches it and the subscription it started. */
function paidAtStripe(cs: string, ref: string, sub: string, quantity: number) {
  nock(API)
    .get(`/v1/checkout/sessions/${cs}`)
    .query(true)
    .reply(200, paidCheckoutSession(cs, ref, sub, quantity, 'payer@example.com'));
}
function stripeSubscription(sub: string, quantity: number) {
  nock(API)
    .get(`/v1/subscriptions/${sub}`)
    .reply(200, {
      id: sub,
      object: 'subscription',
      status: 'active',
      customer: `cus_${sub}`,
      cancel_at_period_end: false,
      canceled_at: null,
      items: {
        object: 'list',
        data: [
          {
            id: `si_${sub}`,
            quantity,
            current_period_start: now,
            current_period_end: now + 30 * DAY,
            price: { id: 'price_x', product: 'prod_x' },
          },
        ],
      },
    });
}
const subscriptionOf = async (sub: string) => world.db.uow.read((r) => r.subscriptions.findByPaymentId(sub));
const seatsOf = async (subscriptionId: string) =>
  (await world.core.licenses.list(org.tenant, {})).filter((l) => l.subscriptionId === subscriptionId);

describe('Stripe checkout completion after the catalog changed', () => {
  it('records a checkout whose plan was archived after the link (was: 200 "ignored", nothing recorded)', async () => {
    const ref = await link('plans.notes.team', 'cs_arch', 'arch', 3);
    await world.core.plans.archivePlan(org.tenant, org.keys['plans.notes.team']);
    paidAtStripe('cs_arch', ref, 'sub_arch', 3);
    stripeSubscription('sub_arch', 3);
    expect((await webhook(completed('evt_arch', 'cs_arch')).expect(200)).body).toEqual({ received: true, result: 'completed' });
    const s = await subscriptionOf('sub_arch');
    expect(s).toMatchObject({ paymentProvider: 'stripe', planId: org.keys['plans.notes.team'], quantity: 3 });
    expect(await seatsOf(s!.id)).toHaveLength(3);
    expect(errors).toEqual([]);
    // Sold again (as the next tests expect).
    await world.db.uow.run(async (r) => r.plans.save({ ...(await r.plans.get(org.keys['plans.notes.team']))!, archivedAt: null }));
  });

  it('records a plan made free after its link with Stripe as its provider, so a cancellation reaches Stripe', async () => {
    const ref = await link('plans.notes.business', 'cs_free', 'frank');
    await world.db.uow.run(async (r) => r.plans.save({ ...(await r.plans.get(org.keys['plans.notes.business']))!, pricingType: 'free' }));
    paidAtStripe('cs_free', ref, 'sub_free', 1);
    stripeSubscription('sub_free', 1);
    expect((await webhook(completed('evt_free', 'cs_free')).expect(200)).body.result).toBe('completed');
    const s = await subscriptionOf('sub_free');
    expect(s).toMatchObject({ paymentProvider: 'stripe', paymentSubscriptionId: 'sub_free' });
    nock(API)
      .delete('/v1/subscriptions/sub_free')
      .query({ invoice_now: 'true' })
      .reply(200, { id: 'sub_free', object: 'subscription', status: 'canceled' });
    await world.core.subscriptions.cancel(org.tenant, s!.id, 'now');
    await world.db.uow.run(async (r) => r.plans.save({ ...(await r.plans.get(org.keys['plans.notes.business']))!, pricingType: 'paid' }));
  });

  it('a paid checkout that still cannot be recorded answers 500 and logs an error, every time Stripe sends it', async () => {
    // Tollgate's session was canceled (the customer left), yet the customer paid on Stripe's page.
    const ref = await link('plans.notes.team', 'cs_gone', 'gone', 2);
    await world.core.checkout.cancelCheckout(ref);
    for (const attempt of [1, 2]) {
      paidAtStripe('cs_gone', ref, 'sub_gone', 2);
      const res = await webhook(completed('evt_gone', 'cs_gone')).expect(500);
      expect(res.body).toEqual({ error: 'the paid checkout could not be recorded; it will be retried', code: 'CHECKOUT_CANCELED' });
      expect(errors).toHaveLength(attempt);
    }
    expect(errors[0].fields).toMatchObject({ eventId: 'evt_gone', sessionId: ref, code: 'CHECKOUT_CANCELED' });
    expect(await subscriptionOf('sub_gone')).toBeUndefined();
  });

  it("still acknowledges a session that is not Tollgate's (another app on the same account)", async () => {
    const logged = errors.length;
    paidAtStripe('cs_other', randomUUID(), 'sub_other', 1);
    expect((await webhook(completed('evt_other', 'cs_other')).expect(200)).body.result).toBe('ignored');
    // Another app's reference is often no UUID: not looked up (the lookup failed: 500, retried for days).
    paidAtStripe('cs_order', 'order_123', 'sub_order', 1);
    expect((await webhook(completed('evt_order', 'cs_order')).expect(200)).body.result).toBe('ignored');
    expect(errors).toHaveLength(logged);
  });
});
