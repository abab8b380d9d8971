import type {
  SubscriptionLineItem,
  Grantee,
  Group,
  Membership,
  Cart,
  CartStatus,
  BillingDocument,
  BillingDocumentKind,
  CheckoutSession,
  IdempotencyRecord,
  IdempotencyScope,
  ApiKey,
  Currency,
  Customer,
  DomainEvent,
  Id,
  Interval,
  License,
  LicenseStatus,
  Organisation,
  Owned,
  Page,
  PaymentIntegration,
  Plan,
  PricingTable,
  Product,
  SigningAlgorithm,
  SigningKey,
  Subscription,
  Tenant,
  TierTag,
  OutboxEvent,
  DeliveryAttempt,
  OutboxDelivery,
  WebhookEndpoint,
  WebhookEventType,
} from '../model';
import type { UsageRepository } from './usage';

/** Keyset pagination over (createdAt, id): cursors stay stable when rows are inserted meanwhile. */
export interface ListQuery {
  limit: number;
  /** Opaque cursor of the last item seen: the page after it. */
  after?: string;
  /** Opaque cursor of the first item seen: the page before it. */
  before?: string;
  /** Case-insensitive substring of the name. */
  search?: string;
  includeArchived?: boolean;
}

export interface PlanListQuery extends ListQuery {
  productId?: Id;
  currency?: string;
  /** A price interval; `one_off`: prices without one (paid once). */
  interval?: Interval | 'one_off';
  intervalCount?: number;
  isActive?: boolean;
}

export interface PlanFilterOptions {
  currencies: string[];
  intervals: { interval: string | null; intervalCount: number | null }[];
}

export interface OrganisationRepository {
  /** The organisation with this id, if any. */
  get(id: Id): Promise<Organisation | undefined>;
  /**
   * The organisation with this id, its row locked until the transaction ends (a lock that lets
   * inserts of the organisation's records go on: `FOR NO KEY UPDATE` in PostgreSQL): writes that
   * must see each other across the organisation's keys (the revocation of its last `*` key) take
   * turns on it.
   */
  getForUpdate(id: Id): Promise<Organisation | undefined>;
  /** The organisation with this unique name, if any. */
  findByName(name: string): Promise<Organisation | undefined>;
  /** Inserts the organisation or updates it by id. */
  save(org: Organisation): Promise<void>;
  /** Whether there is any organisation at all (an empty database). */
  any(): Promise<boolean>;
  /** Every organisation, by name. */
  list(): Promise<Organisation[]>;
}

export interface ApiKeyRepository {
  /** The key whose SHA-256 hash this is, revoked or not. */
  findByHash(keyHash: string): Promise<ApiKey | undefined>;
  /** The key with this id, if any. */
  get(id: Id): Promise<ApiKey | undefined>;
  /** Every key of the organisation, newest first. */
  listByOrganisation(organisationId: Id): Promise<ApiKey[]>;
  /** Inserts the key or updates it by id. */
  save(key: ApiKey): Promise<void>;
  /** Of these hashes, those of keys that exist and are not revoked (one query for a whole cache). */
  liveAmong(keyHashes: string[]): Promise<string[]>;
}

export interface PaymentIntegrationRepository {
  /** The integration with this id, if any. */
  get(id: Id): Promise<PaymentIntegration | undefined>;
  /** The tenant's integration of this provider, if any. */
  findByName(tenant: Tenant, integrationName: string): Promise<PaymentIntegration | undefined>;
  /** Inserts the integration or updates it by id. */
  save(integration: PaymentIntegration): Promise<void>;
}

export interface CurrencyRepository {
  /** Every known currency (reference data shared by all organisations). */
  list(): Promise<Currency[]>;
  /** Inserts the currency or updates it by id. */
  save(currency: Currency): Promise<void>;
}

export interface ProductRepository {
  /** The product with its settings, currencies, features and capabilities, if any. */
  get(id: Id): Promise<Product | undefined>;
  /**
   * The product, its row locked until the transaction ends (`FOR NO KEY UPDATE` in PostgreSQL):
   * catalog writes of a product, its plans and its entitlements read it so and take turns on it, so
   * none writes over another's change (an archive) from an older read. Take it before its plans' locks.
   */
  getForUpdate(id: Id): Promise<Product | undefined>;
  /** The tenant's product with this catalog-file key, if any. */
  findByKey(tenant: Tenant, key: string): Promise<Product | undefined>;
  /** The tenant's products, oldest first; archived ones only when asked. */
  list(tenant: Tenant, options?: { includeArchived?: boolean }): Promise<Product[]>;
  /** One page of the tenant's products. */
  page(tenant: Tenant, query: ListQuery): Promise<Page<Product>>;
  /** Just the ownership of a product (organisation, mode, archived), without its parts: for hot paths. */
  getOwnership(id: Id): Promise<(Owned & { archivedAt: Date | null }) | undefined>;
  /** The id of the product a capability belongs to, if the capability exists. */
  capabilityProduct(capabilityId: Id): Promise<Id | undefined>;
  /** Inserts or updates the product and replaces its settings, currencies, features and capabilities. */
  save(product: Product): Promise<void>;
  /** Removes the product (with its plans, features and capabilities). */
  delete(id: Id): Promise<void>;
}

export interface PlanRepository {
  /** The plan with its currencies, capabilities, feature values and line items, if any. */
  get(id: Id): Promise<Plan | undefined>;
  /**
   * The plan, its row locked until the transaction ends (`FOR NO KEY UPDATE` in PostgreSQL), for
   * writes of the plan and its pricing parts; taken after its product's lock.
   */
  getForUpdate(id: Id): Promise<Plan | undefined>;
  /** The plans with these ids that exist. */
  getMany(ids: Id[]): Promise<Plan[]>;
  /** The plan of the product with this catalog-file key, if any. */
  findByKey(productId: Id, key: string): Promise<Plan | undefined>;
  /** Every plan of the product, oldest first, archived included. */
  listByProduct(productId: Id): Promise<Plan[]>;
  /** One page of the tenant's plans. */
  page(tenant: Tenant, query: PlanListQuery): Promise<Page<Plan>>;
  /** The names of the capabilities each plan grants (plans without any are absent). */
  capabilityNames(planIds: Id[]): Promise<Map<Id, string[]>>;
  /** Currencies and intervals present among the tenant's plans. */
  filterOptions(tenant: Tenant): Promise<PlanFilterOptions>;
  /** Inserts or updates the plan and replaces its currencies, capabilities, feature values and line items. */
  save(plan: Plan): Promise<void>;
  /** Removes the plan and its children. */
  delete(id: Id): Promise<void>;
  /** The id of the plan that holds this line item, price, currency option or tier, if any. */
  planOfPart(partId: Id): Promise<Id | undefined>;
  /** The tier tag, if any. */
  getTierTag(id: Id): Promise<TierTag | undefined>;
  /** Inserts the tier tag or updates it by id. */
  saveTierTag(tag: TierTag): Promise<void>;
  /** The organisation's tier tag of this name (case-insensitive), if any. */
  findTierTag(organisationId: Id, name: string): Promise<TierTag | undefined>;
  /** One page of the organisation's tier tags, oldest first; whose name contains `search` (any case) when asked. */
  pageTierTags(organisationId: Id, query: { limit: number; after?: string; before?: string; search?: string }): Promise<Page<TierTag>>;
}

export interface PricingTableRepository {
  /** The pricing table with its plans and features, if any. */
  get(id: Id): Promise<PricingTable | undefined>;
  /** The product's pricing tables, oldest first. */
  listByProduct(productId: Id): Promise<PricingTable[]>;
  /** Inserts or updates the table and replaces its plan and feature rows. */
  save(table: PricingTable): Promise<void>;
}

export interface CustomerRepository {
  /** The customer with this id, if any. */
  get(id: Id): Promise<Customer | undefined>;
  /** The tenant's customer with this member value, if any. */
  findByValue(tenant: Tenant, value: string): Promise<Customer | undefined>;
  /**
   * The tenant's customer with `customer.value`, inserting `customer` when there is none: the stored
   * one is returned (`customer` itself when inserted). A concurrent transaction inserting the same
   * value is waited for and its customer returned once committed, never a unique-key failure.
   */
  findOrCreate(customer: Customer): Promise<Customer>;
  /** Inserts the customer or updates it by id. */
  save(customer: Customer): Promise<void>;
  /** A page of the tenant's customers in creation order, by value or e-mail (`search`, part of either) and provider id. */
  page(tenant: Tenant, query: CustomerListQuery): Promise<Page<Customer>>;
  /** Removes the customer (the caller checked that nothing refers to it). */
  delete(id: Id): Promise<void>;
}

export interface CustomerListQuery {
  limit: number;
  after?: string;
  before?: string;
  search?: string;
  paymentCustomerId?: string;
}

/** Filters of a subscription list; every one given must hold. */
export interface SubscriptionListQuery {
  limit: number;
  after?: string;
  before?: string;
  customerIds?: Id[];
  planIds?: Id[];
  productIds?: Id[];
  statuses?: Subscription['status'][];
  ids?: Id[];
}

export interface SubscriptionRepository {
  /** The subscription, if any. */
  get(id: Id): Promise<Subscription | undefined>;
  /** The subscription, locked until the unit of work ends, so concurrent changes queue behind it. */
  getForUpdate(id: Id): Promise<Subscription | undefined>;
  /** The subscription the payment provider knows by this id, if any. */
  findByPaymentId(paymentSubscriptionId: string): Promise<Subscription | undefined>;
  /**
   * An opaque mark of the subscription row's last write: a transaction that saves it leaves another,
   * even when it changed nothing or came within the same millisecond (undefined: no such subscription).
   */
  revision(id: Id): Promise<string | undefined>;
  /** Subscriptions on this plan, oldest first. */
  listByPlan(planId: Id): Promise<Subscription[]>;
  /** How many subscriptions reference the plan, the product or the customer. */
  countReferencing(ref: { planId?: Id; productId?: Id; customerId?: Id }): Promise<number>;
  /** A page of the tenant's subscriptions in creation order, filtered. */
  page(tenant: Tenant, query: SubscriptionListQuery): Promise<Page<Subscription>>;
  /** Removes the subscription with its licenses, billing documents and queued events (test mode only, decided by the caller). */
  delete(id: Id): Promise<void>;
  /** Ids of running subscriptions whose scheduled cancellation is due at `now`. */
  listDueForCancellation(now: Date, limit: number): Promise<Id[]>;
  /**
   * Ids of running subscriptions of these providers whose period ended without a scheduled
   * cancellation, oldest period end first; of the providers in `testModeOnly`, test-mode ones only.
   */
  listDueForRenewal(now: Date, providers: string[], limit: number, testModeOnly?: string[]): Promise<Id[]>;
  /** Inserts the subscription or updates it by id; its line items (`lineItemIds`) follow, each keeping its id. */
  save(subscription: Subscription): Promise<void>;
  /** The subscription's line items, in `lineItemIds` order. */
  lineItems(subscriptionId: Id): Promise<SubscriptionLineItem[]>;
  /** A subscription's line item, if any. */
  getLineItem(id: Id): Promise<SubscriptionLineItem | undefined>;
  /** The subscription holding the added plan of this subscription-plan id (a plan beyond its first). */
  subscriptionOfPlan(subscriptionPlanId: Id): Promise<Id | undefined>;
}

export interface LicenseFilter {
  status?: LicenseStatus;
  /**
   * Only licenses whose status is not CANCELED (with `status` too: that status, if it is not
   * CANCELED). v2/v3 seats: the SDK's lists and counts of seats leave the canceled ones out.
   */
  live?: boolean;
  subscriptionId?: Id;
  productId?: Id;
  planId?: Id;
  /** The buyer (`member` at purchase). */
  purchaser?: string;
  granteeId?: string;
}

export interface LicenseCount {
  count: number;
  assigned: number;
  unassigned: number;
}

/** One license as the check's in-memory index reads it (its end as epoch milliseconds: no date per row). */
export type CheckIndexRow = Pick<License, 'productId' | 'planId' | 'status'> & { granteeId: string; endMs: number | null };

export interface LicenseRepository {
  /** The license, if any. */
  get(id: Id): Promise<License | undefined>;
  /** The licenses with these ids that exist, locked until the unit of work ends. */
  getManyForUpdate(ids: Id[]): Promise<License[]>;
  /**
   * The subscriptions these licenses are seats of, sorted by id (ad hoc licenses have none): a plain
   * read (a license never changes subscription), to lock those subscriptions before the licenses.
   */
  subscriptionsOf(ids: Id[]): Promise<Id[]>;
  /** Every license of the subscription, oldest first. */
  listBySubscription(subscriptionId: Id): Promise<License[]>;
  /** The tenant's licenses matching the filter, oldest first. */
  list(tenant: Tenant, filter: LicenseFilter): Promise<License[]>;
  /** One page of the tenant's licenses matching the filter, oldest first (keyset over creation, id). */
  page(tenant: Tenant, filter: LicenseFilter, query: { limit: number; after?: string }): Promise<Page<License>>;
  /** Counts of the tenant's licenses matching the filter, split by whether a grantee holds them. */
  count(tenant: Tenant, filter: LicenseFilter): Promise<LicenseCount>;
  /** The tenant's licenses of the product held by any of the grantees (the hot path of the check). */
  findForCheck(tenant: Tenant, productId: Id, granteeIds: string[]): Promise<License[]>;
  /**
   * Every license that grants access (`statuses`) and has a grantee, of every product, in the
   * tenant of its product (what `findForCheck` would find for the product's own tenant), reduced
   * to one row per product, grantee and plan: the latest end (null: one of them does not end) and
   * one of their statuses (all grant access). One streaming read in batches of at most `batch`
   * rows (a cursor: one consistent snapshot; run it in a unit of work); `visit` returning false
   * stops it. For the check's in-memory index.
   */
  scanForCheck(statuses: readonly string[], batch: number, visit: (rows: CheckIndexRow[]) => boolean): Promise<void>;
  /**
   * Ad hoc evaluation licenses (status `EVALUATION`, no subscription) of every organisation whose
   * end has come (`endTime <= now`), earliest end first (then id), at most `limit` ids: what
   * `Sweeps.endedEvaluations` ends. A plain read; the sweep locks and checks each again.
   */
  listEndedEvaluations(now: Date, limit: number): Promise<Id[]>;
  /** Inserts or updates each license by id. */
  saveMany(licenses: License[]): Promise<void>;
  /**
   * Removes these seats, which must be unassigned: if one has a grantee (assigned since it was read),
   * fails with CONFLICT (the unit of work then removes none), never taking a named user's seat.
   */
  deleteMany(ids: Id[]): Promise<void>;
}

export interface EventRepository {
  /** The event, if any. */
  get(id: Id): Promise<DomainEvent | undefined>;
  /** Inserts the event or updates it by id. */
  save(event: DomainEvent): Promise<void>;
  /** The event, locked until the unit of work ends. */
  getForUpdate(id: Id): Promise<DomainEvent | undefined>;
  /**
   * Leases the oldest due queued or pending event that no live lease holds, until `leaseUntil`,
   * and returns it (leased). Concurrent claimers never get the same event. An event waits while
   * an earlier unfinished event of the same subscription exists (leased or not), so the events of
   * one subscription apply in the order they were accepted.
   */
  claimNext(now: Date, leaseUntil: Date): Promise<DomainEvent | undefined>;
  /** Unfinished events of every organisation by status (the queue's depth, for metrics). */
  countOpen(): Promise<{ queued: number; pending: number }>;
  /** Whether the subscription has an unfinished event (queued or pending, leased or not). */
  hasOpen(subscriptionId: Id): Promise<boolean>;
}

export interface OutboxRepository {
  /** Writes the events (in this order: their sequence follows it). */
  append(events: OutboxEvent[]): Promise<void>;
  /**
   * `append`, answering the enabled endpoints of the events' organisations and modes (oldest
   * first) read in the same round trip (a transaction that emits events holds its row locks one
   * round trip less). Optional: without it, `append` then `enabledEndpoints` per tenant.
   */
  appendSeeingEndpoints?(events: OutboxEvent[]): Promise<WebhookEndpoint[]>;
  /** The event, if any. */
  get(id: Id): Promise<OutboxEvent | undefined>;
  /**
   * Deletes up to `limit` events created before `before` that no delivery waits for (with their
   * finished deliveries and attempts); returns how many.
   */
  purge(before: Date, limit: number): Promise<number>;
  /** One page of the tenant's events, oldest first. */
  page(tenant: Tenant, query: { limit: number; after?: string; before?: string; types?: WebhookEventType[] }): Promise<Page<OutboxEvent>>;
}

/** How many deliveries one endpoint, and one organisation, may have leased at once (every instance together). */
export interface DeliveryCaps {
  perEndpoint: number;
  perOrganisation: number;
}

export interface WebhookRepository {
  /** The endpoint, if any. */
  getEndpoint(id: Id): Promise<WebhookEndpoint | undefined>;
  /** One page of the tenant's endpoints, oldest first. */
  pageEndpoints(tenant: Tenant, query: { limit: number; after?: string; before?: string }): Promise<Page<WebhookEndpoint>>;
  /** The tenant's enabled endpoints, oldest first. */
  enabledEndpoints(tenant: Tenant): Promise<WebhookEndpoint[]>;
  /** Inserts the endpoint or updates it by id. */
  saveEndpoint(endpoint: WebhookEndpoint): Promise<void>;
  /** Removes the endpoint with its deliveries and attempts. */
  deleteEndpoint(id: Id): Promise<void>;
  /** Inserts deliveries. */
  addDeliveries(deliveries: OutboxDelivery[]): Promise<void>;
  /** The delivery, locked until the unit of work ends. */
  getDeliveryForUpdate(id: Id): Promise<OutboxDelivery | undefined>;
  /**
   * The event, if it still exists, locked against deletion until the unit of work ends (a key-share
   * lock, the one inserting a delivery of it takes): the retention purge skips it meanwhile, and a
   * purge that locked it first is waited for (the event is then gone). Taken before a delivery of
   * the event is locked, so that every path locks an event before its deliveries, as the purge's
   * cascade does (the other order deadlocks with it).
   */
  getEventForDelivery(id: Id): Promise<OutboxEvent | undefined>;
  /** Updates the delivery by id. */
  saveDelivery(delivery: OutboxDelivery): Promise<void>;
  /**
   * Leases a due pending delivery that no live lease holds, until `leaseUntil`, and returns it
   * (leased). Concurrent claimers never get the same one. A delivery waits while an earlier pending
   * delivery of the same endpoint and ordering key exists (leased or not), so an endpoint gets the
   * events of one subscription in the order they were written. Fair: of the deliveries it may
   * take, it takes one of the organisation served longest ago, then of that organisation's
   * endpoint served longest ago, then the earliest written; and none of an endpoint or
   * organisation already holding `caps` live leases.
   */
  claimNext(now: Date, leaseUntil: Date, caps?: DeliveryCaps): Promise<OutboxDelivery | undefined>;
  /** The delivery, if any (not locked). */
  getDelivery(id: Id): Promise<OutboxDelivery | undefined>;
  /** One page of the deliveries to the tenant's endpoints (the catalog's destinations), oldest first; of one event, or one endpoint, when named. */
  pageDeliveries(
    tenant: Tenant,
    query: { limit: number; after?: string; before?: string; eventId?: Id; endpointId?: Id },
  ): Promise<Page<OutboxDelivery>>;
  /** Records one attempt. */
  addAttempt(attempt: DeliveryAttempt): Promise<void>;
  /**
   * One page of the attempts to the tenant's endpoints, oldest first, of one delivery when named;
   * each with its number among its delivery's attempts (1 for the first).
   */
  pageTenantAttempts(
    tenant: Tenant,
    query: { limit: number; after?: string; before?: string; deliveryId?: Id },
  ): Promise<Page<DeliveryAttempt & { number: number }>>;
  /** One page of the endpoint's attempts, oldest first. */
  pageAttempts(endpointId: Id, query: { limit: number; after?: string; before?: string }): Promise<Page<DeliveryAttempt>>;
  /**
   * Whether any attempt to the endpoint succeeded (2xx) at or after `since`: one indexed probe
   * (however many attempts failed meanwhile), read in the caller's unit of work.
   */
  succeededSince(endpointId: Id, since: Date): Promise<boolean>;
  /** Pending deliveries of every organisation (the queue's depth, for metrics). */
  countPending(): Promise<number>;
}

export interface SigningKeyRepository {
  /** The tenant's (organisation and mode) keys of this algorithm that are not retired, newest first. */
  listActive(tenant: Tenant, algorithm: SigningAlgorithm): Promise<SigningKey[]>;
  /** Inserts the key or updates it by id. */
  save(key: SigningKey): Promise<void>;
}

export interface CheckoutSessionRepository {
  /** The checkout session, if any. */
  get(id: Id): Promise<CheckoutSession | undefined>;
  /** The checkout session, locked until the unit of work ends (a session is paid once). */
  getForUpdate(id: Id): Promise<CheckoutSession | undefined>;
  /** Inserts the session or updates it by id. */
  save(session: CheckoutSession): Promise<void>;
  /**
   * The session a deferred checkout link (by its digest) created, or null when it has none yet;
   * the link is locked until the unit of work ends, so concurrent follows of one link wait for
   * each other and create at most one session.
   */
  lockDeferredLink(linkKey: string, now: Date): Promise<{ sessionId: Id | null }>;
  /** Records the session a deferred checkout link now leads to (after `lockDeferredLink`). */
  setDeferredLink(linkKey: string, sessionId: Id): Promise<void>;
  /**
   * One page of the tenant's completed sessions (the catalog's receipts), oldest first: of one
   * subscription, of some members, of some plans, or whose member contains `search`, when asked.
   */
  pageCompleted(
    tenant: Tenant,
    query: { limit: number; after?: string; before?: string; subscriptionId?: Id; members?: string[]; planIds?: Id[]; search?: string },
  ): Promise<Page<CheckoutSession>>;
  /**
   * Whether an open session of one of `providers` created at or after `since` sells the plan (as
   * its plan or one of a cart's other plans): the provider priced it on the plan's interval when it
   * was created. No providers: false.
   */
  hasOpenForPlan(planId: Id, since: Date, providers: string[]): Promise<boolean>;
}

export interface CartRepository {
  /** The cart with its items, if any. */
  get(id: Id): Promise<Cart | undefined>;
  /** The cart with its items, locked until the unit of work ends. */
  getForUpdate(id: Id): Promise<Cart | undefined>;
  /** Inserts or updates the cart and replaces its items. */
  save(cart: Cart): Promise<void>;
  /** The cart holding this item, if any. */
  cartOfItem(itemId: Id): Promise<Id | undefined>;
  /** One page of the tenant's carts, oldest first, by status and owner when asked; `search` matches the start of a cart id. */
  page(
    tenant: Tenant,
    query: { limit: number; after?: string; before?: string; statuses?: CartStatus[]; customerIds?: Id[]; search?: string },
  ): Promise<Page<Cart>>;
}

export interface BillingDocumentRepository {
  /** The subscription's documents of this kind, newest first. */
  list(subscriptionId: Id, kind: BillingDocumentKind): Promise<BillingDocument[]>;
  /** Inserts the document or updates it by id. */
  save(document: BillingDocument): Promise<void>;
}

export interface WebhookEventRepository {
  /** Records that the provider's event was handled; false when it already was (a replay). */
  record(provider: string, eventId: string, receivedAt: Date): Promise<boolean>;
}

export interface IdempotencyRepository {
  /** The record of this scope created at or after `since`, if any. */
  find(scope: IdempotencyScope, since: Date): Promise<IdempotencyRecord | undefined>;
  /**
   * Claims the scope's key for the request of this transaction (`status` null until `complete`,
   * in the same transaction: a claim is never seen committed without its answer). Succeeds when the
   * key is free or its record is older than `expiredBefore`; false when a record holds it. A claim
   * of another transaction still running is waited for (at most `waitMs`, then
   * IDEMPOTENCY_KEY_IN_USE): it commits with its answer, or rolls back and frees the key.
   */
  claim(record: IdempotencyRecord, expiredBefore: Date, waitMs: number): Promise<boolean>;
  /** Stores the answer of the request that claimed the scope's key (same transaction). */
  complete(scope: IdempotencyScope, status: number, body: unknown): Promise<void>;
  /** Forgets records created before `before`; returns how many. */
  purge(before: Date): Promise<number>;
}

/** Grantees, groups and the memberships of groups without a subscription (issue #20). */
export interface PeopleRepository {
  /** The grantee record, if any. */
  getGrantee(id: Id): Promise<Grantee | undefined>;
  /** The tenant's grantees with these vendor identifiers. */
  findGrantees(tenant: Tenant, granteeIds: string[]): Promise<Grantee[]>;
  /**
   * The tenant's grantee with `grantee.granteeId`, inserting `grantee` when there is none (as
   * `CustomerRepository.findOrCreate`: a concurrent insert of the same identifier is waited for and returned).
   */
  findOrCreateGrantee(grantee: Grantee): Promise<Grantee>;
  /** A page of the tenant's grantees in creation order; `granteeIds` or `groupId` (members of a group without a subscription) narrow it. */
  pageGrantees(
    tenant: Tenant,
    query: { limit: number; after?: string; before?: string; granteeIds?: string[]; groupId?: Id },
  ): Promise<Page<Grantee>>;
  /** Inserts the grantee or updates it by id. */
  saveGrantee(grantee: Grantee): Promise<void>;
  /** Removes the grantee with its memberships. */
  deleteGrantee(id: Id): Promise<void>;
  /** The group, if any. */
  getGroup(id: Id): Promise<Group | undefined>;
  /** A page of the tenant's groups in creation order, of one customer if given. */
  pageGroups(tenant: Tenant, query: { limit: number; after?: string; before?: string; customerId?: Id }): Promise<Page<Group>>;
  /** Inserts the group or updates it by id. */
  saveGroup(group: Group): Promise<void>;
  /** Removes the group with its memberships. */
  deleteGroup(id: Id): Promise<void>;
  /** The memberships of a group, oldest first. */
  members(groupId: Id): Promise<Membership[]>;
  /** The memberships of a grantee, oldest first. */
  membershipsOf(granteeRef: Id): Promise<Membership[]>;
  /** Adds the membership (a grantee already in the group stays once). */
  addMember(membership: Membership): Promise<void>;
  /** Removes the grantee from the group. */
  removeMember(groupId: Id, granteeRef: Id): Promise<void>;
}

/** Every repository, bound to one transaction. */
export interface Repositories {
  organisations: OrganisationRepository;
  apiKeys: ApiKeyRepository;
  paymentIntegrations: PaymentIntegrationRepository;
  currencies: CurrencyRepository;
  products: ProductRepository;
  plans: PlanRepository;
  pricingTables: PricingTableRepository;
  customers: CustomerRepository;
  subscriptions: SubscriptionRepository;
  licenses: LicenseRepository;
  events: EventRepository;
  signingKeys: SigningKeyRepository;
  checkoutSessions: CheckoutSessionRepository;
  carts: CartRepository;
  billingDocuments: BillingDocumentRepository;
  webhookEvents: WebhookEventRepository;
  idempotency: IdempotencyRepository;
  outbox: OutboxRepository;
  webhooks: WebhookRepository;
  /** Meters, balances, grants, holds and the usage ledger. */
  usage: UsageRepository;
  /** Grantees, groups and memberships. */
  people: PeopleRepository;
}

export interface UnitOfWork {
  /** Runs `work` in one transaction: every write commits together, or none does if it throws. */
  run<T>(work: (repos: Repositories) => Promise<T>): Promise<T>;
  /** Runs read-only work without a transaction (hot paths): each query sees the latest committed data. */
  read<T>(work: (repos: Repositories) => Promise<T>): Promise<T>;
  /**
   * Tells a transaction the caller's work has joined (an idempotent request's) that something
   * outside it was done (`done`: the payment provider was told): should that transaction fail, its
   * outage answer says so and what to do (`then`), and `undo` (best effort) takes back what can be.
   * Outside such a transaction: nothing (the caller answers for its own steps).
   */
  noteDone?(done: string, then: string, undo?: () => Promise<void>): void;
  /**
   * Whether the caller's `run` and `read` join a transaction already open (an idempotent
   * request's): what they read may be that transaction's own uncommitted writes, so it must not be
   * shared with other callers (the capability check's cache). Absent: never.
   */
  joined?(): boolean;
}
