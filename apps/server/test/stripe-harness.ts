import nock from 'nock';
import request from 'supertest';
import Stripe from 'stripe';

// What the Stripe suites share: an event signed as Stripe signs it, and the check that every Stripe
// call a test mocked was made (and no mock leaks into the next test).

const signer = new Stripe('sk_test_signer');

/** POSTs `event` to the app's Stripe webhook, signed with `secret` (at `timestamp`, default now). */
export function postStripeEvent(app: Parameters<typeof request>[0], secret: string, event: object, timestamp?: number) {
  const payload = JSON.stringify(event);
  const header = signer.webhooks.generateTestHeaderString({ payload, secret, timestamp });
  return request(app).post('/webhooks/stripe').set('content-type', 'application/json').set('stripe-signature', header).send(payload);
}

/** For `afterEach`: no Stripe call mocked and left unmade, and no mock left for the next test. */
export function expectStripeMocksDone(): void {
  const pending = nock.pendingMocks();
  nock.cleanAll();
  expect(pending).toEqual([]);
}

/** A paid subscription-mode Checkout Session as Stripe returns it (retrieved with its line items). */
export const paidCheckoutSession = (cs: string, ref: string, sub: string, quantity: number, email: string) => ({
  id: cs,
  object: 'checkout.session',
  mode: 'subscription',
  client_reference_id: ref,
  payment_status: 'paid',
  subscription: sub,
  customer: `cus_${sub}`,
  customer_details: { email },
  line_items: { object: 'list', data: [{ id: `li_${sub}`, quantity }] },
});
