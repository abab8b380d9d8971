import nock from 'nock';
import Stripe from 'stripe';
import { randomUUID } from 'node:crypto';
import { DomainError, type CheckoutOptions, type LineItem, type Plan } from '@tollgate/core';
import { aCustomer, aPlan, aProduct, aSubscription } from '@tollgate/core/testing';
import { snapshotOf, StripePaymentProvider } from '../src';
import { metered, standIn, T0 } from './metered-fixtures';

// A usage plan bought through Tollgate's Stripe checkout: Stripe bills its usage from the meter
// events Tollgate relays only if the subscription holds a metered price of each metered line item.

const API = 'https://api.stripe.com';
const stripe = new Stripe('sk_test_tollgate', { maxNetworkRetries: 0 });
const provider = new StripePaymentProvider(stripe, { publicUrl: 'https://billing.example.com' });
const tenant = { organisationId: randomUUID(), isTest: true };
const product = { ...aProduct(tenant), displayName: 'Notes' };

const planOf = (lineItems: LineItem[], over: Partial<Plan> = {}) =>
  aPlan(product, { id: randomUUID(), displayName: 'Usage', interval: 'month', length: 1, lineItems, ...over });

const options: CheckoutOptions = {
  promoCode: null,
  allowPromoCode: false,
  customerEmail: null,
  customerId: null,
  currency: 'EUR',
  automaticTax: false,
  quantity: 1,
  changeQuantity: false,
};
const checkout = (plan: Plan) => ({
  sessionId: 'sess-m',
  product,
  plan,
  options,
  granteeId: 'alice',
  member: 'm@example.com',
  successUrl: 'https://app.example.com/ok',
  cancelUrl: 'https://app.example.com/no',
  unitAmount: 1100,
});

function capture(method: 'post' | 'get', path: string, reply: object) {
  const seen: { body?: Record<string, string> } = {};
  nock(API)
    [method](path, (body: Record<string, string>) => {
      seen.body = body;
      return true;
    })
    .reply(200, reply);
  return seen;
}

beforeEach(() => nock.cleanAll());
afterEach(() => expect(nock.isDone()).toBe(true));

describe('metered line items at Stripe (nock, no network)', () => {
  it("the Checkout Session holds each meter's metered Stripe price, with no quantity, after the seat line", async () => {
    const plan = planOf([
      metered('api_calls', 'price_1ApiCallsMetered'),
      // A second line of the same meter: Tollgate's close bills the first alone, so Stripe gets one price of it.
      metered('api_calls', 'price_1ApiCallsAgain'),
      metered('gpu_hours', 'price_1GpuHoursMetered'),
      // Archived: Tollgate meters it no more.
      metered('old_meter', 'price_1OldMeter', 2, { archivedAt: T0 }),
      // Free metering (charges nothing) and no Stripe price: nothing to bill, nothing refused.
      metered('free_meter', standIn, 0),
    ]);
    const seen = capture('post', '/v1/checkout/sessions', {
      id: 'cs_m',
      object: 'checkout.session',
      url: 'https://checkout.stripe.com/c/cs_m',
    });
    await provider.checkoutLink(checkout(plan));
    const body = seen.body ?? {};
    expect(body).toMatchObject({
      'line_items[0][price_data][unit_amount]': '1100',
      'line_items[0][quantity]': '1',
      'line_items[1][price]': 'price_1ApiCallsMetered',
      'line_items[2][price]': 'price_1GpuHoursMetered',
    });
    expect(body['line_items[1][quantity]']).toBeUndefined();
    expect(body['line_items[2][quantity]']).toBeUndefined();
    expect(Object.keys(body).filter((k) => /^line_items\[3\]/.test(k))).toEqual([]);
  });

  it.each([
    ['the stand-in a save gives a price without one', standIn],
    ['an empty id', ''],
  ])(
    'refuses a checkout whose charging metered line item has no Stripe price (%s): 400 naming planId, Stripe never asked',
    async (_l, id) => {
      const plan = planOf([metered('api_calls', 'price_1ApiCallsMetered'), metered('gpu_hours', id)]);
      const refusal = await provider.checkoutLink(checkout(plan)).catch((e: unknown) => e);
      expect(refusal).toBeInstanceOf(DomainError);
      const e = refusal as DomainError;
      expect(e.code).toBe('VALIDATION_FAILED');
      expect(e.details).toEqual([{ property: 'planId', error: expect.stringContaining('metered line item gpu_hours-usage') }]);
      expect(e.message).toMatch(/paymentPriceId/);
      expect(e.message).toMatch(/meter gpu_hours/);
    },
  );

  const customer = aCustomer(tenant, { paymentCustomerId: 'cus_m' });
  const seatPrice = { id: 'price_inline', product: 'prod_1', recurring: { interval: 'month', interval_count: 1, usage_type: 'licensed' } };
  const meteredPrice = (id: string) => ({
    id,
    product: 'prod_m',
    recurring: { interval: 'month', interval_count: 1, usage_type: 'metered' },
  });

  it("a plan change moves the metered items with the plan: the old meter's item goes, the target's price comes, a shared one stays", async () => {
    const from = planOf([metered('api_calls', 'price_1ApiCalls'), metered('gpu_hours', 'price_1GpuOld')]);
    const to = planOf([metered('api_calls', 'price_1ApiCalls'), metered('storage', 'price_1Storage')]);
    const subscription = aSubscription(from, customer, {
      paymentProvider: 'stripe',
      paymentSubscriptionId: 'sub_m',
      quantity: 1,
      currency: 'EUR',
    });
    const sub = {
      id: 'sub_m',
      object: 'subscription',
      status: 'active',
      // Stripe lists a metered item first: it is never taken for the plan's item.
      items: {
        data: [
          { id: 'si_gpu', price: meteredPrice('price_1GpuOld') },
          { id: 'si_api', price: meteredPrice('price_1ApiCalls') },
          { id: 'si_seat', quantity: 1, price: seatPrice },
        ],
      },
    };
    capture('get', '/v1/subscriptions/sub_m', sub);
    const update = capture('post', '/v1/subscriptions/sub_m', sub);
    // The old meter's item is deleted after the update, prorated (metered-moves.test.ts): its usage so far is billed.
    nock(API)
      .delete('/v1/subscription_items/si_gpu')
      .query({ proration_behavior: 'create_prorations' })
      .reply(200, { id: 'si_gpu', deleted: true });
    await provider.changePlan({ subscription, from, to, proration: 'none', fromUnitAmount: 1100, toUnitAmount: 1200 });
    expect(update.body).toMatchObject({
      'items[0][id]': 'si_seat',
      'items[0][price_data][unit_amount]': '1200',
      'items[1][price]': 'price_1Storage',
    });
    expect(Object.keys(update.body ?? {}).filter((k) => /^items\[2\]/.test(k))).toEqual([]);
  });

  it('refuses a plan change to a plan whose charging metered line item has no Stripe price, before Stripe is told', async () => {
    const from = planOf([]);
    const to = planOf([metered('api_calls', standIn)]);
    const subscription = aSubscription(from, customer, {
      paymentProvider: 'stripe',
      paymentSubscriptionId: 'sub_m',
      quantity: 1,
      currency: 'EUR',
    });
    const refusal = await provider
      .changePlan({ subscription, from, to, proration: 'none', fromUnitAmount: 1100, toUnitAmount: 1200 })
      .catch((e: unknown) => e);
    expect(refusal).toBeInstanceOf(DomainError);
    expect((refusal as DomainError).code).toBe('PAYMENT_NOT_AVAILABLE');
    expect((refusal as DomainError).message).toMatch(/metered line item api_calls-usage .*paymentPriceId/);
  });

  it("the re-sync reads the seat item's quantity and period, never a metered item's, and leaves metered items out of the plans' items", () => {
    const snap = snapshotOf({
      id: 'sub_m',
      status: 'active',
      customer: 'cus_m',
      cancel_at_period_end: false,
      canceled_at: null,
      items: {
        data: [
          { id: 'si_api', price: meteredPrice('price_1ApiCalls'), current_period_start: 100, current_period_end: 200 },
          { id: 'si_seat', quantity: 4, price: seatPrice, current_period_start: 1000, current_period_end: 2000 },
        ],
      },
    });
    expect(snap.quantity).toBe(4);
    expect(snap.currentPeriodStart).toEqual(new Date(1000 * 1000));
    expect(snap.items?.map((i) => i.id)).toEqual(['si_seat']);
  });
});
