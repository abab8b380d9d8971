import { DEFAULT_MAX_SEATS } from '../domain/limits';
import { DEFAULT_CHECK_CACHE_ENTRIES, DEFAULT_CHECK_INDEX_MAX_LICENSES } from './check-cache';
import type {
  ChangeFeed,
  Clock,
  EventQueue,
  IdGenerator,
  KeyCipher,
  Logger,
  PaymentProvider,
  Randomness,
  SignatureScheme,
  UnitOfWork,
  WebhookSender,
  WebhookSigner,
} from '../ports';

/** Everything a use case may reach outside the domain, injected by a composition root. */
export interface CoreDeps {
  uow: UnitOfWork;
  /** Reads that may lag the primary a little (a read replica): the check's snapshot loads. Absent: `uow`. */
  readUow?: UnitOfWork;
  /** The invalidations every instance hears; absent: the per-instance caches stay off. */
  changes?: ChangeFeed;
  clock: Clock;
  ids: IdGenerator;
  /** Secure randomness for secrets and tokens (API keys). */
  random: Randomness;
  payments: PaymentProvider;
  /**
   * The payment provider of test-mode tenants' paid checkouts, where it is not `payments`: the
   * sandbox when the deployment's Stripe key is live and it has no test-mode key (a test-mode
   * checkout never reaches a live account). Absent: `payments` bills both modes.
   */
  testPayments?: PaymentProvider;
  /**
   * Providers of other names that `payments` sends the subscriptions recording them to (under a
   * live Stripe key, `payments` is the mode router and the sandbox is here, with or without test
   * keys): found by a subscription's `paymentProvider` for its renewals, usage bills and plan
   * rules. They bill test mode only: the sweep renews only their test-mode subscriptions (a
   * live-mode sandbox subscription left from before Stripe was configured is not renewed).
   */
  otherPayments?: PaymentProvider[];
  /** How capability checks are signed (ECDSA or HMAC). */
  scheme: SignatureScheme;
  /** Encrypts signing keys at rest. */
  cipher: KeyCipher;
  events: EventQueue;
  /** POSTs outgoing webhooks; absent: events are still written, nothing is delivered. */
  webhooks?: WebhookSender;
  /** Signs outgoing webhooks and makes endpoint secrets (Standard Webhooks); needed with `webhooks`. */
  webhookSigner?: WebhookSigner;
  /** Where use cases report failures that callers do not see (absent: nowhere). */
  logger?: Logger;
  /** Bounds on what one request may create (defaults: `DEFAULT_LIMITS`). */
  limits?: Partial<CoreLimits>;
  /** Hosted checkout for free plans, which need no payment provider (default: `payments`). */
  freeCheckout?: Pick<PaymentProvider, 'name' | 'checkoutLink' | 'purchaseCompleted' | 'renewedBySweep'>;
}

/** A provider subscriptions are bought through: the payment provider, or the free checkout. */
export type SubscriptionProvider = NonNullable<CoreDeps['freeCheckout']>;

/**
 * This instance's providers of subscriptions: the payment provider, test mode's (`testPayments`),
 * the payment provider's others (`otherPayments`), and the free checkout where one is set; one per name.
 */
export const subscriptionProviders = (
  deps: Pick<CoreDeps, 'payments' | 'testPayments' | 'otherPayments' | 'freeCheckout'>,
): SubscriptionProvider[] =>
  [deps.payments, deps.testPayments, ...(deps.otherPayments ?? []), deps.freeCheckout].filter(
    (p, i, all): p is SubscriptionProvider => p !== undefined && all.findIndex((q) => q?.name === p.name) === i,
  );

/**
 * Whether the provider, one of `subscriptionProviders(deps)`, bills test-mode subscriptions only
 * (`testPayments`, `otherPayments`: the sandbox beside a live Stripe key): the sweep renews none of
 * its live-mode subscriptions. Of those providers, every one but the payment provider and the free checkout.
 */
export const billsTestModeOnly = (deps: Pick<CoreDeps, 'payments' | 'freeCheckout'>, p: Pick<SubscriptionProvider, 'name'>): boolean =>
  p.name !== deps.payments.name && p.name !== deps.freeCheckout?.name;

/** The provider of this instance a subscription was bought through (by its `paymentProvider`), if any. */
export const providerOf = (
  deps: Pick<CoreDeps, 'payments' | 'testPayments' | 'otherPayments' | 'freeCheckout'>,
  s: { paymentProvider: string },
): SubscriptionProvider | undefined => subscriptionProviders(deps).find((p) => p.name === s.paymentProvider);

export interface CoreLimits {
  /** Seats one subscription may hold (checkout, pay, increment, provider sync). */
  maxSeats: number;
  /** Ad hoc licenses one request may create. */
  maxLicensesPerRequest: number;
  /**
   * How long a worker holds an event it applies or a webhook delivery it POSTs; a crashed worker's
   * work is claimed again after it. Above the POST's 10 s timeout, or a slow receiver may get a delivery twice.
   */
  eventLeaseMs: number;
  /** How long outgoing webhook events are kept once no delivery waits for them. */
  webhookEventRetentionMs: number;
  /** Entitlement snapshots one instance keeps (LRU). */
  checkCacheEntries: number;
  /**
   * Licenses (one per grantee, product and plan) the check's in-memory index may hold
   * (`CHECK_INDEX_MAX_LICENSES`): above it, no index, the LRU answers; 0: never an index.
   */
  checkIndexMaxLicenses: number;
  /** How often every cached API key is re-validated against the database (the second line behind the change feed). */
  keyRevalidateMs: number;
  /** How long after the change feed was last heard checks may be answered from memory while the database does not answer (0: never). */
  checkOutageGraceMs: number;
  /**
   * The change feed's bound (`CHANGE_FEED_BOUND_MS`): checks are answered from memory in an outage
   * only if the database stopped answering within this long of the feed being lost.
   */
  changeFeedBoundMs: number;
  /** Webhook POSTs one instance makes at once. */
  webhookConcurrency: number;
  /** Months of usage ledger kept (`USAGE_LEDGER_RETENTION_MONTHS`); 0: every month is kept. */
  usageLedgerRetentionMonths: number;
  /**
   * Group commit of usage operations (`USAGE_GROUP_COMMIT`); false: each operation is its own
   * transaction, waiting on the balance's row lock (the baseline the benchmark compares with).
   */
  usageGroupCommit: boolean;
  /**
   * How old the first ledger entry after the meter-event relay's cursor must be before the relay
   * sums what waits into meter events (`USAGE_METER_WINDOW_SECONDS`); 0: no waiting.
   */
  usageMeterWindowMs: number;
  /**
   * How often a usage balance may tell its usage by a `usage.recorded` event
   * (`USAGE_EVENT_WINDOW_SECONDS`): usage of a balance that told less than this long ago waits for
   * the window to pass (`reportUsage`); 0: every write that used units tells it.
   */
  usageEventWindowMs: number;
  /** Deliveries one endpoint may have in flight at once, across instances (a slow receiver holds no more). */
  webhookPerEndpoint: number;
  /** Deliveries one organisation may have in flight at once, across instances (a crowded tenant leaves slots to others). */
  webhookPerOrganisation: number;
}

export const DEFAULT_LIMITS: CoreLimits = {
  maxSeats: DEFAULT_MAX_SEATS,
  maxLicensesPerRequest: 100,
  eventLeaseMs: 120_000,
  webhookEventRetentionMs: 30 * 86_400_000,
  checkCacheEntries: DEFAULT_CHECK_CACHE_ENTRIES,
  checkIndexMaxLicenses: DEFAULT_CHECK_INDEX_MAX_LICENSES,
  keyRevalidateMs: 500,
  checkOutageGraceMs: 60_000,
  changeFeedBoundMs: 1_000,
  webhookConcurrency: 16,
  usageLedgerRetentionMonths: 0,
  usageGroupCommit: true,
  usageMeterWindowMs: 60_000,
  usageEventWindowMs: 60_000,
  webhookPerEndpoint: 4,
  webhookPerOrganisation: 8,
};

export const limitsOf = (deps: Pick<CoreDeps, 'limits'>): CoreLimits => ({ ...DEFAULT_LIMITS, ...deps.limits });
