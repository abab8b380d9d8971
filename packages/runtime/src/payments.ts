import { DomainError, ErrorCodes, setPlanSeatsAt } from '@tollgate/core';
import type {
  BillingDocument,
  CheckoutRequest,
  CheckoutSession,
  CompletedPurchase,
  Customer,
  MeterEvent,
  PaymentProvider,
  Plan,
  PlanChangeRequest,
  PlanItemRequest,
  Proration,
  Subscription,
} from '@tollgate/core';

const notAvailable = (message: string) => new DomainError(ErrorCodes.PAYMENT_NOT_AVAILABLE, message);

/**
 * The payment provider of a deployment whose modes are billed apart (test-mode tenants never reach
 * a live Stripe key): each call goes to the provider of what it is about. A checkout by its plan's
 * mode; a subscription by the provider it records (`paymentProvider`: one billed by the sandbox
 * stays with the sandbox), then by its mode (a test-mode Stripe subscription to the test keys'
 * account, where the deployment has one). Its name is the live provider's (`stripe`).
 */
export class ModePaymentRouter implements PaymentProvider {
  readonly name: string;

  constructor(
    private readonly providers: {
      /** Live mode's provider (Stripe of the live key). */
      live: PaymentProvider;
      /** Test mode's provider of the same name (Stripe of the test key); absent: test-mode subscriptions recorded under this name stay with `live`. */
      test?: PaymentProvider;
      /** Providers of other names subscriptions may record (the sandbox billing test mode under a live key). */
      others: PaymentProvider[];
    },
  ) {
    this.name = providers.live.name;
  }

  private forMode(isTest: boolean): PaymentProvider {
    return isTest && this.providers.test ? this.providers.test : this.providers.live;
  }

  /** The provider of a subscription: the one of the name it records, else its mode's. */
  private of(s: Subscription): PaymentProvider {
    if (s.paymentProvider !== this.name) {
      const other = this.providers.others.find((p) => p.name === s.paymentProvider);
      if (other) return other;
    }
    return this.forMode(s.isTest);
  }

  checkoutLink(request: CheckoutRequest) {
    return this.forMode(request.plan.isTest).checkoutLink(request);
  }

  /** What the plan's mode's provider cannot sell (Stripe: usage with no Stripe price), as the checkout would be routed. */
  unsellable(plan: Plan, currency: string): string | undefined {
    return this.forMode(plan.isTest).unsellable?.(plan, currency);
  }

  async checkoutUrl(providerSessionId: string, session: CheckoutSession): Promise<string | null> {
    const p = this.forMode(session.isTest);
    return p.checkoutUrl ? p.checkoutUrl(providerSessionId, session) : null;
  }

  updatePaymentLink(s: Subscription, c: Customer) {
    return this.of(s).updatePaymentLink(s, c);
  }

  portalLink(s: Subscription, c: Customer) {
    return this.of(s).portalLink(s, c);
  }

  cancelLink(s: Subscription, c: Customer) {
    return this.of(s).cancelLink(s, c);
  }

  purchaseCompleted(purchase: CompletedPurchase) {
    return this.of(purchase.subscription).purchaseCompleted(purchase);
  }

  async sendMeterEvent(event: MeterEvent) {
    const p = this.forMode(event.isTest === true);
    if (!p.sendMeterEvent) return { ok: false as const, retryable: false, message: `${p.name} takes no meter events` };
    return p.sendMeterEvent(event);
  }

  changePlan(request: PlanChangeRequest) {
    return this.of(request.subscription).changePlan(request);
  }

  async addPlan(request: PlanItemRequest) {
    const p = this.of(request.subscription);
    if (!p.addPlan) throw notAvailable(`subscriptions paid through ${p.name} hold one plan`);
    return p.addPlan(request);
  }

  async removePlan(request: PlanItemRequest) {
    const p = this.of(request.subscription);
    if (!p.removePlan) throw notAvailable(`subscriptions paid through ${p.name} hold one plan`);
    return p.removePlan(request);
  }

  /**
   * The added plan's seats set to `quantity`; a provider that keeps no number (the sandbox) is told
   * the difference from what the subscription holds, as the plan's seats added or removed (core's
   * `setPlanSeatsAt`, which the use case calls too).
   */
  setPlanSeats(request: PlanItemRequest) {
    return setPlanSeatsAt(this.of(request.subscription), request);
  }

  /** A provider that bills each period at the plan's price anyway (the sandbox) has nothing to move. */
  async syncPrice(s: Subscription, plan: Plan, unitAmount: number) {
    const p = this.of(s);
    return p.syncPrice ? p.syncPrice(s, plan, unitAmount) : {};
  }

  changeSeats(s: Subscription, plan: Plan, quantity: number, proration: Proration, unitAmount: number, member?: string) {
    return this.of(s).changeSeats(s, plan, quantity, proration, unitAmount, member);
  }

  cancel(s: Subscription, when: 'now' | 'end') {
    return this.of(s).cancel(s, when);
  }

  reactivate(s: Subscription) {
    return this.of(s).reactivate(s);
  }

  listInvoices(s: Subscription, stored: BillingDocument[]) {
    return this.of(s).listInvoices(s, stored);
  }

  paymentMethod(s: Subscription, c: Customer, stored: BillingDocument[]) {
    return this.of(s).paymentMethod(s, c, stored);
  }

  async applyCoupon(s: Subscription, code: string, stored: BillingDocument[]) {
    const p = this.of(s);
    if (!p.applyCoupon) throw notAvailable(`the payment provider ${p.name} takes no coupons`);
    return p.applyCoupon(s, code, stored);
  }

  async removeCoupon(s: Subscription, code: string, stored: BillingDocument[]) {
    const p = this.of(s);
    if (!p.removeCoupon) throw notAvailable(`the payment provider ${p.name} takes no coupons`);
    return p.removeCoupon(s, code, stored);
  }
}
