import { createHash } from 'node:crypto';
import { startSubscriptionUsage } from './usage/periods';
import { ErrorCodes, fail, invalid } from '../errors';
import type { CheckoutItem, CheckoutOptionsInput, CheckoutSession, Customer, Id, Plan, Subscription, Tenant } from '../model';
import { assertBilledAsPriced, assertPlanOnSale, assertPricedIn } from '../domain/catalog';
import { assertAbsoluteUrl, resolveCheckoutOptions } from '../domain/checkout';
import { startSubscription } from '../domain/license';
import { assertCheckableGranteeId } from '../domain/grantee-ids';
import { assertSeatTotal } from '../domain/seats';
import { withPeriodEnd } from '../domain/seat-grantees';
import { currentPrice, isLiveMeteredLine, isPerSeat, minimumSeats, unitAmount } from '../domain/catalog';
import { assertAccessible } from '../domain/tenancy';
import { subscriptionGroup } from '../domain/people';
import { canonicalJson } from '../support/json';
import { memberIdsOf } from './people/shared';
import { addPlan } from '../domain/subscription-plans';
import type { AddedPlanCharge, CheckoutRequest, PaymentProvider, Repositories } from '../ports';
import { saveNewSubscription, saveOutcome, saveSeats, type WebhookDelivery } from './subscriptions/shared';
import { limitsOf, type CoreDeps } from './deps';
import { loadCurrencies, loadProductCatalog, type ProductCatalog } from './catalog-queries';

export interface CheckoutLinkRequest extends CheckoutOptionsInput {
  successUrl?: string;
  cancelUrl?: string;
  granteeId?: string;
  /** Bought for this group (its members get the seats when it is paid); `granteeId` then shows it. */
  groupId?: Id;
  member?: string;
  /** Other plans bought in the same checkout (a cart's): one subscription holds them all. */
  extraItems?: CheckoutItem[];
}

export interface PurchaseRequest {
  planId: Id;
  member: string;
  email: string | null;
  /** Who gets the first seat; null: every seat starts unassigned. */
  granteeId: string | null;
  /** Bought for this group: its members (read now) get the seats, one each, instead of `granteeId`. */
  groupId?: Id | null;
  /** Other plans added to the subscription it starts (a cart's), each with its seats and who gets them. */
  extraItems?: CheckoutItem[];
  quantity: number;
  /** Absent: the product's default currency. */
  currency?: string;
  paymentProvider: string;
  paymentSubscriptionId: string | null;
  paymentCustomerId: string | null;
  /** Ends the first period here instead of a plan's length after now (must lie in the future). */
  periodEnd?: Date;
}

/**
 * How long a deferred checkout link keeps leading to the session it created: under a day, the
 * life of a provider's checkout session (Stripe's, and its idempotency keys, last 24 h).
 */
export const DEFERRED_SESSION_REUSE_MS = 23 * 60 * 60 * 1000;

/** The reuse key of a deferred link on these terms: the link's key and the terms' digest, digested. */
const deferredTermsKey = (linkKey: string, terms: unknown): string =>
  createHash('sha256').update(linkKey).update('\n').update(canonicalJson(terms)).digest('base64url');

/** What the provider is sent for a session, but the session's own id (built once: a deferred link digests it too). */
type ProviderRequest = Omit<CheckoutRequest, 'sessionId'>;

/**
 * A deferred link's terms of a plan's live metered line items: each one's current price's provider
 * price id (`paymentPriceId`), in the plan's order; none for a plan without them.
 */
const meteredTerms = (plan: Plan): { metered?: (string | null)[] } => {
  const metered = plan.lineItems.filter(isLiveMeteredLine).map((li) => (currentPrice(li) ?? li.prices[0])?.paymentPriceId ?? null);
  return metered.length ? { metered } : {};
};

const tenantOf = (session: CheckoutSession): Tenant => ({ organisationId: session.organisationId, isTest: session.isTest });

const required = (name: string, value: string | undefined): string => {
  if (value === undefined || value.trim() === '')
    fail(ErrorCodes.VALIDATION_FAILED, `${name} is required`, [{ property: name, error: 'is required' }]);
  return value as string;
};

/** A `customerId` to pre-fill must be the payment customer of a customer of the tenant (400 naming it otherwise). */
async function assertPaymentCustomer(r: Repositories, tenant: Tenant, wanted: string | null | undefined): Promise<void> {
  if (!wanted) return;
  const found = await r.customers.page(tenant, { limit: 1, paymentCustomerId: wanted });
  if (!found.items.some((c) => c.paymentCustomerId === wanted))
    invalid('customerId', "is not the payment provider's customer of a customer of this organisation (in this mode)");
}

/** Checkout links and completed purchases. */
export class CheckoutService {
  constructor(private readonly deps: Pick<CoreDeps, 'uow' | 'clock' | 'ids' | 'payments' | 'testPayments' | 'freeCheckout' | 'limits'>) {}

  /** A checkout link for the plan (validated against the checkout option set rules). */
  async checkoutLink(tenant: Tenant, planId: Id, req: CheckoutLinkRequest): Promise<{ url: string }> {
    const { plan, catalog } = await this.deps.uow.run(async (r) => {
      const p = assertAccessible(await r.plans.get(planId), tenant, 'plan');
      return { plan: p, catalog: await loadProductCatalog(r, tenant, p.productId) };
    });
    return this.linkFor(plan, catalog, req);
  }

  /** A checkout link for the plan and the session it sells through (a cart's checkout keeps it per item). */
  async sessionLink(tenant: Tenant, planId: Id, req: CheckoutLinkRequest): Promise<{ url: string; sessionId: Id }> {
    const { plan, catalog } = await this.deps.uow.run(async (r) => {
      const p = assertAccessible(await r.plans.get(planId), tenant, 'plan');
      return { plan: p, catalog: await loadProductCatalog(r, tenant, p.productId) };
    });
    const made = this.newSession(plan, req, catalog);
    const request = await this.requestFor(made, plan, catalog);
    const session = this.cartSession(made, plan, request.extraItems);
    await this.deps.uow.run((r) => this.saveNew(r, session));
    return { ...(await this.providerLink(session, plan, request)), sessionId: session.id };
  }

  /** A checkout link for a plan already loaded with its catalog (pricing tables build many). */
  async linkFor(plan: Plan, catalog: ProductCatalog, req: CheckoutLinkRequest): Promise<{ url: string }> {
    const made = this.newSession(plan, req, catalog);
    // The cart's other plans checked before the session is written: a refused cart leaves none open.
    const request = await this.requestFor(made, plan, catalog);
    const session = this.cartSession(made, plan, request.extraItems);
    await this.deps.uow.run((r) => this.saveNew(r, session));
    return this.providerLink(session, plan, request);
  }

  /**
   * Follows a deferred checkout link (a pricing table's `/checkout/start/<token>`, `linkKey` the
   * digest of what it grants): the first follow creates the checkout session, later ones
   * (concurrent ones included) reuse it while it is open, under `DEFERRED_SESSION_REUSE_MS` old,
   * at the provider the plan goes to, and the terms the provider would be sent are those it was
   * made with (the guard is keyed on `linkKey` and a digest of those terms: a price, name or seat
   * term edited since makes a new session). So an anonymous visitor replaying one link cannot
   * create sessions (nor provider sessions) without end, a customer who paid (or whose session was
   * canceled) can buy again, and nobody is charged the terms of before an edit. A reused session
   * whose provider page is no longer open (paid, expired) gives way to a new one too. The request
   * the provider is sent is built once, on the first transaction's reads: the key digests it, and
   * the session followed (reused, or new) is sent it under its own id.
   */
  async followDeferredLink(tenant: Tenant, planId: Id, req: CheckoutLinkRequest, linkKey: string): Promise<{ url: string }> {
    const now = this.deps.clock.now();
    const { session, plan, catalog, request, reused, key } = await this.deps.uow.run(async (r) => {
      const p = assertAccessible(await r.plans.get(planId), tenant, 'plan');
      const c = await loadProductCatalog(r, tenant, p.productId);
      const made = this.newSession(p, req, c);
      const extra = made.extraItems.length ? await this.extraCharges(r, tenant, p, made) : undefined;
      const candidate = this.cartSession(made, p, extra);
      const sent = this.requestOf(candidate, p, c, extra);
      const k = deferredTermsKey(linkKey, this.termsOf(candidate, sent));
      const held = await r.checkoutSessions.lockDeferredLink(k, now);
      const previous = held.sessionId ? await r.checkoutSessions.get(held.sessionId) : undefined;
      // Reused while open, young and still at the provider the plans go to (a plan made free or
      // paid since goes to the other: a new session).
      if (
        previous &&
        previous.status === 'open' &&
        now.getTime() - previous.createdAt.getTime() < DEFERRED_SESSION_REUSE_MS &&
        previous.provider === candidate.provider
      )
        return { session: previous, plan: p, catalog: c, request: sent, reused: true, key: k };
      await this.saveNew(r, candidate);
      await r.checkoutSessions.setDeferredLink(k, candidate.id);
      return { session: candidate, plan: p, catalog: c, request: sent, reused: false, key: k };
    });
    // Reused: the provider's page made for it, as made then (the terms are the same, by the key).
    // Asked again with the same request key, the provider would replay a page paid or expired
    // since: such a session gives way to a new one.
    if (reused && session.providerSessionId) {
      const provider = this.providerFor(plan, request.extraItems) as { name: string } & Partial<Pick<PaymentProvider, 'checkoutUrl'>>;
      if (provider.name === session.provider && provider.checkoutUrl) {
        const url = await provider.checkoutUrl(session.providerSessionId, session);
        if (url) return { url };
        const fresh = await this.deps.uow.run(async (r) => {
          const held = await r.checkoutSessions.lockDeferredLink(key, this.deps.clock.now());
          if (held.sessionId !== session.id) {
            const other = held.sessionId ? await r.checkoutSessions.get(held.sessionId) : undefined;
            if (other) return other;
          }
          const next = this.cartSession(this.newSession(plan, req, catalog), plan, request.extraItems);
          await this.saveNew(r, next);
          await r.checkoutSessions.setDeferredLink(key, next.id);
          return next;
        });
        return this.providerLink(fresh, plan, request);
      }
    }
    return this.providerLink(session, plan, request);
  }

  /**
   * The terms of what the provider is sent for a new session (`request`, which leaves out the
   * session's id), with the session's provider and group: their digest keys a deferred link's
   * reuse, so that a session is reused only on the terms it was made with. Stored keys must match
   * after a deploy: what is digested, and how, changes only with a new key (a test holds digests
   * computed before).
   */
  private termsOf(session: CheckoutSession, request: ProviderRequest): unknown {
    const planTerms = (x: Plan) => ({
      id: x.id,
      name: x.displayName,
      providerPlanId: x.providerPlanId,
      pricingType: x.pricingType,
      interval: x.interval,
      length: x.length,
      trialDays: x.trialDays,
      licenseType: x.licenseType,
      perSeat: isPerSeat(x),
      minimumSeats: minimumSeats(x),
      // The provider prices of its metered line items (what a Stripe checkout adds for them): a
      // price id set since makes a new session. Only for a plan that has some, so the terms of
      // every other plan digest byte for byte as before (stored keys keep matching).
      ...meteredTerms(x),
    });
    return {
      provider: session.provider,
      product: { id: request.product.id, name: request.product.displayName },
      plan: planTerms(request.plan),
      unitAmount: request.unitAmount,
      options: request.options,
      granteeId: request.granteeId,
      member: request.member,
      groupId: session.groupId,
      successUrl: request.successUrl,
      cancelUrl: request.cancelUrl,
      maxSeats: request.maxSeats,
      extra: (request.extraItems ?? []).map((x) => ({ plan: planTerms(x.plan), unitAmount: x.unitAmount, quantity: x.quantity })),
    };
  }

  /** What the provider is sent for the session but its id: its cart's other plans (`extra`) as billed. */
  private requestOf(session: CheckoutSession, plan: Plan, catalog: ProductCatalog, extra: AddedPlanCharge[] | undefined): ProviderRequest {
    const { options, granteeId, member, successUrl, cancelUrl } = session;
    return {
      ...(extra ? { extraItems: extra } : {}),
      product: catalog.product,
      plan,
      options,
      granteeId,
      member,
      successUrl,
      cancelUrl,
      unitAmount: unitAmount(plan, options.currency, catalog.currencies),
      maxSeats: limitsOf(this.deps).maxSeats,
    };
  }

  /** `requestOf`, the cart's other plans read (and checked: refusals name `cartItems`) in a read of their own. */
  private async requestFor(session: CheckoutSession, plan: Plan, catalog: ProductCatalog): Promise<ProviderRequest> {
    const extra = session.extraItems.length
      ? await this.deps.uow.read((r) => this.extraCharges(r, tenantOf(session), plan, session))
      : undefined;
    return this.requestOf(session, plan, catalog, extra);
  }

  /** A new open checkout session for the request (validated against the plan's rules). */
  private newSession(plan: Plan, req: CheckoutLinkRequest, catalog: ProductCatalog): CheckoutSession {
    const { successUrl, cancelUrl, granteeId, member, options } = this.validateLink(plan, catalog, req);
    // A paid plan is never sold in a currency it has no price in: it would cost nothing. Checked
    // when a session is made, never when a payment completes (what was paid is recorded).
    assertPricedIn(plan, options.currency, catalog.currencies, 'currency');
    assertBilledAsPriced(plan, options.currency, 'planId');
    // One the provider would refuse (Stripe: usage it would never bill) is refused before a session is written.
    const why = this.unsellable(plan, options.currency);
    if (why) invalid('planId', why);
    return {
      id: this.deps.ids.newId(),
      organisationId: plan.organisationId,
      isTest: plan.isTest,
      productId: plan.productId,
      planId: plan.id,
      granteeId,
      groupId: req.groupId ?? null,
      extraItems: req.extraItems ?? [],
      member,
      successUrl,
      cancelUrl,
      options,
      provider: this.providerFor(plan).name,
      providerSessionId: null,
      status: 'open',
      subscriptionId: null,
      createdAt: this.deps.clock.now(),
      completedAt: null,
    };
  }

  /**
   * A new session of a cart whose other plans are read (`extra`, as billed), at the provider the
   * link goes to: a cart with one paid plan goes to the payment provider, even when its first plan
   * is free (what holds a plan's interval reads it, and so does a deferred link's reuse).
   */
  private cartSession(session: CheckoutSession, plan: Plan, extra: AddedPlanCharge[] | undefined): CheckoutSession {
    if (!extra) return session;
    // The cart goes to the provider its plans together pick (a free first plan with a paid extra
    // one: the payment provider, not the free checkout `newSession` asked): each of its plans is
    // asked of that provider before the session is written.
    const provider = this.providerFor(plan, extra) as { name: string } & Partial<Pick<PaymentProvider, 'unsellable'>>;
    const currency = session.options.currency;
    const why = provider.unsellable?.(plan, currency);
    if (why) invalid('planId', why);
    for (const x of extra) {
      const other = provider.unsellable?.(x.plan, currency);
      if (other) invalid('cartItems', other);
    }
    return { ...session, provider: provider.name };
  }

  /**
   * The provider's page for the session (the provider keeps one per session: asking again gives
   * the same), sent `request` (the session's, from `requestFor`) under the session's id.
   */
  private async providerLink(session: CheckoutSession, plan: Plan, request: ProviderRequest): Promise<{ url: string }> {
    const made = await this.providerFor(plan, request.extraItems).checkoutLink({ ...request, sessionId: session.id });
    // The provider's own session, kept so that a reuse (a deferred link followed again) resumes it.
    if (made.providerSessionId && made.providerSessionId !== session.providerSessionId) {
      const providerSessionId = made.providerSessionId;
      await this.deps.uow.run(async (r) => {
        const now = await r.checkoutSessions.getForUpdate(session.id);
        if (now && !now.providerSessionId) await r.checkoutSessions.save({ ...now, providerSessionId });
      });
    }
    return { url: made.url };
  }

  /**
   * Writes a new session. Its `customerId` (the provider's customer the page is pre-filled with)
   * must be the payment customer of one of the tenant's customers: another organisation's (or
   * mode's) on a shared provider account would be charged, and recorded as this tenant's customer.
   */
  private async saveNew(r: Repositories, session: CheckoutSession): Promise<void> {
    await assertPaymentCustomer(r, { organisationId: session.organisationId, isTest: session.isTest }, session.options.customerId);
    await r.checkoutSessions.save(session);
  }

  /**
   * Refuses (400 naming `customerId`) a `customerId` that is not the payment customer of one of the
   * tenant's customers: what links handed out for later (pricing tables) ask when they are built,
   * so that following one cannot fail on it. `saveNew` asks it again of every new session.
   */
  async checkCustomerId(tenant: Tenant, customerId: string | null | undefined): Promise<void> {
    if (customerId) await this.deps.uow.read((r) => assertPaymentCustomer(r, tenant, customerId));
  }

  /**
   * Checks a checkout request against the plan without creating anything: what a link handed out
   * for later use (pricing tables) must pass now, so that following it cannot fail on input.
   * Whether the plan has a price in the currency is the caller's to ask (`pricedIn`): a pricing
   * table leaves an unpriced plan's link out, a new session refuses it.
   */
  validateLink(plan: Plan, catalog: ProductCatalog, req: CheckoutLinkRequest) {
    const successUrl = assertAbsoluteUrl('successUrl', req.successUrl);
    const cancelUrl = assertAbsoluteUrl('cancelUrl', req.cancelUrl);
    const granteeId = required('granteeId', req.granteeId);
    assertCheckableGranteeId('granteeId', granteeId);
    const member = required('member', req.member);
    assertPlanOnSale(plan, catalog.product);
    const options = resolveCheckoutOptions(req, plan, catalog.product, catalog.currencies, limitsOf(this.deps).maxSeats);
    return { successUrl, cancelUrl, granteeId, member, options };
  }

  /**
   * Why the provider a checkout of the plan goes to cannot sell it in the currency (the port's
   * `unsellable`: Stripe, a charging metered line item without a Stripe price), or undefined: a
   * pricing table leaves such a plan's link out, a new session refuses it (400 naming `planId`).
   */
  unsellable(plan: Plan, currency: string): string | undefined {
    const provider = this.providerFor(plan) as { name: string } & Partial<Pick<PaymentProvider, 'unsellable'>>;
    return provider.unsellable?.(plan, currency);
  }

  /**
   * Free plans go to the hosted free checkout (a checkout of several plans: when every one is
   * free); paid ones to the payment provider of the plan's mode (a test-mode plan never to a live
   * provider account: `testPayments`, where the deployment has one).
   */
  private providerFor(plan: Plan, extra: AddedPlanCharge[] = []) {
    const free = [plan, ...extra.map((x) => x.plan)].every((p) => p.pricingType === 'free');
    return free && this.deps.freeCheckout ? this.deps.freeCheckout : this.paymentsFor(plan.isTest);
  }

  /** The payment provider of a mode's paid checkouts. */
  private paymentsFor(isTest: boolean) {
    return isTest && this.deps.testPayments ? this.deps.testPayments : this.deps.payments;
  }

  /**
   * The other plans of a checkout of several plans, as billed: each sellable, of the tenant, on
   * the checkout plan's interval, sold and priced in its currency, and no plan twice (one
   * subscription holds a plan once). Refusals name `cartItems`. At completion (`completing`) only
   * the tenant, the product and the once-only hold: the sale's rules held when the session was made.
   */
  private async extraCharges(
    r: Repositories,
    tenant: Tenant,
    plan: Plan,
    session: CheckoutSession,
    { completing }: { completing: boolean } = { completing: false },
  ): Promise<AddedPlanCharge[]> {
    const currencies = await loadCurrencies(r);
    const seen = new Set([plan.id]);
    const out: AddedPlanCharge[] = [];
    for (const item of session.extraItems) {
      const p = assertAccessible(await r.plans.get(item.planId), tenant, 'plan');
      const product = (await r.products.get(p.productId)) ?? fail(ErrorCodes.PRODUCT_NOT_FOUND, 'product not found');
      if (seen.has(p.id))
        invalid('cartItems', 'a plan is in the cart twice: one subscription holds a plan once (give that item more seats instead)');
      seen.add(p.id);
      if (!completing) {
        assertPlanOnSale(p, product);
        if (p.usageBased) invalid('cartItems', `${p.displayName} is usage-based: check it out in a cart of its own`);
        if (p.interval !== plan.interval || p.length !== plan.length)
          invalid('cartItems', `${p.displayName} is not billed on the cart's interval`);
        resolveCheckoutOptions({ currency: session.options.currency }, p, product, currencies);
        assertPricedIn(p, session.options.currency, currencies, 'cartItems');
        assertBilledAsPriced(p, session.options.currency, 'cartItems');
      }
      out.push({ plan: p, quantity: item.quantity, unitAmount: unitAmount(p, session.options.currency, currencies) });
    }
    return out;
  }

  /** A checkout session with what a checkout page shows. */
  async session(sessionId: Id): Promise<{ session: CheckoutSession; plan: Plan; catalog: ProductCatalog }> {
    return this.deps.uow.run(async (r) => {
      const session = (await r.checkoutSessions.get(sessionId)) ?? fail(ErrorCodes.CHECKOUT_SESSION_NOT_FOUND, 'no such checkout session');
      const tenant = { organisationId: session.organisationId, isTest: session.isTest };
      const plan = (await r.plans.get(session.planId)) ?? fail(ErrorCodes.PLAN_NOT_FOUND, 'plan not found');
      return { session, plan, catalog: await loadProductCatalog(r, tenant, plan.productId) };
    });
  }

  /**
   * The provider reports the session paid: customer, subscription and licenses are created, and
   * what the provider keeps is recorded, in one transaction. A session completes once; a replayed
   * delivery answers with what the first one created.
   */
  async completeCheckout(
    sessionId: Id,
    input: {
      quantity?: number;
      email?: string | null;
      paymentSubscriptionId?: string | null;
      paymentCustomerId?: string | null;
      delivery?: WebhookDelivery;
      /**
       * The providers the caller completes for (the sandbox's pages: the sandbox and the free
       * checkout): a session of another, or one whose plans another would now bill (a free plan
       * made paid since its link), is not theirs to complete and answers "no such session".
       */
      via?: string[];
      /**
       * The mode the payment was taken in, from a provider account that bills one mode only (a
       * deployment's test-mode Stripe keys): a session of the other mode is not this payment's.
       */
      isTest?: boolean;
    } = {},
  ): Promise<{ status: 'completed' | 'duplicate'; session: CheckoutSession; subscription: Subscription }> {
    const now = this.deps.clock.now();
    return this.deps.uow.run(async (r) => {
      const fresh = input.delivery ? await r.webhookEvents.record(input.delivery.provider, input.delivery.eventId, now) : true;
      const session =
        (await r.checkoutSessions.getForUpdate(sessionId)) ?? fail(ErrorCodes.CHECKOUT_SESSION_NOT_FOUND, 'no such checkout session');
      if (input.isTest !== undefined && input.isTest !== session.isTest)
        fail(ErrorCodes.CHECKOUT_SESSION_NOT_FOUND, 'no such checkout session');
      if (session.status === 'canceled') return fail(ErrorCodes.CHECKOUT_CANCELED, 'this checkout was canceled; start a new one');
      if (session.status === 'completed' || !fresh) {
        if (!input.delivery || !session.subscriptionId)
          return fail(ErrorCodes.CHECKOUT_ALREADY_COMPLETED, 'this checkout has already been paid');
        const subscription = (await r.subscriptions.get(session.subscriptionId)) as Subscription;
        return { status: 'duplicate' as const, session, subscription };
      }
      const plan = (await r.plans.get(session.planId)) ?? fail(ErrorCodes.PLAN_NOT_FOUND, 'plan not found');
      // Paid at the provider (its subscription comes with the completion: Stripe's webhook), what it
      // bought is recorded even if the catalog changed since the link (a plan or product archived,
      // a seat minimum raised, a currency or price removed, a plan made free): the sale's rules held
      // when the session was made; here only integrity: the session's own terms, a whole seat count
      // within the deployment's bounds, the tenant. Completed on Tollgate's own pages (the sandbox,
      // the free checkout), nobody paid a provider: the sale's rules are asked again.
      const completing = Boolean(input.paymentSubscriptionId);
      let quantity = session.options.quantity;
      if (input.quantity !== undefined && input.quantity !== quantity) {
        // The session's terms, not the plan's now (a changeable count was only offered on a per-seat plan).
        if (!session.options.changeQuantity)
          fail(ErrorCodes.CHECKOUT_QUANTITY_INVALID, 'this checkout does not let the customer choose the seat count');
        if (!Number.isSafeInteger(input.quantity) || input.quantity < 1)
          fail(ErrorCodes.CHECKOUT_QUANTITY_INVALID, 'the seat count must be a whole number of at least 1');
        if (!completing && input.quantity < minimumSeats(plan))
          fail(ErrorCodes.CHECKOUT_QUANTITY_BELOW_MINIMUM, `at least ${minimumSeats(plan)} seat(s)`);
        assertSeatTotal(input.quantity, limitsOf(this.deps).maxSeats);
        quantity = input.quantity;
      }
      const tenant = { organisationId: session.organisationId, isTest: session.isTest };
      const extra = session.extraItems.length ? await this.extraCharges(r, tenant, plan, session, { completing }) : [];
      // A completion that carries the provider's subscription was paid there (Stripe): that provider
      // keeps it, even for a plan made free since the link (the free checkout would never cancel it).
      const provider = input.paymentSubscriptionId ? this.deps.payments : this.providerFor(plan, extra);
      if (input.via && !(input.via.includes(session.provider) && input.via.includes(provider.name)))
        fail(ErrorCodes.CHECKOUT_SESSION_NOT_FOUND, 'no such checkout session');
      const result = await this.purchaseIn(
        r,
        {
          planId: plan.id,
          member: session.member,
          email: input.email ?? session.options.customerEmail,
          granteeId: session.granteeId,
          groupId: session.groupId,
          extraItems: session.extraItems,
          quantity,
          currency: session.options.currency,
          paymentProvider: provider.name,
          paymentSubscriptionId: input.paymentSubscriptionId ?? null,
          paymentCustomerId: input.paymentCustomerId ?? null,
        },
        now,
        { completing, fromSession: true },
      );
      const completed: CheckoutSession = { ...session, status: 'completed', subscriptionId: result.subscription.id, completedAt: now };
      await r.checkoutSessions.save(completed);
      const customer = (await r.customers.get(result.subscription.customerId)) as Customer;
      const price = unitAmount(plan, result.subscription.currency, await loadCurrencies(r));
      await saveOutcome(
        r,
        await provider.purchaseCompleted({
          session: completed,
          subscription: result.subscription,
          plan,
          customer,
          unitAmount: price,
          ...(extra.length ? { addedPlans: extra } : {}),
        }),
      );
      return { status: 'completed' as const, session: completed, ...result };
    });
  }

  /** The customer gave up on the checkout: it can no longer be paid. Returns where to send them. */
  async cancelCheckout(sessionId: Id): Promise<CheckoutSession> {
    return this.deps.uow.run(async (r) => {
      const session =
        (await r.checkoutSessions.getForUpdate(sessionId)) ?? fail(ErrorCodes.CHECKOUT_SESSION_NOT_FOUND, 'no such checkout session');
      if (session.status === 'completed') return fail(ErrorCodes.CHECKOUT_ALREADY_COMPLETED, 'this checkout has already been paid');
      if (session.status === 'canceled') return session;
      const canceled: CheckoutSession = { ...session, status: 'canceled', completedAt: this.deps.clock.now() };
      await r.checkoutSessions.save(canceled);
      return canceled;
    });
  }

  /** Records a paid (or free) checkout: customer, subscription and one license per seat, in one transaction. */
  async completePurchase(req: PurchaseRequest): Promise<{ subscription: Subscription }> {
    const now = this.deps.clock.now();
    return this.deps.uow.run((r) => this.purchaseIn(r, req, now));
  }

  /**
   * A purchase inside the caller's transaction (a subscription started without payment, and what
   * follows). `completing`: a checkout's completion, paid at the provider: the sale's rules (plans
   * and product sellable, seat minimums, the currency still the product's, the cart's interval)
   * held when its session was made and are not asked again; the seats and currency are those paid.
   * `fromSession`: any checkout session's completion (the sandbox's and the free checkout's too):
   * its grantee ids were checked when the session was made.
   */
  async purchaseIn(
    r: Repositories,
    req: PurchaseRequest,
    now: Date,
    { completing, fromSession = false }: { completing: boolean; fromSession?: boolean } = { completing: false },
  ): Promise<{ subscription: Subscription }> {
    if (req.paymentSubscriptionId) {
      const existing = await r.subscriptions.findByPaymentId(req.paymentSubscriptionId);
      if (existing) return { subscription: existing };
    }
    // A purchase made now (not a checkout session's completion, whose grantees were checked when
    // the session was made, or stored before the rule: paid or not, it completes as sold):
    // each grantee id must read back in the license check.
    if (!completing && !fromSession) {
      if (req.granteeId !== null) assertCheckableGranteeId('granteeId', req.granteeId);
      for (const [i, item] of (req.extraItems ?? []).entries())
        if (item.granteeId !== null) assertCheckableGranteeId(`cartItems[${i + 1}].granteeId`, item.granteeId);
    }
    const plan = (await r.plans.get(req.planId)) ?? fail(ErrorCodes.PLAN_NOT_FOUND, 'plan not found');
    const product = (await r.products.get(plan.productId)) ?? fail(ErrorCodes.PRODUCT_NOT_FOUND, 'product not found');
    const currencies = await loadCurrencies(r);
    const currency =
      completing && req.currency
        ? req.currency.toUpperCase()
        : resolveCheckoutOptions({ currency: req.currency }, plan, product, currencies).currency;
    const customer = await this.customerFor(r, plan, req, now);
    const seatGrantees = req.groupId ? await this.groupMembers(r, plan, req.groupId) : undefined;
    const result = startSubscription({
      plan,
      product,
      customer,
      granteeId: req.granteeId,
      seatGrantees,
      quantity: req.quantity,
      currency,
      paymentProvider: req.paymentProvider,
      paymentSubscriptionId: req.paymentSubscriptionId,
      now,
      newId: () => this.deps.ids.newId(),
      maxSeats: limitsOf(this.deps).maxSeats,
      completing,
    });
    let subscription = req.periodEnd ? withPeriodEnd(result.subscription, req.periodEnd, now) : result.subscription;
    // The other plans of the checkout (a cart's) join the same subscription, each with its seats.
    const extraSeats = [];
    for (const [i, item] of (req.extraItems ?? []).entries()) {
      const extra = (await r.plans.get(item.planId)) ?? fail(ErrorCodes.PLAN_NOT_FOUND, 'plan not found');
      const extraProduct = (await r.products.get(extra.productId)) ?? fail(ErrorCodes.PRODUCT_NOT_FOUND, 'product not found');
      const grantees = item.groupId ? await this.groupMembers(r, plan, item.groupId) : item.granteeId !== null ? [item.granteeId] : [];
      const added = addPlan({
        subscription,
        firstPlan: plan,
        plan: extra,
        product: extraProduct,
        licenses: [],
        quantity: isPerSeat(extra) ? item.quantity : undefined,
        grantees,
        at: `cartItems[${i + 1}]`,
        now,
        newId: () => this.deps.ids.newId(),
        maxSeats: limitsOf(this.deps).maxSeats,
        completing,
      });
      subscription = added.subscription;
      extraSeats.push(added.seats);
    }
    await saveNewSubscription(r, subscription);
    await saveSeats(r, result.licenses);
    for (const seats of extraSeats) await saveSeats(r, seats);
    if (req.periodEnd)
      await r.licenses.saveMany(
        (await r.licenses.listBySubscription(subscription.id)).map((l) => ({ ...l, endTime: subscription.currentPeriodEnd })),
      );
    // A usage plan gives the subscription its first period's allowance (and cap) on each meter.
    await startSubscriptionUsage(r, this.deps.ids, subscription, plan, now);
    return { subscription };
  }

  /**
   * The members of the group a purchase is for, as they are when it is paid (a group deleted since,
   * or not the plan's tenant's: nobody, so every seat starts free).
   */
  private async groupMembers(r: Repositories, plan: Plan, groupId: Id): Promise<string[]> {
    const group = (await r.people.getGroup(groupId)) ?? ((s) => s && subscriptionGroup(s))(await r.subscriptions.get(groupId));
    if (!group || group.organisationId !== plan.organisationId || group.isTest !== plan.isTest) return [];
    return memberIdsOf(r, group);
  }

  private async customerFor(r: Repositories, plan: Plan, req: PurchaseRequest, now: Date): Promise<Customer> {
    const fresh: Customer = {
      id: this.deps.ids.newId(),
      organisationId: plan.organisationId,
      isTest: plan.isTest,
      value: req.member,
      emailAddress: req.email,
      paymentCustomerId: req.paymentCustomerId,
      createdAt: now,
      updatedAt: now,
    };
    // Found or made in one step: two purchases of one new owner at once share one customer.
    const existing = await r.customers.findOrCreate(fresh);
    if (existing.id === fresh.id) return existing;
    const customer: Customer = {
      ...existing,
      emailAddress: req.email ?? existing.emailAddress,
      paymentCustomerId: req.paymentCustomerId ?? existing.paymentCustomerId,
      updatedAt: now,
    };
    await r.customers.save(customer);
    return customer;
  }
}
