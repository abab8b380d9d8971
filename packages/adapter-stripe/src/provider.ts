import type Stripe from 'stripe';
import {
  DomainError,
  ErrorCodes,
  isPerSeat,
  minimumSeats,
  currencyOptionCharges,
  currentPrice,
  isLiveMeteredLine,
  usagePriceOption,
  type BillingDocument,
  type CheckoutRequest,
  type Customer,
  type InvoiceList,
  type LineItem,
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
        /** `usage_type: 'metered'`: a price billing a meter's usage (a plan's metered line item), not seats. */
        recurring?: { interval: string; interval_count: number; usage_type?: string } | null;
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

/** A Stripe subscription item billing a meter's usage (a metered price): never a plan's seats. */
export const isMeteredItem = (i: { price: { recurring?: { usage_type?: string } | null } }): boolean =>
  i.price.recurring?.usage_type === 'metered';

/**
 * The form of the stand-in a catalog save gives a price saved without a provider price id
 * (`price_` and the first 14 hex digits of a price's id: plan-pricing.ts, catalog-file.ts), which
 * no Stripe account holds (a Stripe price id is `price_` and some 24 letters and digits). Any id of
 * this form is a stand-in, the price's own or another's: a plan's saved JSON saved again as a new
 * plan keeps the stand-in of the price it was copied from.
 */
const STAND_IN = /^price_[0-9a-f]{14}$/;

/**
 * The Stripe price a vendor gave a metered line item (its current price's `paymentPriceId`, the
 * published `stripePriceId`); null when it has none: an empty id, or a stand-in (`STAND_IN`).
 */
export function stripeMeteredPrice(li: LineItem): string | null {
  const price = currentPrice(li) ?? li.prices[0];
  const id = price?.paymentPriceId.trim() ?? '';
  if (!price || !id || STAND_IN.test(id)) return null;
  return id;
}

/** Whether Tollgate's close charges anything for a metered line item in the currency (core's rule for an option). */
const charges = (li: LineItem, currency: string): boolean => {
  const o = usagePriceOption(li, currency);
  return !!o && currencyOptionCharges(o);
};

/**
 * The Stripe prices that bill a plan's usage at Stripe: per meter, the Stripe price of the first
 * live metered line item on it (the one Tollgate's period close bills; a later line of the same
 * meter is never billed, and a second price on one meter would bill its events twice). `missing`:
 * the line items that charge for usage in `currency` and have no Stripe price, which Stripe would
 * never bill (the meter events Tollgate sends would hit no price).
 */
export function meteredPrices(plan: Plan, currency: string): { prices: string[]; missing: LineItem[] } {
  const meters = new Set<string>();
  const prices: string[] = [];
  const missing: LineItem[] = [];
  for (const li of plan.lineItems) {
    if (!isLiveMeteredLine(li) || !li.meter || meters.has(li.meter.slug)) continue;
    meters.add(li.meter.slug);
    const price = stripeMeteredPrice(li);
    if (price) {
      if (!prices.includes(price)) prices.push(price);
    } else if (charges(li, currency)) missing.push(li);
  }
  return { prices, missing };
}

/** Why Stripe cannot bill a plan's usage: its first metered line item without a Stripe price, and what to set. */
const unbilledUsage = (plan: Plan, li: LineItem): string =>
  `the plan ${plan.displayName} cannot be billed through Stripe: its metered line item ${li.slug} (meter ${li.meter?.slug ?? li.slug}) ` +
  `has no Stripe price, so Stripe would bill none of its usage. Create a metered Stripe price on the Stripe meter whose event name is ` +
  `${li.meter?.slug ?? li.slug}, priced as the line item is, and set it as the paymentPriceId of the line item's price (POST /api/plans/save)`;

/**
 * Why Stripe cannot sell `plan` in `currency` (its first metered line item that charges for usage
 * and has no Stripe price: Stripe would bill none of that usage), or undefined when it can. The one
 * rule of the checkout's and the plan change's refusals and of the port's `unsellable`, which the
 * pricing tables' links, the switch list and the move decision ask.
 */
export function unsellableAtStripe(plan: Plan, currency: string): string | undefined {
  const missing = meteredPrices(plan, currency).missing[0];
  return missing ? unbilledUsage(plan, missing) : undefined;
}

/**
 * The proration a metered item is deleted with: never `none`, which would drop the usage it
 * billed so far (flexible billing mode bills it on deletion, unless `proration_behavior` is
 * `none`), whatever the change asked for the plan's price; `always_invoice` bills it at once.
 */
const meteredDeletion = (proration: Proration): Proration => (proration === 'none' ? 'create_prorations' : proration);

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
    // The plan's usage is billed by Stripe from the meter events Tollgate sends: each metered line
    // item's Stripe price is an item of the subscription (a metered price takes no quantity; Checkout
    // cannot make one inline). One that charges and has none would sell usage never billed: refused
    // (400 naming planId), before Stripe is asked; test-mode checkouts show it first.
    const why = unsellableAtStripe(req.plan, o.currency);
    if (why) throw new DomainError(ErrorCodes.VALIDATION_FAILED, `planId: ${why}`, [{ property: 'planId', error: why }]);
    const metered = meteredPrices(req.plan, o.currency);
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
        // The first plan's metered prices, last: the seat line stays the first (the completion reads its quantity).
        ...metered.prices.map((price) => ({ price })),
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
    return (await this.itemAndSubscription(s, plan)).item;
  }

  /** `item`, with the Stripe subscription it was read from. */
  private async itemAndSubscription(s: Subscription, plan: Plan | null) {
    const sub = (await call('subscription retrieve', () =>
      this.stripe.subscriptions.retrieve(stripeId(s)),
    )) as unknown as StripeSubscriptionView;
    const item = planItem(sub.items.data, s, plan, true);
    if (!item)
      throw new DomainError(ErrorCodes.PAYMENT_PROVIDER_FAILED, "the Stripe subscription has no item of the subscription's first plan");
    return { item, sub };
  }

  /** Why a Stripe sale of the plan in the currency would leave usage unbilled (`unsellableAtStripe`). */
  unsellable(plan: Plan, currency: string): string | undefined {
    return unsellableAtStripe(plan, currency);
  }

  /**
   * The metered items to delete and the metered prices to add when `target` becomes the
   * subscription's first plan (Tollgate meters the first plan's usage alone): of the metered items
   * no plan claims (`keep`: the plan items the change leaves alone; an added plan's, or one naming
   * a plan), those of prices the target does not bill go, and the target's prices the subscription
   * lacks come.
   */
  private meteredSwap(sub: StripeSubscriptionView, s: Subscription, keep: string[], target: Plan) {
    const prices = meteredPrices(target, s.currency).prices;
    const claimed = claimedItems(sub.items.data, s);
    const held = sub.items.data.filter((i) => isMeteredItem(i) && !keep.includes(i.id) && !claimed.has(i.id) && !i.metadata?.tollgatePlan);
    return {
      drop: held.filter((i) => !prices.includes(i.price.id)).map((i) => i.id),
      add: prices.filter((p) => !held.some((i) => i.price.id === p)),
    };
  }

  /**
   * Deletes metered items, each in a call of its own prorated as `meteredDeletion` says: deleted in
   * the plan change's own update with `proration_behavior: none`, Stripe would never bill the usage
   * they billed so far, which Tollgate's close records as billed. Called after the change's update
   * was taken, so it never throws: the move is made at Stripe and Tollgate writes it; an item Stripe
   * did not delete is returned as the outcome's `leftover` (logged as an error by the use case, to
   * delete in Stripe), nothing undone. An item Stripe answers `resource_missing` for is gone (a
   * retried DELETE whose first try was taken: Stripe ignores idempotency keys on DELETE).
   */
  private async dropMetered(items: string[], proration: Proration, key?: (item: string) => object): Promise<ProviderOutcome> {
    const left: string[] = [];
    let reason = '';
    for (const item of items)
      await call('subscription item delete', () =>
        this.stripe.subscriptionItems
          .del(item, { proration_behavior: meteredDeletion(proration) }, key?.(item) ?? {})
          .catch((e: unknown) => {
            if ((e as { code?: string }).code === 'resource_missing') return null;
            throw e;
          }),
      ).catch((e: unknown) => {
        left.push(item);
        reason = (e as Error).message;
      });
    return left.length
      ? {
          leftover: {
            items: left,
            reason:
              `the change was made at Stripe, but the old first plan's metered items ${left.join(', ')} were not deleted (${reason}): ` +
              'delete them in Stripe, prorated (with proration none Stripe bills none of their usage so far); left, a meter both ' +
              'prices bill has its events billed twice',
          },
        }
      : {};
  }

  async changePlan(req: PlanChangeRequest): Promise<ProviderOutcome> {
    const id = stripeId(req.subscription);
    // The target's usage is billed at Stripe as a checkout's is (its metered prices); one it
    // charges for without a Stripe price is refused before Stripe is told anything.
    const why = unsellableAtStripe(req.to, req.subscription.currency);
    if (why) throw new DomainError(ErrorCodes.PAYMENT_NOT_AVAILABLE, why);
    const { item, sub } = await this.itemAndSubscription(req.subscription, req.from);
    // The metered items move with the plan: the target's come in the update, the old ones go after
    // it (their usage billed so far, whatever proration the change asked).
    const metered = this.meteredSwap(sub, req.subscription, [item.id], req.to);
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
        items: [{ id: item.id, ...price, metadata: { tollgatePlan: req.to.id } }, ...metered.add.map((p) => ({ price: p }))],
        proration_behavior: req.proration,
        metadata: { tollgatePlan: req.to.id },
      }),
    );
    // Idempotency keys are ignored on DELETE (Stripe); a retried deletion's 404 counts as done.
    return this.dropMetered(metered.drop, req.proration);
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
    return (await this.itemOfIn(req)).item;
  }

  /** `itemOf`, with the Stripe subscription when it was read for it (a recorded item needs no read). */
  private async itemOfIn(req: PlanItemRequest, read = false): Promise<{ item: string; sub?: StripeSubscriptionView }> {
    if (req.paymentItemId && !read) return { item: req.paymentItemId };
    const sub = (await call('subscription retrieve', () =>
      this.stripe.subscriptions.retrieve(stripeId(req.subscription)),
    )) as unknown as StripeSubscriptionView;
    if (req.paymentItemId) return { item: req.paymentItemId, sub };
    const item = planItem(sub.items.data, req.subscription, req.plan, req.plan.id === req.subscription.planId);
    if (!item)
      throw new DomainError(
        ErrorCodes.PAYMENT_NOT_AVAILABLE,
        `the Stripe subscription item of plan ${req.plan.id} is not known (a plan bought in a cart at an inline price): change it in Stripe`,
      );
    return { item: item.id, sub };
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

  /**
   * A plan removed from the Stripe subscription: its subscription item deleted, prorated as asked.
   * The first plan removed (`promoted` becomes the first): the metered items move as in a plan
   * change, in the same update as the deletion the promoted plan's metered prices come, after it
   * the old plan's metered items go (their usage billed so far); a promoted plan whose charging
   * metered line item has no Stripe price is refused before Stripe is told anything.
   */
  async removePlan(req: PlanItemRequest): Promise<ProviderOutcome> {
    const promoted = req.plan.id === req.subscription.planId ? req.promoted : undefined;
    if (!promoted) {
      const item = await this.itemOf(req);
      await call('subscription item delete', () =>
        this.stripe.subscriptionItems.del(item, { proration_behavior: req.proration }, this.key('plan-remove', req)),
      );
      return {};
    }
    const why = unsellableAtStripe(promoted, req.subscription.currency);
    if (why)
      throw new DomainError(ErrorCodes.PAYMENT_NOT_AVAILABLE, `removing the first plan makes ${promoted.displayName} the first: ${why}`);
    const id = stripeId(req.subscription);
    const { item, sub } = (await this.itemOfIn(req, true)) as { item: string; sub: StripeSubscriptionView };
    const metered = this.meteredSwap(sub, req.subscription, [item], promoted);
    await call('subscription update', () =>
      this.stripe.subscriptions.update(
        id,
        { items: [{ id: item, deleted: true }, ...metered.add.map((p) => ({ price: p }))], proration_behavior: req.proration },
        this.key('plan-remove', req),
      ),
    );
    return this.dropMetered(metered.drop, req.proration, (m) => this.key(`plan-remove-${m}`, req));
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
function planItem<
  I extends { id: string; price: { id: string; recurring?: { usage_type?: string } | null }; metadata?: Record<string, string> | null },
>(items: I[], s: Subscription, plan: Plan | null, first: boolean): I | undefined {
  const claimed = claimedItems(items, s, plan);
  const free = items.filter((i) => !claimed.has(i.id));
  // A metered item (the first plan's usage billing) is never taken for a plan's seats by default.
  const seats = free.filter((i) => !isMeteredItem(i));
  return (
    (plan?.providerPlanId ? free.find((i) => i.price.id === plan.providerPlanId) : undefined) ??
    (plan ? free.find((i) => i.metadata?.tollgatePlan === plan.id) : undefined) ??
    (first ? (seats.find((i) => !i.metadata?.tollgatePlan) ?? seats[0] ?? free[0]) : undefined)
  );
}

/** The items added plans hold: recorded on them, or naming one (`metadata.tollgatePlan`); `plan`'s own aside. */
function claimedItems<I extends { id: string; metadata?: Record<string, string> | null }>(
  items: I[],
  s: Subscription,
  plan: Plan | null = null,
): Set<string> {
  const recorded = new Set(s.addedPlans.map((a) => a.paymentItemId).filter(Boolean));
  const added = new Set(s.addedPlans.map((a) => a.planId).filter((p) => p !== plan?.id));
  return new Set(items.filter((i) => recorded.has(i.id) || added.has(i.metadata?.tollgatePlan ?? '')).map((i) => i.id));
}
