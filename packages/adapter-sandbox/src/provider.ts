import { createHash, randomBytes } from 'node:crypto';
import {
  ErrorCodes,
  fail,
  invalid,
  prorate,
  type AddedPlanCharge,
  type BillingDocument,
  type CheckoutRequest,
  type Clock,
  type CompletedPurchase,
  type Customer,
  type InvoiceList,
  type PaymentProvider,
  type Plan,
  type PlanChangeRequest,
  type PlanItemRequest,
  type Proration,
  type ProviderOutcome,
  type ProviderPaymentMethod,
  type SignedLinks,
  type Subscription,
  type UsageInvoiceLine,
} from '@tollgate/core';
import { invoiceDocument, testCardDocument, type InvoiceLineInput } from './documents';

export type SandboxPage = 'portal' | 'payment-method' | 'cancel';

export interface SandboxConfig {
  /** Where the service is reached: the hosted pages live under `<publicUrl>/sandbox`. */
  publicUrl: string;
  /** Signs the links to a subscription's pages, so that only their holder can use them. */
  links: SignedLinks;
  clock: Clock;
}

/** How long a link to a subscription's hosted page stays valid. */
export const PAGE_LINK_TTL_MS = 60 * 60 * 1000;

/** Signed, expiring links to a subscription's hosted pages; each link carries a fresh nonce. */
export class SandboxLinks {
  constructor(private readonly config: Pick<SandboxConfig, 'publicUrl' | 'links' | 'clock'>) {}

  token(page: SandboxPage, subscriptionId: string): string {
    return this.config.links.sign(
      { page, subscriptionId, nonce: randomBytes(8).toString('base64url') },
      PAGE_LINK_TTL_MS,
      this.config.clock.now(),
    );
  }

  /** Whether the token is a live link to this page of this subscription. */
  verify(page: SandboxPage, subscriptionId: string, token: unknown): boolean {
    if (typeof token !== 'string') return false;
    const payload = this.config.links.verify<{ page: string; subscriptionId: string }>(token, this.config.clock.now());
    return payload?.page === page && payload.subscriptionId === subscriptionId;
  }

  page(page: SandboxPage, subscriptionId: string): string {
    return `${this.config.publicUrl}/sandbox/${page}/${subscriptionId}?token=${this.token(page, subscriptionId)}`;
  }

  checkout(sessionId: string): string {
    return `${this.config.publicUrl}/sandbox/checkout/${sessionId}`;
  }
}

const SANDBOX_COUPON = /^[A-Za-z0-9_-]{1,64}$/;

/** The sandbox's record of a coupon on a subscription (one per code: applying again or removing updates it). */
const couponDocument = (s: Subscription, code: string, active: boolean, now: Date): BillingDocument => ({
  id: `coupon_${createHash('sha256').update(`${s.id} ${code}`).digest('hex').slice(0, 24)}`,
  organisationId: s.organisationId,
  subscriptionId: s.id,
  kind: 'coupon',
  body: { id: code, object: 'coupon', code, active, updated: Math.floor(now.getTime() / 1000) },
  createdAt: now,
});

/**
 * The name an invoice after the first shows, and its `subscription_details.metadata.member`: the
 * member the customer is (`Customer.value`, as the first invoice, made at the purchase, shows it);
 * its e-mail when the caller did not say (never the customer's internal id).
 */
const customerName = (s: Subscription, member: string | undefined): string => member ?? s.email ?? '';

const seq = (now: Date) => `${now.getTime().toString(36)}${randomBytes(3).toString('hex')}`;

/**
 * The built-in payment provider: no account or keys. Its checkout and self-service pages are served
 * by this service; it keeps invoices (with proration lines after plan and seat changes) and a test
 * card as billing documents.
 */
export class SandboxPaymentProvider implements PaymentProvider {
  readonly name = 'sandbox';
  readonly links: SandboxLinks;

  constructor(private readonly config: SandboxConfig) {
    this.links = new SandboxLinks(config);
  }

  async checkoutLink(request: CheckoutRequest) {
    return { url: this.links.checkout(request.sessionId) };
  }
  async updatePaymentLink(s: Subscription, _c: Customer) {
    return { url: this.links.page('payment-method', s.id) };
  }
  async portalLink(s: Subscription, _c: Customer) {
    return { url: this.links.page('portal', s.id) };
  }
  async cancelLink(s: Subscription, _c: Customer) {
    return { url: this.links.page('cancel', s.id) };
  }

  async purchaseCompleted(p: CompletedPurchase): Promise<ProviderOutcome> {
    const now = this.config.clock.now();
    const s = p.subscription;
    const trial = s.status === 'TRIALING';
    const invoice = invoiceDocument({
      subscription: s,
      plan: p.plan,
      customerEmail: p.customer.emailAddress,
      customerName: p.customer.value,
      billingReason: 'subscription_create',
      status: 'paid',
      now,
      seq: seq(now),
      publicUrl: this.config.publicUrl,
      lines: [
        {
          description: `${s.quantity} × ${p.plan.displayName}${trial ? ' (trial)' : ''}`,
          amount: trial ? 0 : p.unitAmount * s.quantity,
          quantity: s.quantity,
          unitAmount: p.unitAmount,
          proration: false,
          periodStart: s.currentPeriodStart,
          periodEnd: s.currentPeriodEnd,
        },
        // The other plans bought with it (a cart's), a line each.
        ...(p.addedPlans ?? []).map((a) => ({
          description: `${a.quantity} × ${a.plan.displayName}${trial ? ' (trial)' : ''}`,
          amount: trial ? 0 : a.unitAmount * a.quantity,
          quantity: a.quantity,
          unitAmount: a.unitAmount,
          proration: false,
          periodStart: s.currentPeriodStart,
          periodEnd: s.currentPeriodEnd,
        })),
      ],
    });
    return { documents: [invoice, testCardDocument(s, p.customer.emailAddress, p.customer.value, now)] };
  }

  /** The sandbox bills no one: the sweep renews its subscriptions, with a paid cycle invoice. */
  renewedBySweep(
    s: Subscription,
    plan: Plan,
    unitAmount: number,
    usage: UsageInvoiceLine[] = [],
    addedPlans: AddedPlanCharge[] = [],
    member?: string,
  ): ProviderOutcome {
    const now = this.config.clock.now();
    return {
      documents: [
        invoiceDocument({
          subscription: s,
          plan,
          customerEmail: s.email,
          customerName: customerName(s, member),
          billingReason: 'subscription_cycle',
          status: 'paid',
          now,
          seq: seq(now),
          publicUrl: this.config.publicUrl,
          lines: [
            {
              description: `${s.quantity} × ${plan.displayName}`,
              amount: unitAmount * s.quantity,
              quantity: s.quantity,
              unitAmount,
              proration: false,
              periodStart: s.currentPeriodStart,
              periodEnd: s.currentPeriodEnd,
            },
            // Every other plan the subscription holds, on the same period.
            ...addedPlans.map((a) => ({
              description: `${a.quantity} × ${a.plan.displayName}`,
              amount: a.unitAmount * a.quantity,
              quantity: a.quantity,
              unitAmount: a.unitAmount,
              proration: false,
              periodStart: s.currentPeriodStart,
              periodEnd: s.currentPeriodEnd,
            })),
            ...usage.map(usageLine),
          ],
        }),
      ],
    };
  }

  /** A usage period closed by a plan change: a paid invoice of its usage lines. */
  usageBilled(s: Subscription, plan: Plan, usage: UsageInvoiceLine[], member?: string): ProviderOutcome {
    const now = this.config.clock.now();
    return {
      documents: [
        invoiceDocument({
          subscription: s,
          plan,
          customerEmail: s.email,
          customerName: customerName(s, member),
          billingReason: 'subscription_update',
          status: 'paid',
          now,
          seq: seq(now),
          publicUrl: this.config.publicUrl,
          lines: usage.map(usageLine),
        }),
      ],
    };
  }

  async changePlan(req: PlanChangeRequest): Promise<ProviderOutcome> {
    const s = req.subscription;
    return this.prorated(s, req.to, req.proration, req.member, {
      fromUnitAmount: req.fromUnitAmount,
      toUnitAmount: req.toUnitAmount,
      fromQuantity: s.quantity,
      toQuantity: s.quantity,
      describe: (credit) =>
        credit ? `Unused time on ${s.quantity} × ${req.from.displayName}` : `Remaining time on ${s.quantity} × ${req.to.displayName}`,
    });
  }

  /** A plan added for the rest of the period: its remaining time is charged as the proration asks. */
  async addPlan(req: PlanItemRequest): Promise<ProviderOutcome> {
    return this.prorated(req.subscription, req.plan, req.proration, req.member, {
      fromUnitAmount: req.unitAmount,
      toUnitAmount: req.unitAmount,
      fromQuantity: 0,
      toQuantity: req.quantity,
      describe: () => `Remaining time on ${req.quantity} × ${req.plan.displayName}`,
    });
  }

  /** A plan removed before the period's end: its unused time is credited as the proration asks. */
  async removePlan(req: PlanItemRequest): Promise<ProviderOutcome> {
    return this.prorated(req.subscription, req.plan, req.proration, req.member, {
      fromUnitAmount: req.unitAmount,
      toUnitAmount: req.unitAmount,
      fromQuantity: req.quantity,
      toQuantity: 0,
      describe: () => `Unused time on ${req.quantity} × ${req.plan.displayName}`,
    });
  }

  async changeSeats(
    s: Subscription,
    plan: Plan,
    quantity: number,
    proration: Proration,
    unitAmount: number,
    member?: string,
  ): Promise<ProviderOutcome> {
    return this.prorated(s, plan, proration, member, {
      fromUnitAmount: unitAmount,
      toUnitAmount: unitAmount,
      fromQuantity: s.quantity,
      toQuantity: quantity,
      describe: (credit) =>
        credit ? `Unused time on ${s.quantity} × ${plan.displayName}` : `Remaining time on ${quantity} × ${plan.displayName}`,
    });
  }

  /** A proration invoice: paid now with always_invoice, a draft for the next invoice with create_prorations, nothing with none. */
  private prorated(
    s: Subscription,
    plan: Plan,
    mode: Proration,
    member: string | undefined,
    a: { fromUnitAmount: number; toUnitAmount: number; fromQuantity: number; toQuantity: number; describe: (credit: boolean) => string },
  ): ProviderOutcome {
    const now = this.config.clock.now();
    const p = prorate({ ...a, periodStart: s.currentPeriodStart, periodEnd: s.currentPeriodEnd, now, mode });
    if (mode === 'none' || (p.credit === 0 && p.charge === 0)) return {};
    const line = (credit: boolean): InvoiceLineInput => ({
      description: a.describe(credit),
      amount: credit ? p.credit : p.charge,
      quantity: credit ? a.fromQuantity : a.toQuantity,
      unitAmount: credit ? a.fromUnitAmount : a.toUnitAmount,
      proration: true,
      periodStart: now,
      periodEnd: s.currentPeriodEnd,
    });
    const invoice = invoiceDocument({
      subscription: s,
      plan,
      customerEmail: s.email,
      customerName: customerName(s, member),
      billingReason: 'subscription_update',
      status: p.invoiceNow ? 'paid' : 'draft',
      now,
      seq: seq(now),
      publicUrl: this.config.publicUrl,
      // A side with no seats (a plan added or removed) has no line.
      lines: [line(true), line(false)].filter((l) => l.quantity > 0),
    });
    return { documents: [invoice] };
  }

  async cancel(_s: Subscription, _when: 'now' | 'end'): Promise<void> {
    // The sandbox keeps no subscription of its own: our record is the truth.
  }
  async reactivate(_s: Subscription): Promise<void> {}

  async listInvoices(_s: Subscription, stored: BillingDocument[]): Promise<InvoiceList> {
    const data = stored.map((d) => d.body as InvoiceList['data'][number]);
    return { first: data[0]?.id ?? null, last: data[data.length - 1]?.id ?? null, hasMore: false, data };
  }

  async paymentMethod(_s: Subscription, _c: Customer, stored: BillingDocument[]): Promise<ProviderPaymentMethod | null> {
    return (stored[0]?.body as ProviderPaymentMethod | undefined) ?? null;
  }

  /**
   * Sandbox coupons: any code of letters, digits, `_` and `-` (1..64) is a coupon the sandbox knows;
   * it keeps which are applied as documents of the subscription.
   */
  async applyCoupon(s: Subscription, code: string, stored: BillingDocument[]): Promise<ProviderOutcome> {
    if (!SANDBOX_COUPON.test(code)) invalid('couponUuid', 'the sandbox knows coupons of 1 to 64 letters, digits, _ and -');
    if (stored.some((d) => d.body.code === code && d.body.active === true)) return {};
    return { documents: [couponDocument(s, code, true, this.config.clock.now())] };
  }

  async removeCoupon(s: Subscription, code: string, stored: BillingDocument[]): Promise<ProviderOutcome> {
    if (!stored.some((d) => d.body.code === code && d.body.active === true))
      fail(ErrorCodes.NOT_FOUND, `coupon ${code} is not applied to this subscription`);
    return { documents: [couponDocument(s, code, false, this.config.clock.now())] };
  }

  /** A replacement test card (from the update-payment page). */
  replacementCard(s: Subscription, email: string | null, name: string, brand: 'visa' | 'mastercard'): BillingDocument {
    return testCardDocument(s, email, name, this.config.clock.now(), brand);
  }
}

/** A usage line of a sandbox invoice: the exact amount and unit price (a fraction of the minor unit shows in `unit_amount_decimal`). */
const usageLine = (l: UsageInvoiceLine): InvoiceLineInput => ({
  description: l.description,
  amount: l.amount,
  quantity: l.quantity,
  unitAmount: l.unitAmount ?? 0,
  proration: false,
  periodStart: l.periodStart,
  periodEnd: l.periodEnd,
});

/** The free checkout's provider name (what its sessions and subscriptions record). */
export const FREE_CHECKOUT_NAME = 'none';

/** Free plans need no payment: the same hosted checkout grants the license directly. */
export class FreeCheckout implements Pick<PaymentProvider, 'name' | 'checkoutLink' | 'purchaseCompleted'> {
  readonly name = FREE_CHECKOUT_NAME;
  constructor(private readonly links: SandboxLinks) {}
  async checkoutLink(request: CheckoutRequest) {
    return { url: this.links.checkout(request.sessionId) };
  }
  async purchaseCompleted(): Promise<ProviderOutcome> {
    return {};
  }
  /** Free subscriptions renew by themselves, with nothing to bill. */
  renewedBySweep(): ProviderOutcome {
    return {};
  }
}
