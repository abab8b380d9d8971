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
  PlanItemRequest,
  ProviderOutcome,
  ProviderPaymentMethod,
  KeyCipher,
  Randomness,
  SignatureScheme,
  SignedLinks,
  WebhookRequest,
  WebhookResponse,
  WebhookSender,
  WebhookSigner,
} from '../ports';
import { INVOICE_MEMBERS } from '../ports';

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
  /** Real elapsed time: the date stands still, but a wait measured in durations still ends. */
  monotonicMs(): number {
    return performance.now();
  }
}

/**
 * Random-looking bytes from a seed (SHA-256 of seed and counter): a test may fix the seed to get the
 * same secrets every run; the default seed is fresh, so two cores never hand out the same secret.
 */
export class SeededRandomness implements Randomness {
  private counter = 0;
  constructor(private readonly seed: string = randomUUID()) {}
  bytes(size: number): Buffer {
    const out: Buffer[] = [];
    for (let n = 0; n < size; n += 32) out.push(createHash('sha256').update(`${this.seed}:${this.counter++}`).digest());
    return Buffer.concat(out).subarray(0, size);
  }
}

/** Signed links with a readable payload and a truncated SHA-256 of secret and body as the seal: enough to refuse forgeries in tests. */
export class FakeSignedLinks implements SignedLinks {
  constructor(private readonly secret = 'fake links') {}
  sign(payload: object, ttlMs: number, now: Date): string {
    const body = Buffer.from(JSON.stringify({ ...payload, exp: now.getTime() + ttlMs })).toString('base64url');
    return `${body}~${this.seal(body)}`;
  }
  verify<T>(token: string, now: Date): T | undefined {
    const [body, seal, ...rest] = token.split('~');
    if (!body || seal !== this.seal(body) || rest.length) return undefined;
    try {
      const payload = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as T & { exp: number };
      return payload.exp > now.getTime() ? payload : undefined;
    } catch {
      return undefined;
    }
  }
  private seal(body: string): string {
    return createHash('sha256').update(`${this.secret}:${body}`).digest('base64url').slice(0, 16);
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

/**
 * Seals with a keystream and a check value drawn from SHA-256 of the key and a fresh nonce: no
 * protection worth the name, but it keeps the KeyCipher contract (a new sealed form each time, the
 * secret not in it, another key's or a changed seal refused), so tests meet the real cipher's behaviour.
 */
export class FakeCipher implements KeyCipher {
  constructor(private readonly key: string = 'fake cipher key') {}
  seal(plain: Buffer): string {
    const nonce = randomBytes(9).toString('base64url');
    const body = this.xor(plain, nonce).toString('base64url');
    return `fake.${nonce}.${body}.${this.check(nonce, body)}`;
  }
  open(sealed: string): Buffer {
    const [kind, nonce, body, check, ...rest] = sealed.split('.');
    if (kind !== 'fake' || !nonce || body === undefined || rest.length) throw new Error('not a sealed secret');
    if (check !== this.check(nonce, Buffer.from(body, 'base64url').toString('base64url')))
      throw new Error('sealed under another key, or changed');
    return this.xor(Buffer.from(body, 'base64url'), nonce);
  }
  private xor(data: Buffer, nonce: string): Buffer {
    const out = Buffer.alloc(data.length);
    for (let i = 0; i < data.length; i += 32) {
      const pad = createHash('sha256').update(`${this.key}:${nonce}:${i}`).digest();
      for (let j = 0; j < 32 && i + j < data.length; j++) out[i + j] = data[i + j] ^ pad[j];
    }
    return out;
  }
  private check(nonce: string, body: string): string {
    return createHash('sha256').update(`${this.key}:${nonce}:${body}`).digest('base64url').slice(0, 16);
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
  | { op: 'addPlan' | 'removePlan'; request: PlanItemRequest }
  | { op: 'changeSeats'; subscriptionId: string; quantity: number; proration: Proration }
  | { op: 'cancel'; subscriptionId: string; when: 'now' | 'end' }
  | { op: 'reactivate'; subscriptionId: string }
  | { op: 'link'; kind: 'updatePayment' | 'portal' | 'cancel'; subscriptionId: string }
  | { op: 'purchaseCompleted'; subscriptionId: string }
  | { op: 'applyCoupon' | 'removeCoupon'; subscriptionId: string; code: string };

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
  async addPlan(request: PlanItemRequest): Promise<ProviderOutcome> {
    this.record({ op: 'addPlan', request });
    return {};
  }
  async removePlan(request: PlanItemRequest): Promise<ProviderOutcome> {
    this.record({ op: 'removePlan', request });
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
  async applyCoupon(s: Subscription, code: string): Promise<ProviderOutcome> {
    this.record({ op: 'applyCoupon', subscriptionId: s.id, code });
    return {};
  }
  async removeCoupon(s: Subscription, code: string): Promise<ProviderOutcome> {
    this.record({ op: 'removeCoupon', subscriptionId: s.id, code });
    return {};
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
