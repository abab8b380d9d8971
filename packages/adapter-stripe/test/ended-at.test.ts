import express from 'express';
import nock from 'nock';
import request from 'supertest';
import Stripe from 'stripe';
import { subscriptionView } from '@tollgate/core';
import { createTestCore, sampleCatalog } from '@tollgate/core/testing';
import { createStripeWebhookRouter, snapshotOf } from '../src';

// A Stripe subscription canceled at its period's end ends then (its `ended_at`), not when the
// cancel was asked (its `canceled_at`): the licenses and the expiry date follow `ended_at`.

const API = 'https://api.stripe.com';
const SECRET = 'whsec_ended_at';
const DAY = 86_400;
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

const stripeSubscription = (start: number, end: number, over: object) => ({
  id: 'sub_end',
  object: 'subscription',
  status: 'active',
  customer: 'cus_end',
  cancel_at_period_end: false,
  canceled_at: null,
  ended_at: null,
  items: {
    object: 'list',
    data: [
      { id: 'si_end', quantity: 1, current_period_start: start, current_period_end: end, price: { id: 'price_1', product: 'prod_1' } },
    ],
  },
  ...over,
});

describe("a Stripe subscription's end", () => {
  it('snapshotOf: a canceled subscription ended at ended_at (else canceled_at); a running one keeps canceled_at', () => {
    const over = { cancel_at_period_end: true, canceled_at: 3 * DAY };
    expect(snapshotOf(stripeSubscription(0, 30 * DAY, { ...over, status: 'canceled', ended_at: 30 * DAY })).canceledAt).toEqual(
      new Date(30 * DAY * 1000),
    );
    expect(snapshotOf(stripeSubscription(0, 30 * DAY, { ...over, status: 'canceled' })).canceledAt).toEqual(new Date(3 * DAY * 1000));
    expect(snapshotOf(stripeSubscription(0, 30 * DAY, over)).canceledAt).toEqual(new Date(3 * DAY * 1000));
  });

  it('a deletion after a cancel at period end asked on day 3 ends the licenses, and shows the expiry, at the period end', async () => {
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
      paymentSubscriptionId: 'sub_end',
      paymentCustomerId: 'cus_end',
    });
    const start = Math.floor(s.currentPeriodStart.getTime() / 1000);
    const end = Math.floor(s.currentPeriodEnd.getTime() / 1000);
    core.clock.set(new Date((end + 60) * 1000));
    nock(API)
      .get('/v1/subscriptions/sub_end')
      .reply(
        200,
        stripeSubscription(start, end, { status: 'canceled', cancel_at_period_end: true, canceled_at: start + 3 * DAY, ended_at: end }),
      );

    const app = express();
    app.use(
      '/webhooks/stripe',
      createStripeWebhookRouter({
        stripe: new Stripe('sk_test_ended_at'),
        webhookSecret: SECRET,
        checkout: core.checkout,
        providerSync: core.providerSync,
      }),
    );
    const payload = JSON.stringify({
      id: 'evt_end',
      object: 'event',
      type: 'customer.subscription.deleted',
      data: { object: { id: 'sub_end', object: 'subscription' } },
      created: end + 60,
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

    const ended = (await core.subscriptions.get(tenant, s.id)).subscription;
    expect(ended.status).toBe('CANCELED');
    expect(subscriptionView(ended).expiryDate).toBe(s.currentPeriodEnd.toISOString());
    const licenses = await core.licenses.list(tenant, { subscriptionId: s.id });
    expect(licenses.map((l) => [l.status, l.endTime?.toISOString()])).toEqual([['CANCELED', s.currentPeriodEnd.toISOString()]]);
  });
});
