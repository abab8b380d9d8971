import { createHash, createHmac, randomBytes, randomUUID } from 'node:crypto';
import type { Customer, Plan, Proration, Subscription } from '../model';
import { webhookTargetRefusal } from '../domain/webhook-targets';
import type {
  CheckoutRequest,
  Clock,
  CompletedPurchase,
  EventQueue,
  IdGenerator,
  InvoiceList,
  PaymentProvider,
  PlanChangeRequest,
  ProviderOutcome,
  ProviderPaymentMethod,
  KeyCipher,
  SignatureScheme,
  WebhookRequest,
  WebhookResponse,
  WebhookSender,
  WebhookSigner,
} from '../ports';

/** A clock that stands still until moved. */
export class FixedClock implements Clock {
  constructor(private current: Date = new Date('2026-01-15T12:00:00.000Z')) {}
  now(): Date {
    return new Date(this.current.getTime());
  }
  set(date: Date | string): void {
    this.current = new Date(date);
  }
  advanceDays(days: number): void {
    this.current = new Date(this.current.getTime() + days * 86_400_000);
  }
}

export class RandomIds implements IdGenerator {
  newId(): string {
    return randomUUID();
  }
}

/** HMAC-SHA256 as a signature scheme: what the use cases need to tell a signed check from an unsigned one. */
export class FakeScheme implements SignatureScheme<Buffer> {
  readonly algorithm = 'hmac-sha256' as const;
  generate() {
    return { publicKey: '', secret: randomBytes(32) };
  }
  load(secret: Buffer): Buffer {
    return secret;
  }
  sign(key: Buffer, message: string): string {
    return createHmac('sha256', key).update(message).digest('hex');
  }
  verify(key: { secret?: Buffer }, message: string, signature: string): boolean {
    return !!key.secret && this.sign(key.secret, message) === signature;
  }
  publicHash(key: { id: string }): string {
    return createHash('sha256').update(key.id).digest('hex');
  }
  publicKeyPem(): null {
    return null;
  }
}

/** Keeps secrets as base64: only for tests, where nothing is at rest. */
export class PlainCipher implements KeyCipher {
  seal(plain: Buffer): string {
    return plain.toString('base64');
  }
  open(sealed: string): Buffer {
    return Buffer.from(sealed, 'base64');
  }
}

export class CountingEventQueue implements EventQueue {
  wakes = 0;
  wake(): void {
    this.wakes++;
  }
}

export type PaymentCall =
  | { op: 'checkoutLink'; request: CheckoutRequest }
  | { op: 'changePlan'; request: PlanChangeRequest }
  | { op: 'changeSeats'; subscriptionId: string; quantity: number; proration: Proration }
  | { op: 'cancel'; subscriptionId: string; when: 'now' | 'end' }
  | { op: 'reactivate'; subscriptionId: string }
  | { op: 'link'; kind: 'updatePayment' | 'portal' | 'cancel'; subscriptionId: string }
  | { op: 'purchaseCompleted'; subscriptionId: string };

/** Records every call; `failNext` makes the next call throw, as a provider outage would. */
export class FakePaymentProvider implements PaymentProvider {
  readonly name = 'fake';
  calls: PaymentCall[] = [];
  failNext: Error | undefined;

  private record(call: PaymentCall): void {
    if (this.failNext) {
      const e = this.failNext;
      this.failNext = undefined;
      throw e;
    }
    this.calls.push(call);
  }

  async checkoutLink(request: CheckoutRequest) {
    this.record({ op: 'checkoutLink', request });
    return { url: `https://pay.example.test/checkout/${request.sessionId}` };
  }
  async updatePaymentLink(s: Subscription, _c: Customer) {
    this.record({ op: 'link', kind: 'updatePayment', subscriptionId: s.id });
    return { url: `https://pay.example.test/payment/${s.id}` };
  }
  async portalLink(s: Subscription, _c: Customer) {
    this.record({ op: 'link', kind: 'portal', subscriptionId: s.id });
    return { url: `https://pay.example.test/portal/${s.id}` };
  }
  async cancelLink(s: Subscription, _c: Customer) {
    this.record({ op: 'link', kind: 'cancel', subscriptionId: s.id });
    return { url: `https://pay.example.test/cancel/${s.id}` };
  }
  async purchaseCompleted(p: CompletedPurchase): Promise<ProviderOutcome> {
    this.record({ op: 'purchaseCompleted', subscriptionId: p.subscription.id });
    return {};
  }
  async changePlan(request: PlanChangeRequest): Promise<ProviderOutcome> {
    this.record({ op: 'changePlan', request });
    return {};
  }
  async changeSeats(s: Subscription, _plan: Plan, quantity: number, proration: Proration, _unitAmount: number): Promise<ProviderOutcome> {
    this.record({ op: 'changeSeats', subscriptionId: s.id, quantity, proration });
    return {};
  }
  async cancel(s: Subscription, when: 'now' | 'end') {
    this.record({ op: 'cancel', subscriptionId: s.id, when });
  }
  async reactivate(s: Subscription) {
    this.record({ op: 'reactivate', subscriptionId: s.id });
  }
  async listInvoices(s: Subscription): Promise<InvoiceList> {
    const data = [fakeInvoice(s)];
    return { first: data[0].id, last: data[0].id, hasMore: false, data };
  }
  async paymentMethod(_s: Subscription, c: Customer): Promise<ProviderPaymentMethod | null> {
    const address = { city: null, country: null, line1: null, line2: null, postal_code: null, state: null };
    return {
      id: 'pm_fake',
      object: 'payment_method',
      billing_details: { address, email: null, name: null, phone: null },
      card: {
        brand: 'visa',
        checks: { address_line1_check: null, address_postal_code_check: null, cvc_check: 'pass' },
        country: 'US',
        exp_month: 12,
        exp_year: 2030,
        fingerprint: 'fake',
        funding: 'credit',
        generated_from: null,
        last4: '4242',
        networks: { available: ['visa'], preferred: null },
        three_d_secure_usage: { supported: true },
        wallet: null,
      },
      created: 0,
      customer: c.paymentCustomerId,
      livemode: false,
      metadata: {},
      type: 'card',
    };
  }
}

/** Every top-level member of a provider invoice (the contract's list), for the fake's documents. */
const INVOICE_MEMBERS = [
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
];

/** A provider invoice of the fake: every member the contract lists (most null), the typed ones typed. */
function fakeInvoice(s: Subscription) {
  const id = `in_${s.id.slice(0, 8)}`;
  return {
    ...Object.fromEntries(INVOICE_MEMBERS.map((m) => [m, null])),
    id,
    object: 'invoice',
    created: 0,
    period_start: 0,
    period_end: 0,
    automatic_tax: { enabled: false, status: null },
    status_transitions: { finalized_at: null, marked_uncollectible_at: null, paid_at: null, voided_at: null },
    subscription: s.id,
    subscription_details: { metadata: { granteeId: s.granteeId, member: null } },
    payment_settings: { default_mandate: null, payment_method_options: null, payment_method_types: null },
    lines: { object: 'list', data: [], has_more: false, total_count: 0, url: `/v1/invoices/${id}/lines` },
  };
}

/**
 * A webhook sender without sockets: records each request and answers from a script (default 200).
 * It keeps the real sender's rules (describeWebhookSenderContract): the same address guard, a
 * timeout (an answer later than `timeoutMs` is "no answer"), and a 3xx is an answer, never followed.
 */
export class ScriptedWebhookSender implements WebhookSender {
  readonly sent: WebhookRequest[] = [];
  private readonly allowPrivate: boolean;
  private readonly timeoutMs: number;
  constructor(
    private readonly answer: (req: WebhookRequest, index: number) => WebhookResponse | Promise<WebhookResponse> = () => ({
      status: 200,
      body: 'ok',
    }),
    options: { allowPrivate?: boolean; timeoutMs?: number } = {},
  ) {
    this.allowPrivate = options.allowPrivate ?? false;
    this.timeoutMs = options.timeoutMs ?? 10_000;
  }
  refusal(url: string): string | null {
    return webhookTargetRefusal(url, { allowPrivate: this.allowPrivate });
  }
  async send(req: WebhookRequest): Promise<WebhookResponse> {
    const refusal = this.refusal(req.url);
    if (refusal) return { status: null, error: `refused: the URL ${refusal}` };
    this.sent.push(req);
    const answer = Promise.resolve(this.answer(req, this.sent.length - 1));
    if (!Number.isFinite(this.timeoutMs)) return answer;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<WebhookResponse>((resolve) => {
      timer = setTimeout(() => resolve({ status: null, error: `no answer within ${this.timeoutMs} ms` }), this.timeoutMs);
    });
    return Promise.race([answer, late]).finally(() => clearTimeout(timer));
  }
}

/**
 * A webhook signer for tests: fresh random secrets, and a "signature" that spells out what was
 * signed (base64 of secret, id, timestamp and body), so a test can read it back. Not a MAC: the
 * real one is adapter-webhooks' StandardWebhookSigner.
 */
export class FakeWebhookSigner implements WebhookSigner {
  newSecret(): string {
    return `whsec_${randomBytes(24).toString('base64')}`;
  }
  headers(secret: string, id: string, at: Date, body: string): Record<string, string> {
    const timestamp = Math.floor(at.getTime() / 1000);
    return {
      'content-type': 'application/json',
      'webhook-id': id,
      'webhook-timestamp': String(timestamp),
      'webhook-signature': FakeWebhookSigner.signature(secret, id, timestamp, body),
    };
  }
  static signature(secret: string, id: string, timestamp: number, body: string): string {
    return `v1,${Buffer.from(JSON.stringify([secret, id, timestamp, body])).toString('base64')}`;
  }
}
