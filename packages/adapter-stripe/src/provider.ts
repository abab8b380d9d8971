import type Stripe from 'stripe';
import {
  DomainError,
  ErrorCodes,
  isPerSeat,
  minimumSeats,
  type BillingDocument,
  type CheckoutRequest,
  type Customer,
  type InvoiceList,
  type MeterEvent,
  type MeterEventOutcome,
  type PaymentProvider,
  type Plan,
  type PlanChangeRequest,
  type PlanItemRequest,
  type Proration,
  type ProviderOutcome,
  type ProviderPaymentMethod,
  type Subscription,
} from '@tollgate/core';

export interface StripeProviderConfig {
  /** Where the customer returns from Stripe's portal and setup pages. */
  publicUrl: string;
}

/** The narrow view of a Stripe subscription we read (API 2026-10: the period lives on items). */
export interface StripeSubscriptionView {
  id: string;
  status: string;
  customer: string | { id: string };
  cancel_at_period_end: boolean;
  canceled_at: number | null;
  current_period_start?: number;
  current_period_end?: number;
  default_payment_method?: string | { id: string; object: string } | null;
  items: {
    has_more?: boolean;
    data: {
      id: string;
      quantity?: number;
      /** `tollgatePlan`: the plan Tollgate made or moved the item for. */
      metadata?: Record<string, string> | null;
      current_period_start?: number;
      current_period_end?: number;
      price: {
        id: string;
        product: string | { id: string };
        /** Minor units per seat per interval (null: tiered, or a decimal amount). */
        unit_amount?: number | null;
        currency?: string;
        recurring?: { interval: string; interval_count: number } | null;
      };
    }[];
  };
}

/** A Stripe discount as we read it: its coupon under `source` (recent API versions) or directly (older ones). */
interface StripeDiscountView {
  id: string;
  coupon?: string | { id: string } | null;
  source?: { coupon?: string | { id: string } | null } | null;
  promotion_code?: string | { id: string } | null;
}

const idOf = (v: string | { id: string } | null | undefined) => (typeof v === 'string' ? v : (v?.id ?? null));

/** Fails clearly for a subscription Stripe does not hold (a free one, or one from the sandbox). */
function stripeId(s: Subscription): string {
  if (s.paymentProvider !== 'stripe' || !s.paymentSubscriptionId) {
    throw new DomainError(ErrorCodes.PAYMENT_NOT_AVAILABLE, 'this subscription is not billed through Stripe');
  }
  return s.paymentSubscriptionId;
}

function stripeCustomer(c: Customer): string {
  if (!c.paymentCustomerId) throw new DomainError(ErrorCodes.PAYMENT_NOT_AVAILABLE, 'the customer has no Stripe customer');
  return c.paymentCustomerId;
}

/** What a Stripe call failure becomes: the provider's message, without keys or request details. */
async function call<T>(what: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    if (e instanceof DomainError) throw e;
    const err = e as { message?: string; detail?: { message?: string } };
    const message = [err.message ?? 'unknown error', err.detail?.message].filter(Boolean).join(': ');
    throw new DomainError(ErrorCodes.PAYMENT_PROVIDER_FAILED, `Stripe ${what} failed: ${message}`);
  }
}

const interval = (plan: Plan) => ({ interval: plan.interval, interval_count: plan.length });

/** The payment port over Stripe: Checkout Sessions, the billing portal, subscriptions and invoices. */
export class StripePaymentProvider implements PaymentProvider {
  readonly name = 'stripe';

  constructor(
    private readonly stripe: Stripe,
    private readonly config: StripeProviderConfig,
  ) {}

  async checkoutLink(req: CheckoutRequest): Promise<{ url: string; providerSessionId: string }> {
    const o = req.options;
    const perSeat = isPerSeat(req.plan);
    const params: Stripe.Checkout.SessionCreateParams = {
      mode: 'subscription',
      client_reference_id: req.sessionId,
      success_url: req.successUrl,
      cancel_url: req.cancelUrl,
      currency: o.currency.toLowerCase(),
      line_items: [
        {
          ...(req.plan.providerPlanId
            ? { price: req.plan.providerPlanId }
            : {
                price_data: {
                  currency: o.currency.toLowerCase(),
                  unit_amount: req.unitAmount,
                  recurring: interval(req.plan),
                  product_data: { name: `${req.product.displayName} ${req.plan.displayName}` },
                },
              }),
          quantity: o.quantity,
          ...(perSeat && o.changeQuantity
            ? {
                // Stripe takes up to 10 000; never more than Tollgate would record (a paid count refused).
                adjustable_quantity: {
                  enabled: true,
                  minimum: minimumSeats(req.plan),
                  maximum: Math.max(minimumSeats(req.plan), Math.min(10_000, req.maxSeats ?? 10_000)),
                },
              }
            : {}),
        },
        // The other plans of a checkout of several plans (a cart's): a price each, one subscription.
        ...(req.extraItems ?? []).map((x) => ({
          ...(x.plan.providerPlanId
            ? { price: x.plan.providerPlanId }
            : {
                price_data: {
                  currency: o.currency.toLowerCase(),
                  unit_amount: x.unitAmount,
                  recurring: interval(x.plan),
                  product_data: { name: `${req.product.displayName} ${x.plan.displayName}` },
                },
              }),
          quantity: x.quantity,
        })),
      ],
      ...(o.promoCode ? { discounts: [{ promotion_code: o.promoCode }] } : {}),
      ...(o.allowPromoCode ? { allow_promotion_codes: true } : {}),
      ...(o.customerId ? { customer: o.customerId } : o.customerEmail ? { customer_email: o.customerEmail } : {}),
      ...(o.automaticTax ? { automatic_tax: { enabled: true } } : {}),
      metadata: { tollgateSession: req.sessionId, granteeId: req.granteeId, member: req.member },
      subscription_data: {
        metadata: { tollgateSession: req.sessionId, granteeId: req.granteeId, member: req.member },
        ...(req.plan.trialDays ? { trial_period_days: req.plan.trialDays } : {}),
      },
    };
    // One Stripe session per Tollgate session: asking again (a deferred link followed twice) gives
    // the same one. Its id is kept, so a later ask resumes it (`checkoutUrl`) rather than sending
    // this key again with terms edited since (which Stripe refuses).
    const session = await call('checkout session', () =>
      this.stripe.checkout.sessions.create(params, { idempotencyKey: `tollgate-checkout-${req.sessionId}` }),
    );
    if (!session.url) throw new DomainError(ErrorCodes.PAYMENT_PROVIDER_FAILED, 'Stripe returned a checkout session without a URL');
    return { url: session.url, providerSessionId: session.id };
  }

  /** The page of a Checkout Session made earlier, while it is open (null once paid or expired). */
  async checkoutUrl(providerSessionId: string): Promise<string | null> {
    const session = await call('checkout session retrieve', () => this.stripe.checkout.sessions.retrieve(providerSessionId));
    return session.status === 'open' && session.url ? session.url : null;
  }

  async updatePaymentLink(s: Subscription, c: Customer): Promise<{ url: string }> {
    const subscription = stripeId(s);
    const session = await call('setup session', () =>
      this.stripe.checkout.sessions.create({
        mode: 'setup',
        customer: stripeCustomer(c),
        currency: s.currency.toLowerCase(),
        setup_intent_data: { metadata: { subscription_id: subscription } },
        success_url: `${this.config.publicUrl}/`,
        cancel_url: `${this.config.publicUrl}/`,
      }),
    );
    return { url: session.url as string };
  }

  async portalLink(s: Subscription, c: Customer): Promise<{ url: string }> {
    stripeId(s);
    const session = await call('billing portal session', () =>
      this.stripe.billingPortal.sessions.create({ customer: stripeCustomer(c), return_url: `${this.config.publicUrl}/` }),
    );
    return { url: session.url };
  }

  async cancelLink(s: Subscription, c: Customer): Promise<{ url: string }> {
    const subscription = stripeId(s);
    const session = await call('billing portal session', () =>
      this.stripe.billingPortal.sessions.create({
        customer: stripeCustomer(c),
        return_url: `${this.config.publicUrl}/`,
        flow_data: { type: 'subscription_cancel', subscription_cancel: { subscription } },
      }),
    );
    return { url: session.url };
  }

  async purchaseCompleted(): Promise<ProviderOutcome> {
    return {};
  }

  /**
   * The Stripe subscription item of the subscription's first plan (`plan`), as `itemOf` tells it:
   * among the items no added plan's record claims nor names (`metadata.tollgatePlan`), the one of
   * the plan's Stripe price, else the one naming the plan, else the first. Never an added plan's
   * item: on a subscription of several plans a plan change, a price sync or a seat change of the
   * first plan must not land on another plan's item (which Stripe may list first).
   */
  private async item(s: Subscription, plan: Plan | null) {
    const sub = (await call('subscription retrieve', () =>
      this.stripe.subscriptions.retrieve(stripeId(s)),
    )) as unknown as StripeSubscriptionView;
    const item = planItem(sub.items.data, s, plan, true);
    if (!item)
      throw new DomainError(ErrorCodes.PAYMENT_PROVIDER_FAILED, "the Stripe subscription has no item of the subscription's first plan");
    return item;
  }

  async changePlan(req: PlanChangeRequest): Promise<ProviderOutcome> {
    const id = stripeId(req.subscription);
    const item = await this.item(req.subscription, req.from);
    const price = req.to.providerPlanId
      ? { price: req.to.providerPlanId }
      : {
          price_data: {
            currency: req.subscription.currency.toLowerCase(),
            unit_amount: req.toUnitAmount,
            recurring: interval(req.to),
            product: idOf(item.price.product) as string,
          },
        };
    await call('subscription update', () =>
      this.stripe.subscriptions.update(id, {
        // The item names its plan too: an inline price names none, and the re-sync follows a change
        // whose write here was lost by this name.
        items: [{ id: item.id, ...price, metadata: { tollgatePlan: req.to.id } }],
        proration_behavior: req.proration,
        metadata: { tollgatePlan: req.to.id },
      }),
    );
    return {};
  }

  /** The subscription item moves to the plan's current price; no proration (the next invoice bills it). */
  async syncPrice(s: Subscription, plan: Plan, unitAmount: number): Promise<ProviderOutcome> {
    const id = stripeId(s);
    const item = await this.item(s, plan);
    const price = plan.providerPlanId
      ? { price: plan.providerPlanId }
      : {
          price_data: {
            currency: s.currency.toLowerCase(),
            unit_amount: unitAmount,
            recurring: interval(plan),
            product: idOf(item.price.product) as string,
          },
        };
    await call('subscription update', () =>
      this.stripe.subscriptions.update(id, {
        items: [{ id: item.id, ...price, metadata: { tollgatePlan: plan.id } }],
        proration_behavior: 'none',
      }),
    );
    return {};
  }

  async changeSeats(s: Subscription, plan: Plan, quantity: number, proration: Proration, _unitAmount: number): Promise<ProviderOutcome> {
    const id = stripeId(s);
    const item = await this.item(s, plan);
    await call('subscription update', () =>
      this.stripe.subscriptions.update(id, { items: [{ id: item.id, quantity }], proration_behavior: proration }),
    );
    return {};
  }

  /** The price of a plan's new subscription item: its Stripe price, else made inline on the subscription's product. */
  private priceOf(req: PlanItemRequest, product: string) {
    return req.plan.providerPlanId
      ? { price: req.plan.providerPlanId }
      : {
          price_data: {
            currency: req.subscription.currency.toLowerCase(),
            unit_amount: req.unitAmount,
            recurring: interval(req.plan),
            product,
          },
        };
  }

  /** Idempotency key of one plan's call of one request (absent request id: none, Stripe's own retry keys only). */
  private key(what: string, req: PlanItemRequest) {
    return req.requestId ? { idempotencyKey: `tollgate-${what}-${req.requestId}-${req.plan.id}` } : {};
  }

  /**
   * The Stripe subscription item of a plan the subscription holds: the one recorded for it, else as
   * `planItem` tells it (the first plan's may fall back on an item naming no plan). None: the plan's
   * item cannot be told apart (400, nothing changed at Stripe).
   */
  private async itemOf(req: PlanItemRequest): Promise<string> {
    if (req.paymentItemId) return req.paymentItemId;
    const sub = (await call('subscription retrieve', () =>
      this.stripe.subscriptions.retrieve(stripeId(req.subscription)),
    )) as unknown as StripeSubscriptionView;
    const item = planItem(sub.items.data, req.subscription, req.plan, req.plan.id === req.subscription.planId);
    if (!item)
      throw new DomainError(
        ErrorCodes.PAYMENT_NOT_AVAILABLE,
        `the Stripe subscription item of plan ${req.plan.id} is not known (a plan bought in a cart at an inline price): change it in Stripe`,
      );
    return item.id;
  }

  /**
   * A plan added to the Stripe subscription: a subscription item of its price and seats, prorated as
   * asked (`proration_behavior`); its id is kept on the added plan.
   */
  async addPlan(req: PlanItemRequest): Promise<ProviderOutcome> {
    const id = stripeId(req.subscription);
    // An inline price needs a product: the subscription's first item's, as a plan change does.
    const product = req.plan.providerPlanId ? '' : (idOf((await this.item(req.subscription, null)).price.product) as string);
    const item = await call('subscription item create', () =>
      this.stripe.subscriptionItems.create(
        {
          subscription: id,
          ...this.priceOf(req, product),
          quantity: req.quantity,
          proration_behavior: req.proration,
          metadata: { tollgatePlan: req.plan.id },
        },
        this.key('plan-add', req),
      ),
    );
    return { paymentItemId: item.id };
  }

  /** A plan removed from the Stripe subscription: its subscription item deleted, prorated as asked. */
  async removePlan(req: PlanItemRequest): Promise<ProviderOutcome> {
    const item = await this.itemOf(req);
    await call('subscription item delete', () =>
      this.stripe.subscriptionItems.del(item, { proration_behavior: req.proration }, this.key('plan-remove', req)),
    );
    return {};
  }

  /** An added plan's seats: its subscription item's quantity, prorated as asked. */
  async setPlanSeats(req: PlanItemRequest): Promise<ProviderOutcome> {
    const item = await this.itemOf(req);
    await call('subscription item update', () =>
      this.stripe.subscriptionItems.update(
        item,
        { quantity: req.quantity, proration_behavior: req.proration },
        this.key(`plan-seats-${req.quantity}`, req),
      ),
    );
    return {};
  }

  /**
   * One Stripe meter event (`event_name` is the meter's slug; Stripe dedupes on `identifier`, the
   * ledger entry's id). Stripe down (5xx), rate limiting (429), a lock conflict (409) and the
   * network are retryable; any other refusal (400, 401, 403, 404: an unknown customer or meter, a
   * bad key) will not change by trying again.
   */
  async sendMeterEvent(e: MeterEvent): Promise<MeterEventOutcome> {
    try {
      await this.stripe.billing.meterEvents.create({
        event_name: e.eventName,
        payload: { stripe_customer_id: e.customerId, value: e.value },
        identifier: e.identifier,
        timestamp: Math.floor(e.timestamp.getTime() / 1000),
      });
      return { ok: true };
    } catch (error) {
      const err = error as { statusCode?: number; message?: string; code?: string };
      const status = err.statusCode;
      // A resend Stripe recognises as one it already has (same identifier): it was taken the first time.
      if (status === 400 && /duplicate/i.test(`${err.code ?? ''} ${err.message ?? ''}`)) return { ok: true };
      const retryable = status === undefined || status >= 500 || status === 429 || status === 409;
      return { ok: false, retryable, message: `Stripe meter event failed${status ? ` (${status})` : ''}: ${err.message ?? String(error)}` };
    }
  }

  async cancel(s: Subscription, when: 'now' | 'end'): Promise<void> {
    if (s.paymentProvider !== 'stripe' || !s.paymentSubscriptionId) return;
    const id = s.paymentSubscriptionId;
    // Canceled now, with a final invoice of what is not invoiced yet: the period's metered usage
    // (Tollgate closes it as billed here; without `invoice_now`, Stripe drops it).
    if (when === 'now') await call('subscription cancel', () => this.stripe.subscriptions.cancel(id, { invoice_now: true }));
    else await call('subscription update', () => this.stripe.subscriptions.update(id, { cancel_at_period_end: true }));
  }

  async reactivate(s: Subscription): Promise<void> {
    if (s.paymentProvider !== 'stripe' || !s.paymentSubscriptionId) return;
    const id = s.paymentSubscriptionId;
    await call('subscription update', () => this.stripe.subscriptions.update(id, { cancel_at_period_end: false }));
  }

  /**
   * Adds the coupon to the Stripe subscription's discounts (keeping the ones it has): `code` is a
   * Stripe coupon id, or a promotion code's id (`promo_...`).
   */
  async applyCoupon(s: Subscription, code: string): Promise<ProviderOutcome> {
    const id = stripeId(s);
    const current = await this.discounts(id);
    if (current.some((d) => d.code === code)) return {};
    const added = code.startsWith('promo_') ? { promotion_code: code } : { coupon: code };
    await call('subscription update', () =>
      this.stripe.subscriptions.update(id, { discounts: [...current.map((d) => ({ discount: d.id })), added] }),
    );
    return {};
  }

  /** Removes the discount of that coupon (or promotion code) from the Stripe subscription. */
  async removeCoupon(s: Subscription, code: string): Promise<ProviderOutcome> {
    const id = stripeId(s);
    const current = await this.discounts(id);
    if (!current.some((d) => d.code === code))
      throw new DomainError(ErrorCodes.NOT_FOUND, `coupon ${code} is not applied to this subscription`);
    const kept = current.filter((d) => d.code !== code).map((d) => ({ discount: d.id }));
    await call('subscription update', () =>
      // An empty list would not be sent at all: Stripe clears a list given as ''.
      this.stripe.subscriptions.update(id, { discounts: kept.length ? kept : '' }),
    );
    return {};
  }

  /** The subscription's discounts, each with the coupon (or promotion code) it came from. */
  private async discounts(subscriptionId: string): Promise<{ id: string; code: string }[]> {
    const sub = (await call('subscription retrieve', () =>
      this.stripe.subscriptions.retrieve(subscriptionId, { expand: ['discounts'] }),
    )) as unknown as { discounts?: (string | StripeDiscountView)[] };
    return (sub.discounts ?? [])
      .filter((d): d is StripeDiscountView => typeof d === 'object' && d !== null)
      .map((d) => ({ id: d.id, code: idOf(d.promotion_code) ?? idOf(d.source?.coupon ?? d.coupon) ?? '' }));
  }

  async listInvoices(s: Subscription, _stored: BillingDocument[]): Promise<InvoiceList> {
    if (s.paymentProvider !== 'stripe' || !s.paymentSubscriptionId) return { first: null, last: null, hasMore: false, data: [] };
    const id = s.paymentSubscriptionId;
    const list = await call('invoice list', () => this.stripe.invoices.list({ subscription: id, limit: 100 }));
    const data = list.data as unknown as InvoiceList['data'];
    return { first: data[0]?.id ?? null, last: data[data.length - 1]?.id ?? null, hasMore: list.has_more, data };
  }

  async paymentMethod(s: Subscription, c: Customer, _stored: BillingDocument[]): Promise<ProviderPaymentMethod | null> {
    if (s.paymentProvider !== 'stripe' || !s.paymentSubscriptionId) return null;
    const id = s.paymentSubscriptionId;
    const sub = (await call('subscription retrieve', () =>
      this.stripe.subscriptions.retrieve(id, { expand: ['default_payment_method'] }),
    )) as unknown as StripeSubscriptionView;
    const pm = sub.default_payment_method;
    if (pm && typeof pm === 'object') return pm as unknown as ProviderPaymentMethod;
    if (typeof pm === 'string')
      return (await call('payment method retrieve', () => this.stripe.paymentMethods.retrieve(pm))) as unknown as ProviderPaymentMethod;
    if (!c.paymentCustomerId) return null;
    const customerId = c.paymentCustomerId;
    const customer = (await call('customer retrieve', () =>
      this.stripe.customers.retrieve(customerId, { expand: ['invoice_settings.default_payment_method'] }),
    )) as unknown as {
      invoice_settings?: { default_payment_method?: unknown };
    };
    const fallback = customer.invoice_settings?.default_payment_method;
    return fallback && typeof fallback === 'object' ? (fallback as ProviderPaymentMethod) : null;
  }
}

/**
 * The item of `plan` among a Stripe subscription's items (`item` and `itemOf` both ask this): of
 * the items no added plan's record claims nor names (`metadata.tollgatePlan`, `plan` itself
 * aside), the one of the plan's Stripe price, else the one naming the plan; for the first plan
 * (`first`), else the first naming no plan, else the first left. So a change of one plan never lands
 * on another plan's item, whichever Stripe lists first.
 */
function planItem<I extends { id: string; price: { id: string }; metadata?: Record<string, string> | null }>(
  items: I[],
  s: Subscription,
  plan: Plan | null,
  first: boolean,
): I | undefined {
  const recorded = new Set(s.addedPlans.map((a) => a.paymentItemId).filter(Boolean));
  const added = new Set(s.addedPlans.map((a) => a.planId).filter((p) => p !== plan?.id));
  const free = items.filter((i) => !recorded.has(i.id) && !added.has(i.metadata?.tollgatePlan ?? ''));
  return (
    (plan?.providerPlanId ? free.find((i) => i.price.id === plan.providerPlanId) : undefined) ??
    (plan ? free.find((i) => i.metadata?.tollgatePlan === plan.id) : undefined) ??
    (first ? (free.find((i) => !i.metadata?.tollgatePlan) ?? free[0]) : undefined)
  );
}
