import express, { type NextFunction, type Request, type Response } from 'express';
import type Stripe from 'stripe';
import {
  ErrorCodes,
  isDomainError,
  isUuid,
  type CheckoutService,
  type ProviderSnapshot,
  type ProviderSync,
  type WebhookDelivery,
} from '@tollgate/core';
import { domainStatus } from './status';
import { isMeteredItem, type StripeSubscriptionView } from './provider';

export interface StripeWebhookDeps {
  stripe: Stripe;
  webhookSecret: string;
  /**
   * The mode of `stripe`'s key (`sk_live_`: true): an event of the other mode (`event.livemode`)
   * signed with this secret is acknowledged, logged and never applied. Absent: not compared.
   */
  livemode?: boolean;
  /**
   * Test mode's own Stripe account (a deployment's test keys beside its live ones): an event signed
   * with its secret is read through its key, must be a test-mode event, and completes test-mode
   * checkouts only.
   */
  testAccount?: { stripe: Stripe; webhookSecret: string };
  /** Seconds a signature stays valid (replay window); Stripe's default is 300. */
  toleranceSeconds?: number;
  checkout: CheckoutService;
  providerSync: ProviderSync;
  logger?: { info(m: string, f?: Record<string, unknown>): void; error(m: string, f?: Record<string, unknown>): void };
}

const idOf = (v: unknown): string | null =>
  typeof v === 'string' ? v : v && typeof v === 'object' && 'id' in v ? String((v as { id: string }).id) : null;
const date = (seconds: number | null | undefined) => (seconds ? new Date(seconds * 1000) : null);

/**
 * The period a paid invoice bills up to: its lines' latest-ending period (of those ending then, the
 * earliest-starting). A renewal invoice bills the new period's seat items in advance and the
 * period just ended's metered items in arrears, in either order: the new period is the one that
 * ends last (a metered line never ends after the period it bills; a proration line ends with the
 * current period). Earlier it was the first line's, so a metered line listed first read as no
 * renewal (its period ends where the subscription's does).
 */
export function renewedPeriod(lines: { period?: { start: number; end: number } | null }[]): { start: number; end: number } | undefined {
  let out: { start: number; end: number } | undefined;
  for (const { period: p } of lines)
    if (p && (!out || p.end > out.end || (p.end === out.end && p.start < out.start))) out = { start: p.start, end: p.end };
  return out;
}

/**
 * Our view of a Stripe subscription, read from the object Stripe returns when asked (never the
 * webhook body). A canceled one ended at Stripe's `ended_at`: its `canceled_at` is when the cancel
 * was asked, days before the end for a cancellation at the period's end.
 */
export function snapshotOf(sub: StripeSubscriptionView & { ended_at?: number | null }): ProviderSnapshot {
  // The metered items naming no plan are the first plan's usage billing (its metered line items'
  // Stripe prices, added at checkout or by a plan change), not a plan: left out, so they are never
  // taken for the first plan's item (its seats, a plan switched at Stripe) nor logged as unknown.
  // A subscription of metered items alone (a plan whose own price is metered) is read as before.
  const plans = sub.items.data.filter((i) => !isMeteredItem(i) || i.metadata?.tollgatePlan);
  const data = plans.length ? plans : sub.items.data;
  const item = data[0];
  const start = item?.current_period_start ?? sub.current_period_start ?? 0;
  const end = item?.current_period_end ?? sub.current_period_end ?? 0;
  const status = domainStatus(sub.status);
  return {
    status,
    currentPeriodStart: new Date(start * 1000),
    currentPeriodEnd: new Date(end * 1000),
    cancelAtPeriodEnd: sub.cancel_at_period_end,
    canceledAt: date(status === 'CANCELED' ? (sub.ended_at ?? sub.canceled_at) : sub.canceled_at),
    quantity: item?.quantity ?? 1,
    // Every item, so the re-sync tells them apart by plan (a subscription of several plans).
    // Each with the plan Tollgate named on it (an added plan's item, a plan change's), if any.
    items: data.map((i) => ({
      id: i.id,
      priceId: i.price.id,
      quantity: i.quantity ?? 1,
      planId: i.metadata?.tollgatePlan ?? null,
      // What its price bills: a name is trusted only for an item billing what the plan costs.
      unitAmount: i.price.unit_amount ?? null,
      currency: i.price.currency ?? null,
      interval: i.price.recurring?.interval ?? null,
      intervalCount: i.price.recurring?.interval_count ?? null,
    })),
    itemsComplete: sub.items.has_more !== true,
  };
}

/**
 * `POST /webhooks/stripe`: verifies the signature on the raw body (400 when missing, wrong or
 * stale), then treats the event as a nudge: re-fetches the object it names from Stripe and applies
 * that. Each event id is applied once. Events we do not handle answer 200 and change nothing.
 */
/** Refusals that are the database's state, not the event's: Stripe is asked to send the event again. */
const RETRIED = new Set<string>([ErrorCodes.DATABASE_UNAVAILABLE, ErrorCodes.BUSY, ErrorCodes.CONFLICT]);

/**
 * Refusals of a paid checkout's completion that are acknowledged: recorded already (a session
 * completed once), or not ours (a session of another app on the same account).
 */
const COMPLETION_ACKNOWLEDGED = new Set<string>([ErrorCodes.CHECKOUT_ALREADY_COMPLETED, ErrorCodes.CHECKOUT_SESSION_NOT_FOUND]);

/** A checkout Stripe took payment for that was not recorded: never acknowledged, so never lost. */
class PaidCheckoutNotRecorded extends Error {
  constructor(
    readonly code: string,
    readonly reason: string,
    readonly sessionId: string,
  ) {
    super(reason);
  }
}

export function createStripeWebhookRouter(deps: StripeWebhookDeps): express.Router {
  const r = express.Router();
  r.post('/', express.raw({ type: () => true, limit: '1mb' }), async (req: Request, res: Response) => {
    const signature = req.header('stripe-signature');
    const raw = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    let event: Stripe.Event;
    let account: Account;
    try {
      if (!signature) throw new Error('missing Stripe-Signature header');
      ({ event, account } = verify(deps, raw, signature));
    } catch (e) {
      // A fixed answer: the library's message would tell a caller what about the signature was wrong.
      deps.logger?.info('stripe webhook refused', { reason: (e as Error).message });
      res.status(400).json({ error: 'webhook signature verification failed', code: 'WEBHOOK_SIGNATURE_INVALID' });
      return;
    }
    if (!isEvent(event)) {
      // Signed, but not an event (`null`, an array, an object without a type or data): nothing to apply.
      deps.logger?.info('stripe webhook refused', { reason: 'the signed body is not an event object' });
      res.status(400).json({ error: 'the webhook body is not a Stripe event', code: 'WEBHOOK_EVENT_INVALID' });
      return;
    }
    if (account.livemode !== undefined && event.livemode !== account.livemode) {
      // A live event on a test secret (or the reverse): a misconfigured endpoint, never applied.
      deps.logger?.error('stripe webhook of the other mode ignored', {
        eventId: event.id,
        type: event.type,
        eventLivemode: event.livemode,
        keyLivemode: account.livemode,
      });
      res.status(200).json({ received: true, result: 'ignored' });
      return;
    }
    const delivery: WebhookDelivery = { provider: 'stripe', eventId: event.id };
    try {
      const result = await handle({ ...deps, stripe: account.stripe }, event, delivery, account.isTest);
      deps.logger?.info('stripe webhook', { eventId: event.id, type: event.type, result });
      res.status(200).json({ received: true, result });
    } catch (e) {
      if (e instanceof PaidCheckoutNotRecorded) {
        // The customer paid and Stripe bills on: acknowledged, Stripe would never send it again and
        // Tollgate would hold no subscription, license or record of it. Sent again until mended.
        deps.logger?.error('stripe webhook: a paid checkout could not be recorded; Stripe will send it again', {
          eventId: event.id,
          type: event.type,
          sessionId: e.sessionId,
          code: e.code,
          message: e.reason,
        });
        res.status(500).json({ error: 'the paid checkout could not be recorded; it will be retried', code: e.code });
        return;
      }
      if (isDomainError(e) && RETRIED.has(e.code)) {
        // The database did not take it (an outage, a full pool, a collision): nothing was applied, and
        // the event is Stripe's to send again (it retries a non-2xx answer for days). Acknowledged, the
        // re-sync that repairs a change the provider took but our write lost would never come.
        deps.logger?.error('stripe webhook not applied; Stripe will send it again', { eventId: event.id, type: event.type, code: e.code });
        res
          .status(503)
          .setHeader('retry-after', '5')
          .json({ error: 'the event could not be applied now; it will be retried', code: e.code });
        return;
      }
      if (isDomainError(e)) {
        // Not ours to apply (a session of another app on the same account, say): acknowledge, so Stripe stops retrying.
        deps.logger?.info('stripe webhook ignored', { eventId: event.id, type: event.type, code: e.code, message: e.message });
        res.status(200).json({ received: true, result: 'ignored' });
        return;
      }
      deps.logger?.error('stripe webhook failed', { eventId: event.id, type: event.type, error: (e as Error).message });
      res.status(500).json({ error: 'the event could not be applied; it will be retried' });
    }
  });
  // The raw body's own refusals (too large, an encoding it cannot undo, a body that does not
  // decompress): fixed answers, as the signature's, never the parser's page or stack.
  r.use((err: unknown, _req: Request, res: Response, next: NextFunction) => {
    const e = err as { type?: unknown; status?: unknown; statusCode?: unknown } | null;
    const status = typeof e?.status === 'number' ? e.status : e?.statusCode;
    if (res.headersSent || typeof status !== 'number' || status < 400 || status > 499) return next(err);
    deps.logger?.info('stripe webhook refused', { reason: e?.type ?? `status ${status}` });
    if (e?.type === 'entity.too.large')
      return void res.status(413).json({ error: 'the webhook body is too large', code: 'WEBHOOK_BODY_TOO_LARGE' });
    if (e?.type === 'encoding.unsupported' || e?.type === 'charset.unsupported')
      return void res.status(415).json({ error: 'the webhook body has an unsupported encoding', code: 'WEBHOOK_BODY_UNSUPPORTED' });
    res.status(400).json({ error: 'the webhook body could not be read', code: 'WEBHOOK_BODY_INVALID' });
  });
  return r;
}

/** A verified body that is an event: an object with an id, a type and the object it is about. */
function isEvent(event: unknown): event is Stripe.Event {
  if (!event || typeof event !== 'object' || Array.isArray(event)) return false;
  const e = event as { id?: unknown; type?: unknown; data?: unknown };
  const data = e.data as { object?: unknown } | null | undefined;
  return (
    typeof e.id === 'string' &&
    typeof e.type === 'string' &&
    !!data &&
    typeof data === 'object' &&
    !!data.object &&
    typeof data.object === 'object'
  );
}

/** A Stripe account whose events the endpoint takes: its key, its mode, and the tenants' mode it bills alone, if any. */
interface Account {
  stripe: Stripe;
  livemode?: boolean;
  isTest?: boolean;
}

/** The event, verified with the secret of the account that signed it (the live or only one first, then test mode's own). */
function verify(deps: StripeWebhookDeps, raw: Buffer, signature: string): { event: Stripe.Event; account: Account } {
  const tolerance = deps.toleranceSeconds ?? 300;
  try {
    return { event: deps.stripe.webhooks.constructEvent(raw, signature, deps.webhookSecret, tolerance), account: deps };
  } catch (e) {
    const test = deps.testAccount;
    if (!test) throw e;
    try {
      return {
        event: test.stripe.webhooks.constructEvent(raw, signature, test.webhookSecret, tolerance),
        account: { stripe: test.stripe, livemode: false, isTest: true },
      };
    } catch {
      throw e;
    }
  }
}

/** The subscription as Stripe holds it now. */
async function fetchSnapshot(deps: StripeWebhookDeps, subscriptionId: string): Promise<ProviderSnapshot> {
  return snapshotOf((await deps.stripe.subscriptions.retrieve(subscriptionId)) as unknown as StripeSubscriptionView);
}

async function handle(deps: StripeWebhookDeps, event: Stripe.Event, delivery: WebhookDelivery, isTest?: boolean): Promise<string> {
  const objectId = idOf(event.data.object);
  switch (event.type) {
    case 'checkout.session.completed':
    case 'checkout.session.async_payment_succeeded': {
      const session = await deps.stripe.checkout.sessions.retrieve(objectId as string, { expand: ['line_items'] });
      // Tollgate's sessions carry its session id (a UUID) as the reference; another app's on the same
      // account (an `order_123`) is not looked up, so it is acknowledged, never retried.
      if (session.mode !== 'subscription' || !session.client_reference_id || !isUuid(session.client_reference_id)) return 'ignored';
      if (session.payment_status !== 'paid' && session.payment_status !== 'no_payment_required') return 'awaiting payment';
      const subscriptionId = idOf(session.subscription);
      const sessionId = session.client_reference_id;
      const done = await deps.checkout
        .completeCheckout(sessionId, {
          paymentSubscriptionId: subscriptionId,
          paymentCustomerId: idOf(session.customer),
          email: session.customer_details?.email ?? null,
          // The seat line's: Tollgate lists it first, the metered prices' lines (no quantity) last.
          quantity: session.line_items?.data[0]?.quantity ?? undefined,
          delivery,
          ...(isTest !== undefined ? { isTest } : {}),
        })
        .catch((e: unknown) => {
          if (isDomainError(e) && !RETRIED.has(e.code) && !COMPLETION_ACKNOWLEDGED.has(e.code))
            throw new PaidCheckoutNotRecorded(e.code, e.message, sessionId);
          throw e;
        });
      if (subscriptionId) {
        // Stripe's period and trial are the truth for the subscription just created; again on a
        // replay (a sync that failed after the checkout committed answered 500, and Stripe retried).
        await deps.providerSync.syncFetched(subscriptionId, () => fetchSnapshot(deps, subscriptionId));
      }
      return done.status;
    }
    case 'customer.subscription.created':
    case 'customer.subscription.updated':
    case 'customer.subscription.paused':
    case 'customer.subscription.resumed':
    case 'customer.subscription.deleted': {
      // Fetched again if another event's sync lands meanwhile: an older snapshot never overwrites a newer one.
      return deps.providerSync.syncFetched(objectId as string, () => fetchSnapshot(deps, objectId as string), delivery);
    }
    case 'invoice.paid': {
      const invoice = (await deps.stripe.invoices.retrieve(objectId as string)) as unknown as {
        subscription?: string | { id: string } | null;
        parent?: { subscription_details?: { subscription?: string | { id: string } } | null } | null;
        lines: { data: { period?: { start: number; end: number } | null }[] };
      };
      const subscriptionId = idOf(invoice.parent?.subscription_details?.subscription) ?? idOf(invoice.subscription);
      const period = renewedPeriod(invoice.lines.data);
      if (!subscriptionId || !period) return 'ignored';
      return deps.providerSync.renew(subscriptionId, new Date(period.start * 1000), new Date(period.end * 1000), delivery);
    }
    default:
      return 'ignored';
  }
}
