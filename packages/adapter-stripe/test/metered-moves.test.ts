import express from 'express';
import nock from 'nock';
import request from 'supertest';
import Stripe from 'stripe';
import { randomUUID } from 'node:crypto';
import { DomainError, type CheckoutOptions, type LineItem, type Plan, type ProviderSync, type Subscription } from '@tollgate/core';
import { aCustomer, aPlan, aProduct, aSubscription } from '@tollgate/core/testing';
import { createStripeWebhookRouter, StripePaymentProvider } from '../src';
import { metered, standIn, T0 } from './metered-fixtures';

// The metered items' review: a plan change keeps the removed meters' usage billed, a removal of
// the first plan moves the metered items to the plan promoted, any stand-in id counts as no Stripe
// price, the port's `unsellable` says what the checkout refuses, and a renewal invoice whose
// metered line is listed first still renews. Nock only, never the network.

const API = 'https://api.stripe.com';
const stripe = new Stripe('sk_test_tollgate', { maxNetworkRetries: 0 });
const provider = new StripePaymentProvider(stripe, { publicUrl: 'https://billing.example.com' });
const tenant = { organisationId: randomUUID(), isTest: true };
const product = { ...aProduct(tenant), displayName: 'Notes' };
const customer = aCustomer(tenant, { paymentCustomerId: 'cus_m' });

const planOf = (displayName: string, lineItems: LineItem[]) =>
  aPlan(product, { id: randomUUID(), displayName, interval: 'month', length: 1, lineItems });

const seatPrice = { id: 'price_inline', product: 'prod_1', recurring: { interval: 'month', interval_count: 1, usage_type: 'licensed' } };
const meteredPrice = (id: string) => ({
  id,
  product: 'prod_m',
  recurring: { interval: 'month', interval_count: 1, usage_type: 'metered' },
});

/** Records the body (a POST's form, a DELETE's query) and the idempotency key of one Stripe call. */
function capture(method: 'post' | 'get' | 'delete', path: string, reply: object) {
  const seen: { body?: Record<string, string>; key?: string } = {};
  const scope = nock(API);
  const intercept =
    method === 'post'
      ? scope.post(path, (body: Record<string, string>) => ((seen.body = body), true))
      : method === 'delete'
        ? scope.delete(path).query((q) => ((seen.body = q as Record<string, string>), true))
        : scope.get(path);
  intercept.reply(function reply200() {
    seen.key = this.req.headers['idempotency-key'] as string | undefined;
    return [200, reply];
  });
  return seen;
}

beforeAll(() => {
  nock.disableNetConnect();
  nock.enableNetConnect('127.0.0.1');
});
afterAll(() => nock.enableNetConnect());
beforeEach(() => nock.cleanAll());
afterEach(() => {
  const pending = nock.pendingMocks();
  nock.cleanAll();
  expect(pending).toEqual([]);
});

const stripeSub = (...data: object[]) => ({ id: 'sub_m', object: 'subscription', status: 'active', items: { object: 'list', data } });
const onStripe = (plan: Plan, over: Partial<Subscription> = {}) =>
  aSubscription(plan, customer, { paymentProvider: 'stripe', paymentSubscriptionId: 'sub_m', quantity: 1, currency: 'EUR', ...over });

describe("a plan change keeps the removed meters' usage billed", () => {
  const from = planOf('Old', [metered('api_calls', 'price_1ApiCalls'), metered('gpu_hours', 'price_1GpuOld')]);
  const to = planOf('New', [metered('api_calls', 'price_1ApiCalls'), metered('storage', 'price_1Storage')]);
  const sub = stripeSub(
    { id: 'si_gpu', price: meteredPrice('price_1GpuOld') },
    { id: 'si_api', price: meteredPrice('price_1ApiCalls') },
    { id: 'si_seat', quantity: 1, price: seatPrice },
  );

  it.each([
    ['none', 'create_prorations'],
    ['create_prorations', 'create_prorations'],
    ['always_invoice', 'always_invoice'],
  ] as const)(
    'proration %s: the update moves the seat item and adds the new meters; the old meter is deleted after it, prorated %s',
    async (proration, deletion) => {
      capture('get', '/v1/subscriptions/sub_m', sub);
      const update = capture('post', '/v1/subscriptions/sub_m', sub);
      const del = capture('delete', '/v1/subscription_items/si_gpu', { id: 'si_gpu', object: 'subscription_item', deleted: true });
      await provider.changePlan({ subscription: onStripe(from), from, to, proration, fromUnitAmount: 1100, toUnitAmount: 1200 });
      expect(update.body).toMatchObject({
        'items[0][id]': 'si_seat',
        'items[0][price_data][unit_amount]': '1200',
        'items[1][price]': 'price_1Storage',
        proration_behavior: proration,
      });
      // Deleted in the update with proration none, Stripe would bill none of the old meter's usage so far.
      expect(Object.keys(update.body ?? {}).filter((k) => /deleted|^items\[2\]/.test(k))).toEqual([]);
      expect(del.body).toEqual({ proration_behavior: deletion });
    },
  );

  it("an old metered item Stripe did not delete is the outcome's leftover, not a failure: the change was made at Stripe", async () => {
    capture('get', '/v1/subscriptions/sub_m', sub);
    capture('post', '/v1/subscriptions/sub_m', sub);
    nock(API)
      .delete('/v1/subscription_items/si_gpu')
      .query(true)
      .reply(500, { error: { type: 'api_error', message: 'boom' } });
    const outcome = await provider.changePlan({
      subscription: onStripe(from),
      from,
      to,
      proration: 'none',
      fromUnitAmount: 1100,
      toUnitAmount: 1200,
    });
    expect(outcome.leftover?.items).toEqual(['si_gpu']);
    expect(outcome.leftover?.reason).toMatch(/change was made at Stripe, but the old first plan's metered items si_gpu were not deleted/);
  });

  it('a deletion Stripe answers resource_missing (a retried DELETE whose first try was taken) counts as deleted', async () => {
    capture('get', '/v1/subscriptions/sub_m', sub);
    capture('post', '/v1/subscriptions/sub_m', sub);
    nock(API)
      .delete('/v1/subscription_items/si_gpu')
      .query(true)
      .reply(404, { error: { type: 'invalid_request_error', code: 'resource_missing', message: "No such subscription item: 'si_gpu'" } });
    const outcome = await provider.changePlan({
      subscription: onStripe(from),
      from,
      to,
      proration: 'none',
      fromUnitAmount: 1100,
      toUnitAmount: 1200,
    });
    expect(outcome).toEqual({});
  });
});

describe('the first plan removed: the metered items move to the plan promoted', () => {
  const first = planOf('First', [metered('gpu_hours', 'price_1GpuOld'), metered('api_calls', 'price_1ApiCalls')]);
  const promoted = planOf('Promoted', [metered('api_calls', 'price_1ApiCalls'), metered('storage', 'price_1Storage')]);
  const sub = stripeSub(
    { id: 'si_gpu', price: meteredPrice('price_1GpuOld') },
    { id: 'si_seat', quantity: 1, price: seatPrice },
    { id: 'si_api', price: meteredPrice('price_1ApiCalls') },
    { id: 'si_added', quantity: 2, price: { ...seatPrice, id: 'price_added' }, metadata: { tollgatePlan: promoted.id } },
  );
  const subscription = onStripe(first, {
    addedPlans: [
      { id: randomUUID(), planId: promoted.id, quantity: 2, lineItemIds: [], paymentItemId: 'si_added', createdAt: T0, updatedAt: T0 },
    ],
  });
  const removal = (p: Plan, over: object = {}) => ({
    subscription,
    plan: p,
    quantity: 1,
    unitAmount: 1100,
    proration: 'none' as const,
    requestId: 'req-1',
    ...over,
  });

  it("deletes the first plan's item and adds the promoted plan's metered prices in one update, then deletes the old meters prorated", async () => {
    capture('get', '/v1/subscriptions/sub_m', sub);
    const update = capture('post', '/v1/subscriptions/sub_m', sub);
    const del = capture('delete', '/v1/subscription_items/si_gpu', { id: 'si_gpu', object: 'subscription_item', deleted: true });
    await provider.removePlan(removal(first, { promoted }));
    expect(update.body).toEqual({
      'items[0][id]': 'si_seat',
      'items[0][deleted]': 'true',
      'items[1][price]': 'price_1Storage',
      proration_behavior: 'none',
    });
    expect(update.key).toBe(`tollgate-plan-remove-req-1-${first.id}`);
    expect(del.body).toEqual({ proration_behavior: 'create_prorations' });
    expect(del.key).toBe(`tollgate-plan-remove-si_gpu-req-1-${first.id}`);
  });

  it('an old metered item Stripe did not delete after the update is the leftover: the removal is made, nothing undone', async () => {
    capture('get', '/v1/subscriptions/sub_m', sub);
    capture('post', '/v1/subscriptions/sub_m', sub);
    nock(API)
      .delete('/v1/subscription_items/si_gpu')
      .query(true)
      .reply(500, { error: { type: 'api_error', message: 'boom' } });
    const outcome = await provider.removePlan(removal(first, { promoted }));
    expect(outcome.leftover?.items).toEqual(['si_gpu']);
    expect(outcome.leftover?.reason).toMatch(/delete them in Stripe/);
  });

  it('refuses a promoted plan whose charging metered line item has no Stripe price, before Stripe is told anything', async () => {
    const bare = planOf('Bare', [metered('storage', standIn)]);
    const refusal = await provider.removePlan(removal(first, { promoted: bare })).catch((e: unknown) => e);
    expect(refusal).toBeInstanceOf(DomainError);
    expect((refusal as DomainError).code).toBe('PAYMENT_NOT_AVAILABLE');
    expect((refusal as DomainError).message).toMatch(/makes Bare the first: .*metered line item storage-usage .*paymentPriceId/);
  });

  it('an added plan removed: its item alone is deleted, the metered items stay', async () => {
    const del = capture('delete', '/v1/subscription_items/si_added', { id: 'si_added', object: 'subscription_item', deleted: true });
    await provider.removePlan(removal(promoted, { paymentItemId: 'si_added', proration: 'create_prorations' }));
    expect(del.body).toEqual({ proration_behavior: 'create_prorations' });
  });
});

describe('no Stripe price: the stand-in of any price, and the port says so as the checkout refuses', () => {
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

  it("refuses a plan whose metered price carries another price's stand-in (a plan's JSON saved again as a new plan)", async () => {
    // The stand-in of the price it was copied from, not of its own: Stripe holds no such price either.
    const copied = planOf('Copy', [metered('api_calls', () => standIn(randomUUID()))]);
    const refusal = await provider.checkoutLink(checkout(copied)).catch((e: unknown) => e);
    expect(refusal).toBeInstanceOf(DomainError);
    expect((refusal as DomainError).code).toBe('VALIDATION_FAILED');
    const why = provider.unsellable(copied, 'EUR');
    expect(why).toMatch(/metered line item api_calls-usage .*paymentPriceId/);
    expect((refusal as DomainError).details).toEqual([{ property: 'planId', error: why }]);
  });

  it('a real Stripe price id is sellable (nothing to say), and so is a line item that charges nothing in the currency', () => {
    expect(provider.unsellable(planOf('Real', [metered('api_calls', 'price_1QyZ2aLkdIwHu7ixAbCdEf12')]), 'EUR')).toBeUndefined();
    expect(provider.unsellable(planOf('Other currency', [metered('api_calls', standIn)]), 'USD')).toBeUndefined();
  });
});

describe('invoice.paid: a renewal invoice whose metered line is listed first still renews', () => {
  const SECRET = 'whsec_metered';
  const signer = new Stripe('sk_test_signer');

  it('renews to the period that ends last (the seat line billed in advance), not the metered line of the period just ended', async () => {
    const renewals: [string, Date, Date][] = [];
    const providerSync = {
      renew: async (id: string, start: Date, end: Date) => {
        renewals.push([id, start, end]);
        return 'applied';
      },
    } as unknown as ProviderSync;
    const app = express();
    app.use(
      '/webhooks/stripe',
      createStripeWebhookRouter({ stripe: new Stripe('sk_test_metered'), webhookSecret: SECRET, checkout: {} as never, providerSync }),
    );
    const [p0, p1, p2] = [1_767_225_600, 1_769_904_000, 1_772_323_200];
    nock(API)
      .get('/v1/invoices/in_r')
      .reply(200, {
        id: 'in_r',
        object: 'invoice',
        parent: { type: 'subscription_details', subscription_details: { subscription: 'sub_m' } },
        lines: {
          object: 'list',
          data: [
            { id: 'il_usage', period: { start: p0, end: p1 } },
            { id: 'il_seat', period: { start: p1, end: p2 } },
          ],
        },
      });
    const payload = JSON.stringify({
      id: 'evt_renew',
      object: 'event',
      type: 'invoice.paid',
      data: { object: { id: 'in_r', object: 'invoice' } },
      created: p1,
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
    expect(renewals).toEqual([['sub_m', new Date(p1 * 1000), new Date(p2 * 1000)]]);
  });
});
