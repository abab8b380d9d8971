import { ApiKeyService } from './api-keys';
import { EntitlementAdmin, PlanAdmin, PricingParts, ProductAdmin, TierTagAdmin } from './catalog';
import { CatalogFileExport, CatalogFileImport } from './catalog-file';
import { CatalogQueries } from './catalog-queries';
import { CheckoutService } from './checkout';
import { QuickCheckout } from './quick-checkout';
import { PaymentIntegrations } from './integrations';
import { Receipts } from './receipts';
import { CopyToLiveMode } from './copy-to-live';
import { Carts } from './carts';
import { limitsOf, type CoreDeps } from './deps';
import { EntitlementCache } from './check-cache';
import type { ChangeFeedHandlers } from '../ports';
import { EventWorker, type EventHandler } from './events';
import { IdempotencyService } from './idempotency';
import { JoinedUnitOfWork } from './joined-unit-of-work';
import { CapabilityChecks } from './capability-checks';
import { LicenseService } from './licenses';
import { SigningKeys } from './signing';
import {
  ProviderSync,
  SeatService,
  SubscriptionAdmin,
  SubscriptionCoupons,
  SubscriptionDirectory,
  SubscriptionItems,
  SubscriptionLifecycle,
  Sweeps,
} from './subscriptions';
import { GranteeUsage } from './grantee-usage';
import { OwnerDirectory } from './owners';
import { GranteeDirectory, GroupDirectory } from './people';
import { OutboxUnitOfWork, WebhookDestinations, WebhookDispatcher, WebhookEndpoints, WebhookEvents } from './webhooks';
import { EntitlementsCheck, MeterEventRelay, UsageService } from './usage';

/** Every use case of Tollgate, built once over the ports: what apps, the CLI and tests are given. */
export interface Core {
  apiKeys: ApiKeyService;
  queries: CatalogQueries;
  /** The catalog generation's products. */
  products: ProductAdmin;
  /** The catalog generation's plans with their entitlements and pricing. */
  plans: PlanAdmin;
  tierTags: TierTagAdmin;
  /** The catalog API's entitlements: the capabilities of the tenant's products, by id. */
  entitlementAdmin: EntitlementAdmin;
  /** Line items, prices, currency options and tiers as resources of their own (read, update, archive, delete). */
  pricingParts: PricingParts;
  importer: CatalogFileImport;
  exporter: CatalogFileExport;
  checkout: CheckoutService;
  /** The published catalog API's quick checkout (one plan, one owner, the product's settings as defaults). */
  quickCheckout: QuickCheckout;
  /** The deployment's payment providers as each tenant's integrations. */
  paymentIntegrations: PaymentIntegrations;
  /** Completed purchases as receipts. */
  receipts: Receipts;
  /** A test-mode product copied into live mode (as a catalog file is imported). */
  copyToLive: CopyToLiveMode;
  /** Carts: plans bought together, checked out through the payment provider. */
  carts: Carts;
  subscriptions: SubscriptionLifecycle;
  /** Plans added to and removed from a subscription (the catalog API's subscription items). */
  subscriptionItems: SubscriptionItems;
  /** The catalog API's subscriptions: filtered lists, auto-renew, test-mode deletion, batches. */
  subscriptionDirectory: SubscriptionDirectory;
  /** The catalog API's owners: the customers who pay. */
  owners: OwnerDirectory;
  /** The catalog API's grantees: who uses, by the vendor's identifier. */
  grantees: GranteeDirectory;
  /** The catalog API's groups: teams of grantees; a subscription's group takes its seats. */
  groups: GroupDirectory;
  seats: SeatService;
  /** Subscriptions managed directly (v2/v3): list, create without payment, owner, seat grantees. */
  subscriptionAdmin: SubscriptionAdmin;
  /** Coupons of a subscription, kept by the payment provider. */
  coupons: SubscriptionCoupons;
  providerSync: ProviderSync;
  sweeps: Sweeps;
  licenses: LicenseService;
  /** The capability check (the hot path): signed answers from the entitlement cache once warm. */
  checks: CapabilityChecks;
  worker: EventWorker;
  idempotency: IdempotencyService;
  signing: SigningKeys;
  /** Outgoing webhooks: endpoints as vendors manage them, with their attempts. */
  webhooks: WebhookEndpoints;
  /** Outgoing events: read, resent, purged after their retention; the queue's depth. */
  webhookEvents: WebhookEvents;
  /** The deliveries of events to endpoints and their attempts (the catalog's destinations and event attempts). */
  webhookDestinations: WebhookDestinations;
  /** Delivery of due webhooks (the background worker). */
  webhookDelivery: WebhookDispatcher;
  /** Meters, credits and usage: exact, group-committed. */
  usage: UsageService;
  /** Stripe meter events from the ledger (only when the payment provider bills metered usage itself). */
  meterRelay?: MeterEventRelay;
  /** The signed entitlements of a grantee, with what is left of each meter. */
  entitlements: EntitlementsCheck;
  /** Usage by grantee and plan (v2/v3), over `usage`. */
  granteeUsage: GranteeUsage;
  /** The check's entitlement cache (its statistics feed the metrics). */
  checkCache: EntitlementCache;
  /**
   * Starts hearing the change feed: the per-instance caches (entitlements, API keys, signing keys)
   * are live while it is heard, emptied and bypassed while it is not. Without a feed they stay off.
   */
  listen(): Promise<void>;
  /** Stops hearing it (shutdown). */
  stopListening(): Promise<void>;
}

/** Wires each use case to the ports it needs. The one place use cases are constructed. */
export function createCore(given: CoreDeps): Core {
  // Every transaction writes the events of what it changed (the outbox) before it commits; a use
  // case called inside another's transaction (an idempotent request's) joins it.
  const joined = new JoinedUnitOfWork(
    new OutboxUnitOfWork(given.uow, { ...given, usageEventWindowMs: limitsOf(given).usageEventWindowMs }),
  );
  const deps: CoreDeps = { ...given, uow: joined };
  const signing = new SigningKeys(deps);
  const limits = limitsOf(deps);
  const checkCache = new EntitlementCache(limits.checkCacheEntries, limits.checkIndexMaxLicenses);
  const apiKeys = new ApiKeyService({
    ...deps,
    outageGrace: () => checkCache.staleAllowed(deps.clock.now().getTime(), limits.checkOutageGraceMs, limits.changeFeedBoundMs),
    databaseAnswered: () => checkCache.databaseAnswered(),
  });
  const keyCache = apiKeys.cacheControl();
  let revalidation: ReturnType<typeof setInterval> | undefined;
  let checks: CapabilityChecks | undefined;
  /** The index's fill after the feed was (again) heard: `listen` waits for the first. */
  let indexed: Promise<void> = Promise.resolve();
  const setLive = (live: boolean) => {
    checkCache.setLive(live, deps.clock.now().getTime());
    keyCache.setLive(live);
    signing.setLive(live);
    if (live && checks)
      indexed = checks.fillIndex().catch((e: unknown) => deps.logger?.error('check index fill failed', { error: String(e) }));
  };
  const handlers: ChangeFeedHandlers = {
    onChange: (change) => {
      if (change.kind === 'apiKey') keyCache.invalidate(change.keyHash);
      else if (change.kind === 'signingKey') signing.forget(change.organisationId);
      else {
        checkCache.invalidate(change);
        // The index is kept by the feed: what changed is loaded again now, not at the next check.
        if (change.kind === 'license') checks?.refresh(change.productId, change.granteeId);
      }
    },
    onGap: () => setLive(false),
    onResume: () => setLive(true),
  };
  const seats = new SeatService(deps);
  const usage = new UsageService(deps);
  const tierTags = new TierTagAdmin(deps);
  const subscriptions = new SubscriptionLifecycle(deps);
  const checkout = new CheckoutService(deps);
  const subscriptionAdmin = new SubscriptionAdmin(deps, checkout);
  const importer = new CatalogFileImport(deps);
  const exporter = new CatalogFileExport(deps);
  const applySeats: EventHandler = (e, finish, pin) =>
    seats
      .apply(e.payload.subscriptionId, e.payload, finish, (change) => pin({ ...change, subscriptionId: e.payload.subscriptionId }))
      .then(() => undefined);
  return {
    apiKeys,
    queries: new CatalogQueries(deps),
    products: new ProductAdmin(deps),
    plans: new PlanAdmin(deps, tierTags),
    tierTags,
    entitlementAdmin: new EntitlementAdmin(deps),
    pricingParts: new PricingParts(deps),
    importer,
    exporter,
    copyToLive: new CopyToLiveMode(exporter, importer),
    carts: new Carts(deps, checkout),
    checkout,
    quickCheckout: new QuickCheckout(deps, checkout),
    paymentIntegrations: new PaymentIntegrations(deps),
    receipts: new Receipts(deps),
    subscriptions,
    subscriptionItems: new SubscriptionItems(deps),
    subscriptionDirectory: new SubscriptionDirectory(deps, subscriptions, subscriptionAdmin),
    owners: new OwnerDirectory(deps),
    grantees: new GranteeDirectory(deps),
    groups: new GroupDirectory(deps),
    seats,
    subscriptionAdmin,
    coupons: new SubscriptionCoupons(deps),
    providerSync: new ProviderSync(deps),
    sweeps: new Sweeps(deps, usage),
    licenses: new LicenseService(deps),
    checks: (checks = new CapabilityChecks(deps, signing, checkCache)),
    worker: new EventWorker(deps, { 'seats.increment': applySeats, 'seats.decrement': applySeats }),
    idempotency: new IdempotencyService({ ...deps, uow: joined }),
    signing,
    webhooks: new WebhookEndpoints(deps),
    webhookEvents: new WebhookEvents(deps),
    webhookDestinations: new WebhookDestinations(deps),
    webhookDelivery: new WebhookDispatcher(deps),
    usage,
    meterRelay: deps.payments?.sendMeterEvent ? new MeterEventRelay({ ...deps, payments: deps.payments }) : undefined,
    entitlements: new EntitlementsCheck({ ...deps, signing }),
    granteeUsage: new GranteeUsage({ uow: deps.uow, usage }),
    checkCache,
    listen: async () => {
      if (!deps.changes) return;
      await deps.changes.start(handlers);
      // Ready with the index filled (misses rare from the first request); a later resume fills in the background.
      await indexed;
      // The second line behind the feed: a revocation whose notification was lost is still seen
      // within keyRevalidateMs (a failed round, e.g. in an outage, just waits for the next).
      revalidation ??= setInterval(() => {
        apiKeys.revalidate().catch(() => undefined);
      }, limits.keyRevalidateMs);
      revalidation.unref?.();
    },
    stopListening: async () => {
      if (revalidation) clearInterval(revalidation);
      revalidation = undefined;
      setLive(false);
      await deps.changes?.stop();
    },
  };
}
