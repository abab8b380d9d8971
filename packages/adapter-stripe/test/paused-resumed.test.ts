import express from 'express';
import nock from 'nock';
import request from 'supertest';
import Stripe from 'stripe';
import { createTestCore, sampleCatalog } from '@tollgate/core/testing';
import { createStripeWebhookRouter } from '../src';

// The payments review (twelfth session): Stripe's `customer.subscription.paused` and
// `customer.subscription.resumed` sync the subscription as `updated` does.

const API = 'https://api.stripe.com';
const SECRET = 'whsec_paused';
const signer = new Stripe('sk_test_signer');

beforeAll(() => {
  nock.disableNetConnect();
  nock.enableNetConnect('127.0.0.1');
});
afterAll(() => nock.enableNetConnect());
afterEach(() => {
  const pending = nock.pendingMocks();
  nock.cleanAll();
  expect(pending).toEqual([]);
});

const stripeSubscription = (start: number, end: number, status: string) => ({
  id: 'sub_pause',
  object: 'subscription',
  status,
  customer: 'cus_pause',
  cancel_at_period_end: false,
  canceled_at: null,
  ended_at: null,
  items: {
    object: 'list',
    data: [
      { id: 'si_pause', quantity: 1, current_period_start: start, current_period_end: end, price: { id: 'price_1', product: 'prod_1' } },
    ],
  },
});

it('pauses and resumes the subscription and its licenses on the paused and resumed events', async () => {
  const core = createTestCore();
  const org = await core.apiKeys.ensureOrganisation('acme');
  const tenant = { organisationId: org.id, isTest: false };
  const { keys } = await core.importer.apply(sampleCatalog('acme'));
  const { subscription: s } = await core.checkout.completePurchase({
    planId: keys['plans.notes.business'],
    member: 'buyer@example.com',
    email: 'buyer@example.com',
    granteeId: 'alice',
    quantity: 1,
    currency: 'USD',
    paymentProvider: 'stripe',
    paymentSubscriptionId: 'sub_pause',
    paymentCustomerId: 'cus_pause',
  });
  const start = Math.floor(s.currentPeriodStart.getTime() / 1000);
  const end = Math.floor(s.currentPeriodEnd.getTime() / 1000);
  const app = express();
  app.use(
    '/webhooks/stripe',
    createStripeWebhookRouter({
      stripe: new Stripe('sk_test_paused'),
      webhookSecret: SECRET,
      checkout: core.checkout,
      providerSync: core.providerSync,
    }),
  );
  const deliver = async (n: number, type: string, status: string) => {
    nock(API)
      .get('/v1/subscriptions/sub_pause')
      .reply(200, stripeSubscription(start, end, status));
    const payload = JSON.stringify({
      id: `evt_pause_${n}`,
      object: 'event',
      type,
      data: { object: { id: 'sub_pause', object: 'subscription' } },
      created: start + n,
      livemode: false,
      api_version: '2026-10-28.endive',
    });
    const res = await request(app)
      .post('/webhooks/stripe')
      .set('content-type', 'application/json')
      .set('stripe-signature', signer.webhooks.generateTestHeaderString({ payload, secret: SECRET }))
      .send(payload)
      .expect(200);
    expect(res.body.result).toBe('applied');
    const licenses = await core.licenses.list(tenant, { subscriptionId: s.id });
    return [(await core.subscriptions.get(tenant, s.id)).subscription.status, licenses.map((l) => [l.granteeId, l.status])];
  };
  expect(await deliver(1, 'customer.subscription.paused', 'paused')).toEqual(['PAUSED', [['alice', 'INACTIVE']]]);
  expect(await deliver(2, 'customer.subscription.resumed', 'active')).toEqual(['ACTIVE', [['alice', 'ACTIVE']]]);
});
