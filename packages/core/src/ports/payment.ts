import type { BillingDocument, CheckoutOptions, CheckoutSession, Customer, Plan, Product, Proration, Subscription } from '../model';

export interface CheckoutRequest {
  /** Identifies the checkout in the provider's and our records. */
  sessionId: string;
  product: Product;
  plan: Plan;
  options: CheckoutOptions;
  granteeId: string;
  member: string;
  successUrl: string;
  cancelUrl: string;
  /** Price per seat per period in the chosen currency, minor units (0 for free plans). */
  unitAmount: number;
  /** The other plans bought in the same checkout (a cart's), each a line of its own. */
  extraItems?: AddedPlanCharge[];
  /** The most seats a customer choosing the count may pick (the deployment's `MAX_SEATS`): more would be paid, then refused. */
  maxSeats?: number;
}

/** Every top-level member the contract lists for a provider invoice (every provider answers each). */
export const INVOICE_MEMBERS = [
  'id',
  'object',
  'account_country',
  'account_name',
  'account_tax_ids',
  'amount_due',
  'amount_paid',
  'amount_remaining',
  'amount_shipping',
  'application',
  'application_fee_amount',
  'attempt_count',
  'attempted',
  'auto_advance',
  'automatic_tax',
  'billing_reason',
  'charge',
  'collection_method',
  'created',
  'currency',
  'custom_fields',
  'customer',
  'customer_address',
  'customer_email',
  'customer_name',
  'customer_phone',
  'customer_shipping',
  'customer_tax_exempt',
  'customer_tax_ids',
  'default_payment_method',
  'default_source',
  'default_tax_rates',
  'description',
  'discount',
  'discounts',
  'due_date',
  'effective_at',
  'ending_balance',
  'footer',
  'from_invoice',
  'last_finalization_error',
  'latest_revision',
  'lines',
  'livemode',
  'metadata',
  'next_payment_attempt',
  'number',
  'on_behalf_of',
  'paid',
  'paid_out_of_band',
  'payment_intent',
  'payment_settings',
  'period_end',
  'period_start',
  'post_payment_credit_notes_amount',
  'pre_payment_credit_notes_amount',
  'quote',
  'receipt_number',
  'rendering',
  'rendering_options',
  'shipping_cost',
  'shipping_details',
  'starting_balance',
  'statement_descriptor',
  'status',
  'status_transitions',
  'subscription',
  'subscription_details',
  'subtotal',
  'subtotal_excluding_tax',
  'tax',
  'test_clock',
  'total',
  'total_discount_amounts',
  'total_excluding_tax',
  'total_tax_amounts',
  'transfer_data',
  'webhooks_delivered_at',
] as const;
export const INVOICE_LINE_MEMBERS = [
  'id',
  'object',
  'amount',
  'amount_excluding_tax',
  'currency',
  'description',
  'discount_amounts',
  'discountable',
  'discounts',
  'invoice_item',
  'livemode',
  'metadata',
  'period',
  'plan',
  'price',
  'proration',
  'proration_details',
  'quantity',
  'subscription',
  'subscription_item',
  'tax_amounts',
  'tax_rates',
  'type',
  'unit_amount_excluding_tax',
] as const;

/** Units of a meter used by a provider's customer (a Stripe meter event). */
export interface MeterEvent {
  /** The meter's event name at the provider: the meter's slug. */
  eventName: string;
  /** The provider's customer id. */
  customerId: string;
  /** Units, as a decimal string (exact). */
  value: string;
  /** Unique per event (its ledger entry's id): a resend is counted once. */
  identifier: string;
  timestamp: Date;
  /** The mode of the usage's tenant (a deployment with test-mode provider keys sends it there). */
  isTest?: boolean;
}

/** What the provider answered a meter event: taken, or refused (`retryable`: a later try may be taken). */
export type MeterEventOutcome = { ok: true } | { ok: false; retryable: boolean; message: string };

/** One invoice line of a closed usage period, in the subscription's currency's minor unit. */
export interface UsageInvoiceLine {
  description: string;
  quantity: number;
  /** Price of one unit (minor units, possibly fractional); null: a flat amount. */
  unitAmount: number | null;
  amount: number;
  periodStart: Date;
  periodEnd: Date;
}

/** A provider invoice, in the provider's own shape (the contract's invoice object). */
export type ProviderInvoice = Record<string, unknown> & { id: string };

export interface InvoiceList {
  first: string | null;
  last: string | null;
  hasMore: boolean;
  data: ProviderInvoice[];
}

/** A provider payment method, in the provider's own shape (the contract's payment method). */
export type ProviderPaymentMethod = Record<string, unknown> & { id: string };

/** One plan a subscription holds beyond its first, as billed: its seats at its price per seat per period (minor units). */
export interface AddedPlanCharge {
  plan: Plan;
  quantity: number;
  unitAmount: number;
}

/** A plan added to or removed from a provider's subscription (the catalog API's subscription items). */
export interface PlanItemRequest {
  subscription: Subscription;
  plan: Plan;
  /** Its seats. */
  quantity: number;
  /** Price per seat per period in the subscription's currency, minor units. */
  unitAmount: number;
  proration: Proration;
  /**
   * One id per request of the caller (the same on a retry of that call): providers that take
   * idempotency keys (Stripe) build theirs from it and the plan.
   */
  requestId?: string;
  /** The provider's item of this plan on its subscription, when Tollgate knows it (`AddedPlan.paymentItemId`). */
  paymentItemId?: string | null;
  /**
   * A removal of the subscription's first plan: the plan that becomes its first (its first added
   * plan, one this request added too), whose usage Tollgate meters from then on. A provider that
   * bills metered usage itself (Stripe) moves the subscription's metered prices to it.
   */
  promoted?: Plan;
  /**
   * The member the subscription's customer is (`Customer.value`), which a provider that writes its
   * own invoices shows on them (the sandbox's `subscription_details.metadata.member`).
   */
  member?: string;
}

export interface PlanChangeRequest {
  subscription: Subscription;
  from: Plan;
  to: Plan;
  proration: Proration;
  /** Price per seat per period of each plan in the subscription's currency, minor units. */
  fromUnitAmount: number;
  toUnitAmount: number;
  /**
   * The member the subscription's customer is (`Customer.value`), which a provider that writes its
   * own invoices shows on them (the sandbox's `subscription_details.metadata.member`).
   */
  member?: string;
}

/** What a provider asks us to keep after a call (the sandbox's invoices); empty for real providers. */
export interface ProviderOutcome {
  documents?: BillingDocument[];
  /** The provider's item made for a plan added to its subscription (Stripe's `si_...`), kept on the added plan. */
  paymentItemId?: string;
  /**
   * What the provider left undone of a change it made (the change itself taken: Tollgate writes
   * it, nothing is undone): its items an operator deletes by hand (Stripe: the old first plan's
   * metered items whose deletion failed after the update moved the plan; left, a meter's events
   * may bill twice), and why. The use case logs it as an error naming them.
   */
  leftover?: { items: string[]; reason: string };
}

export interface CompletedPurchase {
  session: CheckoutSession;
  subscription: Subscription;
  plan: Plan;
  customer: Customer;
  /** Price per seat per period in the subscription's currency, minor units (0 for free plans). */
  unitAmount: number;
  /** The other plans the subscription was bought with (a cart's), each a line of its first invoice. */
  addedPlans?: AddedPlanCharge[];
}

export interface PaymentProvider {
  /** Provider name recorded on subscriptions and licenses (`sandbox`, `stripe`, `none`). */
  readonly name: string;
  /**
   * A URL where the customer pays for the plan; with the provider's own session id where it keeps
   * one (Stripe's Checkout Session), so that asking again for the same session resumes it.
   */
  checkoutLink(request: CheckoutRequest): Promise<{ url: string; providerSessionId?: string }>;
  /**
   * The page of a checkout session the provider made earlier (`providerSessionId`) while it can
   * still be paid; null: it no longer can (expired, paid). Absent: the provider keeps no sessions.
   */
  checkoutUrl?(providerSessionId: string, session: CheckoutSession): Promise<string | null>;
  /** A URL where the customer replaces the payment method. */
  updatePaymentLink(subscription: Subscription, customer: Customer): Promise<{ url: string }>;
  /** A URL of the provider's customer portal. */
  portalLink(subscription: Subscription, customer: Customer): Promise<{ url: string }>;
  /** A URL where the customer cancels the subscription. */
  cancelLink(subscription: Subscription, customer: Customer): Promise<{ url: string }>;
  /** What the provider keeps of a purchase it reported complete (sandbox: first invoice, test card). */
  purchaseCompleted(purchase: CompletedPurchase): Promise<ProviderOutcome>;
  /**
   * Providers that bill renewals themselves report them (Stripe: `invoice.paid`) and return false;
   * the sandbox and free checkout let our sweep renew their subscriptions and return the invoice.
   */
  renewedBySweep?(
    subscription: Subscription,
    plan: Plan,
    unitAmount: number,
    usage?: UsageInvoiceLine[],
    addedPlans?: AddedPlanCharge[],
    /** The member the subscription's customer is (as `PlanChangeRequest.member`). */
    member?: string,
  ): ProviderOutcome | false;
  /**
   * A usage period closed outside a renewal (a usage-based plan change): the sandbox keeps an
   * invoice of its lines; providers that bill metered usage themselves return false.
   */
  usageBilled?(subscription: Subscription, plan: Plan, usage: UsageInvoiceLine[], member?: string): ProviderOutcome | false;
  /**
   * One unit of usage history sent, for providers that bill metered usage themselves (Stripe meter
   * events), deduplicated by the provider on `identifier` (a resend is counted once). Never
   * throws for the provider's answer: says whether it was taken, or refused and whether a later
   * try may succeed (the provider or the network down, rate limited) or never will (refused as
   * invalid). The meter-event relay sends the ledger through it.
   */
  sendMeterEvent?(event: MeterEvent): Promise<MeterEventOutcome>;
  /**
   * Why the provider cannot sell `plan` in `currency` (a currency's short name) as Tollgate prices
   * it, in words a vendor can act on; undefined when it can. Stripe: a metered line item that
   * charges for usage and has no Stripe price (Stripe would bill none of that usage). Its own
   * `checkoutLink`, `changePlan` and `removePlan` (of the promoted plan) refuse such a plan by the
   * same rule; Tollgate asks it first, to refuse a checkout, a plan change or the removal of a first
   * plan before anything is written or told to the provider, and to leave the plan out where it is
   * offered (a pricing table's links, the switch list). Absent: the provider sells every plan Tollgate does.
   */
  unsellable?(plan: Plan, currency: string): string | undefined;
  /** Moves the provider's subscription to another plan with the given proration. */
  changePlan(request: PlanChangeRequest): Promise<ProviderOutcome>;
  /**
   * Adds a plan to the provider's subscription, prorated as asked. Absent: the provider's
   * subscriptions hold one plan, and adding or removing one is refused (400).
   */
  addPlan?(request: PlanItemRequest): Promise<ProviderOutcome>;
  /** Removes a plan from the provider's subscription, prorated as asked (absent as `addPlan`). */
  removePlan?(request: PlanItemRequest): Promise<ProviderOutcome>;
  /**
   * Sets the seats of a plan added to the provider's subscription to `request.quantity` (the
   * total), prorated as asked. Absent: the seats added or removed are billed as the plan added or
   * removed in that quantity (`addPlan`/`removePlan` with the difference: the sandbox).
   */
  setPlanSeats?(request: PlanItemRequest): Promise<ProviderOutcome>;
  /**
   * Moves the provider's subscription item of the subscription's first plan to the plan's current
   * price (`unitAmount`), with no proration: the next invoice bills it. Absent: the provider bills
   * each period at the plan's current price anyway (the sandbox, the free checkout).
   */
  syncPrice?(subscription: Subscription, plan: Plan, unitAmount: number): Promise<ProviderOutcome>;
  /** Sets the provider's seat quantity with the given proration. */
  changeSeats(
    subscription: Subscription,
    plan: Plan,
    quantity: number,
    proration: Proration,
    unitAmount: number,
    /** The member the subscription's customer is (as `PlanChangeRequest.member`). */
    member?: string,
  ): Promise<ProviderOutcome>;
  /** Cancels at the provider, now or at the period end. */
  cancel(subscription: Subscription, when: 'now' | 'end'): Promise<void>;
  /** Removes a scheduled cancellation at the provider. */
  reactivate(subscription: Subscription): Promise<void>;
  /** The subscription's invoices, newest first (`stored`: the documents this provider asked us to keep). */
  listInvoices(subscription: Subscription, stored: BillingDocument[]): Promise<InvoiceList>;
  /** The subscription's default payment method, if any. */
  paymentMethod(subscription: Subscription, customer: Customer, stored: BillingDocument[]): Promise<ProviderPaymentMethod | null>;
  /**
   * Applies a coupon (the provider's promotion code or coupon id) to the subscription's next
   * invoices; applying one already applied changes nothing. A code the provider does not know is a
   * VALIDATION_FAILED naming `couponUuid`. Absent: the provider takes no coupons.
   */
  applyCoupon?(subscription: Subscription, code: string, stored: BillingDocument[]): Promise<ProviderOutcome>;
  /** Removes an applied coupon; one that is not applied is NOT_FOUND. */
  removeCoupon?(subscription: Subscription, code: string, stored: BillingDocument[]): Promise<ProviderOutcome>;
}
