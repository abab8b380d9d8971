import nock from 'nock';
import Stripe from 'stripe';
import { randomUUID } from 'node:crypto';
import type { CheckoutOptions } from '@tollgate/core';
import { aCustomer, aPlan, aProduct, aSubscription } from '@tollgate/core/testing';
import { domainStatus, StripePaymentProvider } from '../src';

const API = 'https://api.stripe.com';
const stripe = new Stripe('sk_test_tollgate', { maxNetworkRetries: 0 });
const provider = new StripePaymentProvider(stripe, { publicUrl: 'https://billing.example.com' });
const tenant = { organisationId: randomUUID(), isTest: false };
const product = { ...aProduct(tenant), displayName: 'Notes' };
const plan = aPlan(product, { displayName: 'Team', licenseType: 'perSeat', perSeatAmount: 2, interval: 'month', length: 1, trialDays: 14 });
const customer = aCustomer(tenant, { paymentCustomerId: 'cus_123' });
const subscription = aSubscription(plan, customer, { paymentProvider: 'stripe', paymentSubscriptionId: 'sub_123', quantity: 3 });

/** Records the form body of the one request that matches. */
function capture(method: 'post' | 'get' | 'delete', path: string, reply: object, withQuery = false) {
  const seen: { body?: Record<string, string>; path?: string } = {};
  const scope = nock(API)[method](path, (body: Record<string, string>) => {
    seen.body = body;
    return true;
  });
  (withQuery ? scope.query(true) : scope).reply(200, (uri) => {
    seen.path = uri;
    return reply;
  });
  return seen;
}

const options = (over: Partial<CheckoutOptions> = {}): CheckoutOptions => ({
  promoCode: null,
  allowPromoCode: false,
  customerEmail: null,
  customerId: null,
  currency: 'EUR',
  automaticTax: false,
  quantity: 3,
  changeQuantity: false,
  ...over,
});
const checkout = (o: CheckoutOptions) => ({
  sessionId: 'sess-1',
  product,
  plan,
  options: o,
  granteeId: 'alice',
  member: 'm@example.com',
  successUrl: 'https://app.example.com/ok',
  cancelUrl: 'https://app.example.com/no',
  unitAmount: 1100,
});

beforeEach(() => nock.cleanAll());
afterEach(() => expect(nock.isDone()).toBe(true));

describe('Stripe payment provider (nock, no network)', () => {
  it('creates a subscription Checkout Session with price, quantity, adjustable quantity, promo, customer, currency, tax and trial', async () => {
    const seen = capture('post', '/v1/checkout/sessions', {
      id: 'cs_1',
      object: 'checkout.session',
      url: 'https://checkout.stripe.com/c/cs_1',
    });
    const { url } = await provider.checkoutLink(
      checkout(options({ changeQuantity: true, allowPromoCode: true, customerEmail: 'a@b.co', automaticTax: true })),
    );
    expect(url).toBe('https://checkout.stripe.com/c/cs_1');
    expect(seen.body).toMatchObject({
      mode: 'subscription',
      client_reference_id: 'sess-1',
      success_url: 'https://app.example.com/ok',
      cancel_url: 'https://app.example.com/no',
      currency: 'eur',
      'line_items[0][price_data][currency]': 'eur',
      'line_items[0][price_data][unit_amount]': '1100',
      'line_items[0][price_data][recurring][interval]': 'month',
      'line_items[0][price_data][recurring][interval_count]': '1',
      'line_items[0][price_data][product_data][name]': 'Notes Team',
      'line_items[0][quantity]': '3',
      'line_items[0][adjustable_quantity][enabled]': 'true',
      'line_items[0][adjustable_quantity][minimum]': '2',
      'line_items[0][adjustable_quantity][maximum]': '10000',
      allow_promotion_codes: 'true',
      customer_email: 'a@b.co',
      'automatic_tax[enabled]': 'true',
      'subscription_data[trial_period_days]': '14',
      'subscription_data[metadata][granteeId]': 'alice',
      'metadata[tollgateSession]': 'sess-1',
    });
  });

  it('never lets a customer pick more seats than the deployment records (MAX_SEATS): they would pay, then be refused', async () => {
    const seen = capture('post', '/v1/checkout/sessions', { id: 'cs_max', url: 'https://checkout.stripe.com/c/cs_max' });
    await provider.checkoutLink({ ...checkout(options({ changeQuantity: true })), maxSeats: 50 });
    expect(seen.body).toMatchObject({
      'line_items[0][adjustable_quantity][minimum]': '2',
      'line_items[0][adjustable_quantity][maximum]': '50',
    });
  });

  it('pre-fills a promotion code and an existing customer', async () => {
    const seen = capture('post', '/v1/checkout/sessions', { id: 'cs_2', url: 'https://checkout.stripe.com/c/cs_2' });
    await provider.checkoutLink(checkout(options({ promoCode: 'promo_1', customerId: 'cus_9' })));
    expect(seen.body).toMatchObject({ 'discounts[0][promotion_code]': 'promo_1', customer: 'cus_9' });
    expect(seen.body).not.toHaveProperty('allow_promotion_codes');
    expect(seen.body).not.toHaveProperty('customer_email');
  });

  it('opens a setup-mode session to update the payment method, and portal sessions (plain and cancel flow)', async () => {
    const setup = capture('post', '/v1/checkout/sessions', { id: 'cs_3', url: 'https://checkout.stripe.com/c/cs_3' });
    expect((await provider.updatePaymentLink(subscription, customer)).url).toBe('https://checkout.stripe.com/c/cs_3');
    expect(setup.body).toMatchObject({ mode: 'setup', customer: 'cus_123', 'setup_intent_data[metadata][subscription_id]': 'sub_123' });
    const portal = capture('post', '/v1/billing_portal/sessions', { id: 'bps_1', url: 'https://billing.stripe.com/p/1' });
    expect((await provider.portalLink(subscription, customer)).url).toBe('https://billing.stripe.com/p/1');
    expect(portal.body).toMatchObject({ customer: 'cus_123', return_url: 'https://billing.example.com/' });
    const cancel = capture('post', '/v1/billing_portal/sessions', { id: 'bps_2', url: 'https://billing.stripe.com/p/2' });
    await provider.cancelLink(subscription, customer);
    expect(cancel.body).toMatchObject({
      'flow_data[type]': 'subscription_cancel',
      'flow_data[subscription_cancel][subscription]': 'sub_123',
    });
  });

  const stripeSub = {
    id: 'sub_123',
    object: 'subscription',
    status: 'active',
    items: { data: [{ id: 'si_1', quantity: 3, price: { id: 'price_1', product: 'prod_1' } }] },
  };

  it('changes plan on the subscription item with proration_behavior', async () => {
    capture('get', '/v1/subscriptions/sub_123', stripeSub);
    const update = capture('post', '/v1/subscriptions/sub_123', stripeSub);
    const to = aPlan(product, { id: randomUUID(), interval: 'year', length: 1 });
    await provider.changePlan({ subscription, from: plan, to, proration: 'always_invoice', fromUnitAmount: 1100, toUnitAmount: 9900 });
    expect(update.body).toMatchObject({
      'items[0][id]': 'si_1',
      'items[0][price_data][unit_amount]': '9900',
      'items[0][price_data][product]': 'prod_1',
      'items[0][price_data][recurring][interval]': 'year',
      proration_behavior: 'always_invoice',
    });
  });

  it('sets the seat quantity with proration_behavior', async () => {
    capture('get', '/v1/subscriptions/sub_123', stripeSub);
    const update = capture('post', '/v1/subscriptions/sub_123', stripeSub);
    await provider.changeSeats(subscription, plan, 5, 'none', 1100);
    expect(update.body).toMatchObject({ 'items[0][id]': 'si_1', 'items[0][quantity]': '5', proration_behavior: 'none' });
  });

  describe("a subscription of several plans: the first plan's item is written, never an added plan's Stripe lists first", () => {
    const added = aPlan(product, { id: randomUUID(), displayName: 'Business' });
    // Stripe lists the added plan's item first (ordering is Stripe's, not ours).
    const several = {
      ...stripeSub,
      items: {
        data: [
          { id: 'si_added', quantity: 1, price: { id: 'price_inline_added', product: 'prod_1' }, metadata: { tollgatePlan: added.id } },
          { id: 'si_1', quantity: 3, price: { id: 'price_1', product: 'prod_1' }, metadata: {} },
        ],
      },
    };
    const heldBoth = (paymentItemId: string | null) => ({
      ...subscription,
      addedPlans: [
        { id: randomUUID(), planId: added.id, quantity: 1, lineItemIds: [], paymentItemId, createdAt: new Date(), updatedAt: new Date() },
      ],
    });

    it.each([
      ['recorded', 'si_added'],
      ['not recorded (only named)', null],
    ])('changePlan, the added plan %s', async (_label, paymentItemId) => {
      capture('get', '/v1/subscriptions/sub_123', several);
      const update = capture('post', '/v1/subscriptions/sub_123', several);
      const to = aPlan(product, { id: randomUUID(), interval: 'month', length: 1 });
      await provider.changePlan({
        subscription: heldBoth(paymentItemId),
        from: plan,
        to,
        proration: 'none',
        fromUnitAmount: 1100,
        toUnitAmount: 9900,
      });
      expect(update.body).toMatchObject({ 'items[0][id]': 'si_1', 'items[0][metadata][tollgatePlan]': to.id });
    });

    it('syncPrice and changeSeats', async () => {
      capture('get', '/v1/subscriptions/sub_123', several);
      const priced = capture('post', '/v1/subscriptions/sub_123', several);
      await provider.syncPrice(heldBoth(null), plan, 1300);
      expect(priced.body).toMatchObject({ 'items[0][id]': 'si_1', 'items[0][price_data][unit_amount]': '1300' });
      capture('get', '/v1/subscriptions/sub_123', several);
      const seats = capture('post', '/v1/subscriptions/sub_123', several);
      await provider.changeSeats(heldBoth('si_added'), plan, 5, 'none', 1100);
      expect(seats.body).toMatchObject({ 'items[0][id]': 'si_1', 'items[0][quantity]': '5' });
    });

    it("the first plan's Stripe price, or its name, finds its item wherever Stripe lists it", async () => {
      const pricedPlan = { ...plan, providerPlanId: 'price_1' };
      const named = {
        ...stripeSub,
        items: {
          data: [
            { id: 'si_other', quantity: 1, price: { id: 'price_x', product: 'prod_1' }, metadata: {} },
            { id: 'si_1', quantity: 3, price: { id: 'price_1', product: 'prod_1' }, metadata: { tollgatePlan: plan.id } },
          ],
        },
      };
      capture('get', '/v1/subscriptions/sub_123', named);
      const byPrice = capture('post', '/v1/subscriptions/sub_123', named);
      await provider.changeSeats(subscription, pricedPlan, 4, 'none', 1100);
      expect(byPrice.body).toMatchObject({ 'items[0][id]': 'si_1' });
      capture('get', '/v1/subscriptions/sub_123', named);
      const byName = capture('post', '/v1/subscriptions/sub_123', named);
      await provider.changeSeats(subscription, plan, 4, 'none', 1100);
      expect(byName.body).toMatchObject({ 'items[0][id]': 'si_1' });
    });
  });

  it('adds a plan of a Stripe price as a subscription item (no read needed), with its idempotency key, and returns its id', async () => {
    const priced = aPlan(product, { id: randomUUID(), providerPlanId: 'price_biz' });
    const created: { body?: Record<string, string>; key?: string } = {};
    nock(API)
      .post('/v1/subscription_items', (b: Record<string, string>) => ((created.body = b), true))
      .reply(200, function () {
        created.key = String(this.req.headers['idempotency-key']);
        return { id: 'si_new', object: 'subscription_item' };
      });
    const out = await provider.addPlan({
      subscription,
      plan: priced,
      quantity: 2,
      unitAmount: 3000,
      proration: 'create_prorations',
      requestId: 'req-1',
    });
    expect(out).toEqual({ paymentItemId: 'si_new' });
    expect(created.body).toEqual({
      subscription: 'sub_123',
      price: 'price_biz',
      quantity: '2',
      proration_behavior: 'create_prorations',
      'metadata[tollgatePlan]': priced.id,
    });
    expect(created.key).toBe(`tollgate-plan-add-req-1-${priced.id}`);
  });

  it("removes a plan's item: the recorded one, else found by its price, else (the first plan) the first item no added plan names", async () => {
    const priced = aPlan(product, { id: randomUUID(), providerPlanId: 'price_biz' });
    const del = (id: string) => capture('delete', `/v1/subscription_items/${id}`, { id, deleted: true }, true);
    const recorded = del('si_rec');
    await provider.removePlan({ subscription, plan: priced, quantity: 1, unitAmount: 0, proration: 'none', paymentItemId: 'si_rec' });
    expect(recorded.path).toContain('proration_behavior=none');
    const two = {
      ...stripeSub,
      items: { data: [...stripeSub.items.data, { id: 'si_2', quantity: 1, price: { id: 'price_biz', product: 'prod_1' } }] },
    };
    capture('get', '/v1/subscriptions/sub_123', two);
    const byPrice = del('si_2');
    await provider.removePlan({ subscription, plan: priced, quantity: 1, unitAmount: 0, proration: 'always_invoice' });
    expect(byPrice.path).toContain('proration_behavior=always_invoice');
    capture('get', '/v1/subscriptions/sub_123', two);
    const first = del('si_1');
    await provider.removePlan({ subscription, plan, quantity: 3, unitAmount: 0, proration: 'none' });
    expect(first.path).toContain('si_1');
    // An added plan at an inline price whose item was never recorded cannot be told apart: refused, nothing deleted.
    capture('get', '/v1/subscriptions/sub_123', two);
    const inline = aPlan(product, { id: randomUUID() });
    await expect(provider.removePlan({ subscription, plan: inline, quantity: 1, unitAmount: 0, proration: 'none' })).rejects.toMatchObject({
      code: 'PAYMENT_NOT_AVAILABLE',
    });
    // Its item named (metadata.tollgatePlan) and listed first: found by its name; the first plan's
    // removal takes the first plan's item, never the named one.
    const named = {
      ...stripeSub,
      items: {
        data: [
          { id: 'si_named', quantity: 1, price: { id: 'price_inline', product: 'prod_1' }, metadata: { tollgatePlan: inline.id } },
          ...stripeSub.items.data,
        ],
      },
    };
    capture('get', '/v1/subscriptions/sub_123', named);
    const byName = del('si_named');
    await provider.removePlan({ subscription, plan: inline, quantity: 1, unitAmount: 0, proration: 'none' });
    expect(byName.path).toContain('si_named');
    capture('get', '/v1/subscriptions/sub_123', named);
    const firstPlan = del('si_1');
    const holding = {
      ...subscription,
      addedPlans: [
        {
          id: randomUUID(),
          planId: inline.id,
          quantity: 1,
          lineItemIds: [],
          paymentItemId: null,
          createdAt: new Date(),
          updatedAt: new Date(),
        },
      ],
    };
    await provider.removePlan({ subscription: holding, plan, quantity: 3, unitAmount: 0, proration: 'none' });
    expect(firstPlan.path).toContain('si_1');
  });

  it("sets an added plan's seats on its item", async () => {
    const update = capture('post', '/v1/subscription_items/si_rec', { id: 'si_rec' });
    await provider.setPlanSeats({ subscription, plan, quantity: 4, unitAmount: 0, proration: 'none', paymentItemId: 'si_rec' });
    expect(update.body).toEqual({ quantity: '4', proration_behavior: 'none' });
  });

  it('cancels now (invoicing what is not invoiced yet: the metered usage), at period end, and reactivates', async () => {
    const now = capture('delete', '/v1/subscriptions/sub_123', { ...stripeSub, status: 'canceled' }, true);
    await provider.cancel(subscription, 'now');
    expect(`${now.path} ${JSON.stringify(now.body ?? {})}`).toMatch(/invoice_now(=|":")true/);
    const end = capture('post', '/v1/subscriptions/sub_123', stripeSub);
    await provider.cancel(subscription, 'end');
    expect(end.body).toEqual({ cancel_at_period_end: 'true' });
    const again = capture('post', '/v1/subscriptions/sub_123', stripeSub);
    await provider.reactivate(subscription);
    expect(again.body).toEqual({ cancel_at_period_end: 'false' });
  });

  it('applies a coupon to the discounts it keeps, once, and removes it again', async () => {
    const held = { id: 'di_old', object: 'discount', source: { coupon: 'OLD', type: 'coupon' }, promotion_code: null };
    const read = capture('get', '/v1/subscriptions/sub_123', { ...stripeSub, discounts: [held] }, true);
    const add = capture('post', '/v1/subscriptions/sub_123', stripeSub);
    expect(await provider.applyCoupon(subscription, 'WELCOME10')).toEqual({});
    expect(decodeURIComponent(read.path as string)).toContain('expand[0]=discounts');
    expect(add.body).toEqual({ 'discounts[0][discount]': 'di_old', 'discounts[1][coupon]': 'WELCOME10' });

    const applied = { id: 'di_new', object: 'discount', coupon: { id: 'WELCOME10' }, promotion_code: null };
    capture('get', '/v1/subscriptions/sub_123', { ...stripeSub, discounts: [held, applied] }, true);
    expect(await provider.applyCoupon(subscription, 'WELCOME10')).toEqual({});

    capture('get', '/v1/subscriptions/sub_123', { ...stripeSub, discounts: [held] }, true);
    const promo = capture('post', '/v1/subscriptions/sub_123', stripeSub);
    await provider.applyCoupon(subscription, 'promo_1');
    expect(promo.body).toEqual({ 'discounts[0][discount]': 'di_old', 'discounts[1][promotion_code]': 'promo_1' });

    capture('get', '/v1/subscriptions/sub_123', { ...stripeSub, discounts: [held, applied] }, true);
    const remove = capture('post', '/v1/subscriptions/sub_123', stripeSub);
    expect(await provider.removeCoupon(subscription, 'WELCOME10')).toEqual({});
    expect(remove.body).toEqual({ 'discounts[0][discount]': 'di_old' });

    capture('get', '/v1/subscriptions/sub_123', { ...stripeSub, discounts: [held] }, true);
    await expect(provider.removeCoupon(subscription, 'WELCOME10')).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });

  it('removes the last coupon with an empty discount list', async () => {
    const applied = { id: 'di_new', object: 'discount', coupon: { id: 'WELCOME10' }, promotion_code: null };
    capture('get', '/v1/subscriptions/sub_123', { ...stripeSub, discounts: [applied] }, true);
    const remove = capture('post', '/v1/subscriptions/sub_123', stripeSub);
    await provider.removeCoupon(subscription, 'WELCOME10');
    expect(remove.body).toEqual({ discounts: '' });
  });

  it('lists invoices and reads the default payment method', async () => {
    const list = capture(
      'get',
      '/v1/invoices',
      {
        object: 'list',
        has_more: true,
        data: [
          { id: 'in_2', object: 'invoice' },
          { id: 'in_1', object: 'invoice' },
        ],
      },
      true,
    );
    expect(await provider.listInvoices(subscription, [])).toEqual({
      first: 'in_2',
      last: 'in_1',
      hasMore: true,
      data: [
        { id: 'in_2', object: 'invoice' },
        { id: 'in_1', object: 'invoice' },
      ],
    });
    expect(list.path).toContain('subscription=sub_123');
    const pm = { id: 'pm_1', object: 'payment_method', type: 'card', card: { last4: '4242' } };
    const retrieve = capture('get', '/v1/subscriptions/sub_123', { ...stripeSub, default_payment_method: pm }, true);
    expect(await provider.paymentMethod(subscription, customer, [])).toEqual(pm);
    expect(decodeURIComponent(retrieve.path as string)).toContain('expand[0]=default_payment_method');
  });

  it('reports Stripe failures as PAYMENT_PROVIDER_FAILED, and refuses subscriptions Stripe does not hold', async () => {
    nock(API)
      .post('/v1/billing_portal/sessions')
      .reply(400, { error: { type: 'invalid_request_error', message: 'No such customer' } });
    await expect(provider.portalLink(subscription, customer)).rejects.toMatchObject({
      code: 'PAYMENT_PROVIDER_FAILED',
      message: expect.stringContaining('No such customer'),
    });
    const free = { ...subscription, paymentProvider: 'none', paymentSubscriptionId: null };
    await expect(provider.portalLink(free, customer)).rejects.toMatchObject({ code: 'PAYMENT_NOT_AVAILABLE' });
    await provider.cancel(free, 'now');
    expect(await provider.listInvoices(free, [])).toEqual({ first: null, last: null, hasMore: false, data: [] });
  });
});

describe('Stripe status mapping', () => {
  it('maps every Stripe status', () => {
    expect(
      ['active', 'trialing', 'past_due', 'unpaid', 'canceled', 'incomplete', 'incomplete_expired', 'paused', 'future_value'].map(
        domainStatus,
      ),
    ).toEqual(['ACTIVE', 'TRIALING', 'PAST_DUE', 'UNPAID', 'CANCELED', 'PAST_DUE', 'CANCELED', 'PAUSED', 'PAST_DUE']);
  });
});
