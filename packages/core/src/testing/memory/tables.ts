import type {
  BillingDocument,
  CheckoutSession,
  IdempotencyRecord,
  ApiKey,
  Currency,
  Customer,
  DomainEvent,
  Id,
  License,
  Organisation,
  PaymentIntegration,
  Plan,
  PricingTable,
  Product,
  SigningKey,
  Subscription,
  Tenant,
  TierTag,
  DeliveryAttempt,
  Grantee,
  SubscriptionLineItem,
  Group,
  Membership,
  OutboxDelivery,
  OutboxEvent,
  WebhookEndpoint,
} from '../../model';
import type { CacheInvalidation, ListQuery } from '../../ports';
import { emptyUsageTables, type UsageTables } from './usage';
import { emptyCartTables, type CartTables } from './carts';

/** All tables of the in-memory database. Records are stored and handed out as copies. */
export interface Tables extends UsageTables, CartTables {
  organisations: Map<Id, Organisation>;
  apiKeys: Map<Id, ApiKey>;
  paymentIntegrations: Map<Id, PaymentIntegration>;
  currencies: Map<Id, Currency>;
  products: Map<Id, Product>;
  plans: Map<Id, Plan>;
  tierTags: Map<Id, TierTag>;
  pricingTables: Map<Id, PricingTable>;
  customers: Map<Id, Customer>;
  subscriptions: Map<Id, Subscription>;
  /** How many times each subscription was saved (its `revision`). */
  subscriptionRevisions: Map<Id, number>;
  licenses: Map<Id, License>;
  events: Map<Id, DomainEvent>;
  signingKeys: Map<Id, SigningKey>;
  checkoutSessions: Map<Id, CheckoutSession>;
  /** Deferred checkout links (by digest) and the session each leads to. */
  deferredCheckouts: Map<string, Id>;
  billingDocuments: Map<Id, BillingDocument>;
  webhookEvents: Map<Id, Date>;
  idempotency: Map<string, IdempotencyRecord>;
  outbox: Map<Id, OutboxEvent>;
  endpoints: Map<Id, WebhookEndpoint>;
  deliveries: Map<Id, OutboxDelivery>;
  attempts: Map<Id, DeliveryAttempt>;
  /** Delivery turns (fairness): `o:<organisation>` and `e:<endpoint>` to the turn each was last served at; `#` the last turn. */
  webhookTurns: Map<string, number>;
  grantees: Map<Id, Grantee>;
  groups: Map<Id, Group>;
  memberships: Map<Id, Membership>;
  subscriptionLineItems: Map<Id, SubscriptionLineItem>;
}

export const emptyTables = (): Tables => ({
  ...emptyUsageTables(),
  ...emptyCartTables(),
  organisations: new Map(),
  apiKeys: new Map(),
  paymentIntegrations: new Map(),
  currencies: new Map(),
  products: new Map(),
  plans: new Map(),
  tierTags: new Map(),
  pricingTables: new Map(),
  customers: new Map(),
  subscriptions: new Map(),
  subscriptionRevisions: new Map(),
  licenses: new Map(),
  events: new Map(),
  signingKeys: new Map(),
  checkoutSessions: new Map(),
  deferredCheckouts: new Map(),
  billingDocuments: new Map(),
  webhookEvents: new Map(),
  idempotency: new Map(),
  outbox: new Map(),
  endpoints: new Map(),
  deliveries: new Map(),
  attempts: new Map(),
  webhookTurns: new Map(),
  grantees: new Map(),
  groups: new Map(),
  memberships: new Map(),
  subscriptionLineItems: new Map(),
});

export const copy = <T>(v: T): T => structuredClone(v);
export const values = <T>(m: Map<Id, T>): T[] => [...m.values()].map(copy);
export const inTenant = (r: { organisationId: Id; isTest: boolean }, t: Tenant) =>
  r.organisationId === t.organisationId && r.isTest === t.isTest;
export const byCreated = <T extends { createdAt: Date; id: Id }>(a: T, b: T) =>
  a.createdAt.getTime() - b.createdAt.getTime() || (a.id < b.id ? -1 : 1);
export const matchesSearch = (name: string, q: ListQuery) => !q.search || name.toLowerCase().includes(q.search.toLowerCase());

/** Hears what a write changed (committed unit of work tells the change feed). */
export type Changed = (c: CacheInvalidation) => void;
