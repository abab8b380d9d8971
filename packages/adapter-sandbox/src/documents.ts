import { createHash } from 'node:crypto';
import { decimalText, type BillingDocument, type Plan, type Subscription } from '@tollgate/core';

/** Sandbox invoices and cards in the provider shape the contract describes (Stripe's). */

const epoch = (d: Date) => Math.floor(d.getTime() / 1000);
const shortId = (prefix: string, seed: string) => `${prefix}_${createHash('sha256').update(seed).digest('hex').slice(0, 24)}`;

export interface InvoiceLineInput {
  description: string;
  amount: number;
  quantity: number;
  /** Minor units; a usage line's may be a fraction of the minor unit (shown as Stripe's `unit_amount_decimal`). */
  unitAmount: number;
  proration: boolean;
  periodStart: Date;
  periodEnd: Date;
}

/**
 * A unit price as Stripe shows one: `unit_amount` in whole minor units (null when the price has a
 * fraction of one, as a metered price of 0.0000075 cents has), `unit_amount_decimal` its exact text.
 */
const wholeOrNull = (unitAmount: number): number | null => (Number.isInteger(unitAmount) ? unitAmount : null);

function providerPlan(plan: Plan, currency: string, unitAmount: number) {
  return {
    id: `plan_${plan.id.replace(/-/g, '').slice(0, 20)}`,
    object: 'plan',
    active: !plan.archivedAt,
    amount: wholeOrNull(unitAmount),
    amount_decimal: decimalText(unitAmount),
    billing_scheme: 'per_unit',
    currency: currency.toLowerCase(),
    interval: plan.interval,
    interval_count: plan.length,
    livemode: false,
    metadata: {},
    nickname: plan.displayName,
    product: `prod_${plan.productId.replace(/-/g, '').slice(0, 20)}`,
    usage_type: plan.usageBased ? 'metered' : 'licensed',
  };
}

function providerPrice(plan: Plan, currency: string, unitAmount: number) {
  return {
    id: `price_${plan.id.replace(/-/g, '').slice(0, 20)}_${currency.toLowerCase()}`,
    object: 'price',
    active: !plan.archivedAt,
    billing_scheme: 'per_unit',
    currency: currency.toLowerCase(),
    livemode: false,
    metadata: {},
    nickname: plan.displayName,
    product: `prod_${plan.productId.replace(/-/g, '').slice(0, 20)}`,
    recurring: { interval: plan.interval, interval_count: plan.length, usage_type: plan.usageBased ? 'metered' : 'licensed' },
    type: 'recurring',
    unit_amount: wholeOrNull(unitAmount),
    unit_amount_decimal: decimalText(unitAmount),
  };
}

export interface InvoiceInput {
  subscription: Subscription;
  plan: Plan;
  customerEmail: string | null;
  customerName: string;
  billingReason: 'subscription_create' | 'subscription_update' | 'subscription_cycle';
  /** paid: charged now; draft: added to the next invoice. */
  status: 'paid' | 'draft';
  lines: InvoiceLineInput[];
  now: Date;
  seq: string;
  publicUrl: string;
}

export function invoiceDocument(input: InvoiceInput): BillingDocument {
  const s = input.subscription;
  const id = shortId('in', `${s.id}:${input.seq}`);
  const currency = s.currency.toLowerCase();
  const total = input.lines.reduce((n, l) => n + l.amount, 0);
  const paid = input.status === 'paid';
  const created = epoch(input.now);
  const subscriptionRef = s.paymentSubscriptionId ?? `sub_sandbox_${s.id.replace(/-/g, '').slice(0, 20)}`;
  const lines = input.lines.map((l, i) => ({
    id: shortId('il', `${id}:${i}`),
    object: 'line_item',
    amount: l.amount,
    amount_excluding_tax: l.amount,
    currency,
    description: l.description,
    discount_amounts: [],
    discountable: !l.proration,
    discounts: [],
    invoice_item: l.proration ? shortId('ii', `${id}:${i}`) : null,
    livemode: false,
    metadata: {},
    period: { start: epoch(l.periodStart), end: epoch(l.periodEnd) },
    plan: providerPlan(input.plan, currency, l.unitAmount),
    price: providerPrice(input.plan, currency, l.unitAmount),
    proration: l.proration,
    proration_details: {
      credited_items: l.amount < 0 ? { invoice: id, invoice_line_items: [shortId('il', `${id}:${i}:credited`)] } : null,
    },
    quantity: l.quantity,
    subscription: subscriptionRef,
    subscription_item: shortId('si', s.id),
    tax_amounts: [],
    tax_rates: [],
    type: l.proration ? 'invoiceitem' : 'subscription',
    unit_amount_excluding_tax: decimalText(l.unitAmount),
  }));
  const body = {
    id,
    object: 'invoice',
    account_country: 'US',
    account_name: 'Tollgate Sandbox',
    account_tax_ids: null,
    amount_due: Math.max(0, total),
    amount_paid: paid ? Math.max(0, total) : 0,
    amount_remaining: paid ? 0 : Math.max(0, total),
    amount_shipping: 0,
    application: null,
    application_fee_amount: null,
    attempt_count: paid ? 1 : 0,
    attempted: paid,
    auto_advance: !paid,
    automatic_tax: { enabled: false, status: null },
    billing_reason: input.billingReason,
    charge: paid && total > 0 ? shortId('ch', id) : null,
    collection_method: 'charge_automatically',
    created,
    currency,
    custom_fields: null,
    customer: `cus_sandbox_${s.customerId.replace(/-/g, '').slice(0, 20)}`,
    customer_address: { city: null, country: 'US', line1: null, line2: null, postal_code: '42424', state: null },
    customer_email: input.customerEmail,
    customer_name: input.customerName,
    customer_phone: null,
    customer_shipping: null,
    customer_tax_exempt: 'none',
    customer_tax_ids: [],
    default_payment_method: null,
    default_source: null,
    default_tax_rates: [],
    description: null,
    discount: null,
    discounts: [],
    due_date: null,
    effective_at: paid ? created : null,
    ending_balance: paid ? 0 : null,
    footer: null,
    from_invoice: null,
    last_finalization_error: null,
    latest_revision: null,
    lines: { object: 'list', data: lines, has_more: false, total_count: lines.length, url: `/v1/invoices/${id}/lines` },
    livemode: false,
    metadata: {},
    next_payment_attempt: paid ? null : epoch(s.currentPeriodEnd),
    number: `SBX-${id.slice(3, 11).toUpperCase()}-${input.seq}`,
    on_behalf_of: null,
    paid,
    paid_out_of_band: false,
    payment_intent: paid && total > 0 ? shortId('pi', id) : null,
    payment_settings: { default_mandate: null, payment_method_options: null, payment_method_types: null },
    period_end: epoch(input.lines[0]?.periodEnd ?? s.currentPeriodEnd),
    period_start: epoch(input.lines[0]?.periodStart ?? s.currentPeriodStart),
    post_payment_credit_notes_amount: 0,
    pre_payment_credit_notes_amount: 0,
    quote: null,
    receipt_number: null,
    rendering: null,
    rendering_options: null,
    shipping_cost: null,
    shipping_details: null,
    starting_balance: 0,
    statement_descriptor: null,
    status: paid ? 'paid' : 'draft',
    status_transitions: {
      finalized_at: paid ? created : null,
      marked_uncollectible_at: null,
      paid_at: paid ? created : null,
      voided_at: null,
    },
    subscription: subscriptionRef,
    subscription_details: { metadata: { granteeId: s.granteeId, member: input.customerName } },
    subtotal: total,
    subtotal_excluding_tax: total,
    tax: null,
    test_clock: null,
    total,
    total_discount_amounts: [],
    total_excluding_tax: total,
    total_tax_amounts: [],
    transfer_data: null,
    webhooks_delivered_at: created,
  };
  return { id, organisationId: s.organisationId, subscriptionId: s.id, kind: 'invoice', body, createdAt: input.now };
}

/** The sandbox's test card (Visa 4242), as the provider's payment method object. */
export function testCardDocument(
  s: Subscription,
  email: string | null,
  name: string,
  now: Date,
  brand: 'visa' | 'mastercard' = 'visa',
): BillingDocument {
  const id = shortId('pm', `${s.id}:${now.toISOString()}:${brand}`);
  const body = {
    id,
    object: 'payment_method',
    billing_details: {
      address: { city: null, country: 'US', line1: null, line2: null, postal_code: '42424', state: null },
      email,
      name,
      phone: null,
    },
    card: {
      brand,
      checks: { address_line1_check: null, address_postal_code_check: 'pass', cvc_check: 'pass' },
      country: 'US',
      exp_month: 12,
      exp_year: now.getUTCFullYear() + 3,
      fingerprint: shortId('fp', brand).slice(3, 19),
      funding: 'credit',
      generated_from: null,
      last4: brand === 'visa' ? '4242' : '4444',
      networks: { available: [brand], preferred: null },
      three_d_secure_usage: { supported: true },
      wallet: null,
    },
    created: epoch(now),
    customer: `cus_sandbox_${s.customerId.replace(/-/g, '').slice(0, 20)}`,
    livemode: false,
    metadata: {},
    type: 'card',
  };
  return { id, organisationId: s.organisationId, subscriptionId: s.id, kind: 'payment_method', body, createdAt: now };
}
