import nock from 'nock';
import Stripe from 'stripe';
import { randomUUID } from 'node:crypto';
import { aCustomer, aPlan, aProduct, aSubscription, describePaymentProviderContract } from '@tollgate/core/testing';
import { StripePaymentProvider } from '../src';

const API = 'https://api.stripe.com';
const subscriptionObject = {
  id: 'sub_123',
  object: 'subscription',
  status: 'active',
  cancel_at_period_end: false,
  items: { object: 'list', data: [{ id: 'si_1', quantity: 2, price: { id: 'price_1', product: 'prod_1' } }] },
  default_payment_method: { id: 'pm_1', object: 'payment_method', type: 'card' },
};

/** Stripe's API as nock answers it: every call the contract makes, any number of times; no network. */
function stubStripe() {
  nock.cleanAll();
  nock(API)
    .persist()
    .post('/v1/checkout/sessions')
    .reply(200, { id: 'cs_1', object: 'checkout.session', url: 'https://checkout.stripe.com/c/cs_1' })
    .post('/v1/billing_portal/sessions')
    .reply(200, { id: 'bps_1', object: 'billing_portal.session', url: 'https://billing.stripe.com/p/session/bps_1' })
    .get('/v1/subscriptions/sub_123')
    .query(true)
    .reply(200, subscriptionObject)
    .post('/v1/subscriptions/sub_123')
    .reply(200, subscriptionObject)
    .delete('/v1/subscriptions/sub_123')
    .query({ invoice_now: 'true' })
    .reply(200, { ...subscriptionObject, status: 'canceled' })
    .get('/v1/invoices')
    .query(true)
    .reply(200, {
      object: 'list',
      has_more: false,
      data: [
        { id: 'in_2', object: 'invoice' },
        { id: 'in_1', object: 'invoice' },
      ],
    });
}

afterAll(() => nock.cleanAll());

describePaymentProviderContract('stripe (nock)', () => {
  stubStripe();
  const tenant = { organisationId: randomUUID(), isTest: false };
  const product = aProduct(tenant);
  const plan = aPlan(product, { licenseType: 'perSeat' });
  const customer = aCustomer(tenant, { paymentCustomerId: 'cus_123' });
  const provider = new StripePaymentProvider(new Stripe('sk_test_contract', { maxNetworkRetries: 0 }), {
    publicUrl: 'https://billing.example.com',
  });
  return {
    provider,
    product,
    plan,
    customer,
    subscription: aSubscription(plan, customer, { paymentProvider: 'stripe', paymentSubscriptionId: 'sub_123', quantity: 2 }),
    failNext: () => {
      nock.cleanAll();
      nock(API)
        .get('/v1/subscriptions/sub_123')
        .query(true)
        .reply(500, { error: { type: 'api_error', message: 'outage' } });
    },
  };
});
