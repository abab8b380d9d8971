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
  OutboxDelivery,
  OutboxEvent,
  WebhookEndpoint,
} from '../model';
import { pageOf } from '../domain/pagination';
import type {
  CacheInvalidation,
  ChangeFeed,
  ChangeFeedHandlers,
  LicenseFilter,
  ListQuery,
  PlanListQuery,
  Repositories,
  UnitOfWork,
} from '../ports';
import { emptyUsageTables, memoryUsageRepository, type UsageTables } from './memory/usage';

/** All tables of the in-memory database. Records are stored and handed out as copies. */
interface Tables extends UsageTables {
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
  licenses: Map<Id, License>;
  events: Map<Id, DomainEvent>;
  signingKeys: Map<Id, SigningKey>;
  checkoutSessions: Map<Id, CheckoutSession>;
  billingDocuments: Map<Id, BillingDocument>;
  webhookEvents: Map<Id, Date>;
  idempotency: Map<string, IdempotencyRecord>;
  outbox: Map<Id, OutboxEvent>;
  endpoints: Map<Id, WebhookEndpoint>;
  deliveries: Map<Id, OutboxDelivery>;
  attempts: Map<Id, DeliveryAttempt>;
}

const emptyTables = (): Tables => ({
  ...emptyUsageTables(),
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
  licenses: new Map(),
  events: new Map(),
  signingKeys: new Map(),
  checkoutSessions: new Map(),
  billingDocuments: new Map(),
  webhookEvents: new Map(),
  idempotency: new Map(),
  outbox: new Map(),
  endpoints: new Map(),
  deliveries: new Map(),
  attempts: new Map(),
});

const copy = <T>(v: T): T => structuredClone(v);
const values = <T>(m: Map<Id, T>): T[] => [...m.values()].map(copy);
const inTenant = (r: { organisationId: Id; isTest: boolean }, t: Tenant) => r.organisationId === t.organisationId && r.isTest === t.isTest;
const byCreated = <T extends { createdAt: Date; id: Id }>(a: T, b: T) =>
  a.createdAt.getTime() - b.createdAt.getTime() || (a.id < b.id ? -1 : 1);
const matchesSearch = (name: string, q: ListQuery) => !q.search || name.toLowerCase().includes(q.search.toLowerCase());

function repositories(db: Tables, changed: (c: CacheInvalidation) => void = () => undefined): Repositories {
  const licenseChanged = (l: License | undefined) => {
    if (l?.granteeId) changed({ kind: 'license', productId: l.productId, granteeId: l.granteeId });
  };
  return {
    usage: memoryUsageRepository(db),
    organisations: {
      get: async (id) => copy(db.organisations.get(id)),
      findByName: async (name) => values(db.organisations).find((o) => o.name === name),
      save: async (org) => void db.organisations.set(org.id, copy(org)),
      any: async () => db.organisations.size > 0,
    },
    apiKeys: {
      findByHash: async (h) => values(db.apiKeys).find((k) => k.keyHash === h),
      get: async (id) => copy(db.apiKeys.get(id)),
      listByOrganisation: async (orgId) =>
        values(db.apiKeys)
          .filter((k) => k.organisationId === orgId)
          .sort(byCreated)
          .reverse(),
      save: async (k) => {
        if (db.apiKeys.has(k.id)) changed({ kind: 'apiKey', keyHash: k.keyHash });
        db.apiKeys.set(k.id, copy(k));
      },
    },
    paymentIntegrations: {
      get: async (id) => copy(db.paymentIntegrations.get(id)),
      findByName: async (t, name) => values(db.paymentIntegrations).find((p) => inTenant(p, t) && p.integrationName === name),
      save: async (p) => void db.paymentIntegrations.set(p.id, copy(p)),
    },
    currencies: {
      list: async () => values(db.currencies).sort((a, b) => (a.shortName < b.shortName ? -1 : 1)),
      save: async (c) => void db.currencies.set(c.id, copy(c)),
    },
    products: {
      get: async (id) => copy(db.products.get(id)),
      findByKey: async (t, key) => values(db.products).find((p) => inTenant(p, t) && p.key === key),
      list: async (t, o) =>
        values(db.products)
          .filter((p) => inTenant(p, t) && (o?.includeArchived || !p.archivedAt))
          .sort(byCreated),
      page: async (t, q) =>
        pageOf(
          values(db.products).filter((p) => inTenant(p, t) && (q.includeArchived || !p.archivedAt) && matchesSearch(p.name, q)),
          q,
        ),
      getOwnership: async (id) => {
        const p = db.products.get(id);
        return p && { id: p.id, organisationId: p.organisationId, isTest: p.isTest, archivedAt: p.archivedAt };
      },
      save: async (p) => {
        changed({ kind: 'product', productId: p.id });
        db.products.set(p.id, copy(p));
      },
      delete: async (id) => {
        changed({ kind: 'product', productId: id });
        db.products.delete(id);
        for (const plan of values(db.plans)) if (plan.productId === id) db.plans.delete(plan.id);
        for (const t of values(db.pricingTables)) if (t.productId === id) db.pricingTables.delete(t.id);
      },
    },
    plans: {
      get: async (id) => copy(db.plans.get(id)),
      getMany: async (ids) =>
        ids
          .map((id) => db.plans.get(id))
          .filter((p): p is Plan => !!p)
          .map(copy),
      findByKey: async (productId, key) => values(db.plans).find((p) => p.productId === productId && p.key === key),
      listByProduct: async (productId) =>
        values(db.plans)
          .filter((p) => p.productId === productId)
          .sort(byCreated),
      page: async (t, q: PlanListQuery) =>
        pageOf(
          values(db.plans).filter((p) => inTenant(p, t) && planMatches(p, q)),
          q,
        ),
      capabilityNames: async (planIds) => {
        const out = new Map<Id, string[]>();
        for (const id of planIds) {
          const plan = db.plans.get(id);
          const product = plan && db.products.get(plan.productId);
          if (!plan || !product || plan.capabilityIds.length === 0) continue;
          const byId = new Map(product.capabilities.map((c) => [c.id, c.name]));
          out.set(
            id,
            plan.capabilityIds.map((c) => byId.get(c)).filter((n): n is string => !!n),
          );
        }
        return out;
      },
      filterOptions: async (t) => {
        const currencies = new Set<string>();
        const intervals = new Map<string, { interval: string | null; intervalCount: number | null }>();
        for (const p of values(db.plans).filter((x) => inTenant(x, t))) {
          for (const li of p.lineItems)
            for (const pr of li.prices) {
              intervals.set(`${pr.interval}/${pr.intervalCount}`, { interval: pr.interval, intervalCount: pr.intervalCount });
              for (const o of pr.currencyOptions) currencies.add(o.currency);
            }
        }
        return { currencies: [...currencies].sort(), intervals: [...intervals.values()] };
      },
      save: async (p) => {
        changed({ kind: 'product', productId: p.productId });
        if (p.tierTag) db.tierTags.set(p.tierTag.id, copy(p.tierTag));
        db.plans.set(p.id, copy(p));
      },
      delete: async (id) => {
        const plan = db.plans.get(id);
        if (plan) changed({ kind: 'product', productId: plan.productId });
        db.plans.delete(id);
      },
      getTierTag: async (id) => copy(db.tierTags.get(id)),
      saveTierTag: async (tag) => void db.tierTags.set(tag.id, copy(tag)),
      findTierTag: async (orgId, name) =>
        values(db.tierTags)
          .sort(byCreated)
          .find((t) => t.organisationId === orgId && t.name.toLowerCase() === name.toLowerCase()),
      pageTierTags: async (orgId, q) =>
        pageOf(
          values(db.tierTags).filter((t) => t.organisationId === orgId),
          q,
        ),
    },
    pricingTables: {
      get: async (id) => copy(db.pricingTables.get(id)),
      listByProduct: async (productId) => values(db.pricingTables).filter((t) => t.productId === productId),
      save: async (t) => void db.pricingTables.set(t.id, copy(t)),
    },
    customers: {
      get: async (id) => copy(db.customers.get(id)),
      findByValue: async (t, v) => values(db.customers).find((c) => inTenant(c, t) && c.value === v),
      save: async (c) => void db.customers.set(c.id, copy(c)),
    },
    subscriptions: {
      get: async (id) => copy(db.subscriptions.get(id)),
      getForUpdate: async (id) => copy(db.subscriptions.get(id)),
      findByPaymentId: async (pid) => values(db.subscriptions).find((s) => s.paymentSubscriptionId === pid),
      listByPlan: async (planId) =>
        values(db.subscriptions)
          .filter((s) => s.planId === planId)
          .sort(byCreated),
      countReferencing: async ({ planId, productId }) =>
        values(db.subscriptions).filter((s) => (planId && s.planId === planId) || (productId && s.productId === productId)).length,
      listDueForCancellation: async (now, limit) =>
        values(db.subscriptions)
          .filter((s) => s.status !== 'CANCELED' && s.cancelAtPeriodEnd && s.currentPeriodEnd <= now)
          .sort(byCreated)
          .slice(0, limit)
          .map((s) => s.id),
      listDueForRenewal: async (now, providers, limit) =>
        values(db.subscriptions)
          .filter(
            (s) => s.status !== 'CANCELED' && !s.cancelAtPeriodEnd && s.currentPeriodEnd <= now && providers.includes(s.paymentProvider),
          )
          .sort(byCreated)
          .slice(0, limit)
          .map((s) => s.id),
      save: async (s) => void db.subscriptions.set(s.id, copy(s)),
    },
    licenses: {
      get: async (id) => copy(db.licenses.get(id)),
      getManyForUpdate: async (ids) =>
        ids
          .map((id) => db.licenses.get(id))
          .filter((l): l is License => !!l)
          .map(copy),
      listBySubscription: async (sid) =>
        values(db.licenses)
          .filter((l) => l.subscriptionId === sid)
          .sort(byCreated),
      list: async (t, f) =>
        values(db.licenses)
          .filter((l) => inTenant(l, t) && licenseMatches(l, f))
          .sort(byCreated),
      page: async (t, f, q) =>
        pageOf(
          values(db.licenses).filter((l) => inTenant(l, t) && licenseMatches(l, f)),
          q,
        ),
      count: async (t, f) => {
        const ls = values(db.licenses).filter((l) => inTenant(l, t) && licenseMatches(l, f));
        const assigned = ls.filter((l) => l.granteeId !== null).length;
        return { count: ls.length, assigned, unassigned: ls.length - assigned };
      },
      findForCheck: async (t, productId, grantees) =>
        values(db.licenses).filter(
          (l) => inTenant(l, t) && l.productId === productId && l.granteeId !== null && grantees.includes(l.granteeId),
        ),
      saveMany: async (ls) =>
        ls.forEach((l) => {
          licenseChanged(db.licenses.get(l.id));
          licenseChanged(l);
          db.licenses.set(l.id, copy(l));
        }),
      deleteMany: async (ids) =>
        ids.forEach((id) => {
          licenseChanged(db.licenses.get(id));
          db.licenses.delete(id);
        }),
    },
    events: {
      get: async (id) => copy(db.events.get(id)),
      save: async (e) => void db.events.set(e.id, copy(e)),
      getForUpdate: async (id) => copy(db.events.get(id)),
      countOpen: async () => {
        const all = [...db.events.values()];
        return { queued: all.filter((e) => e.status === 'queued').length, pending: all.filter((e) => e.status === 'pending').length };
      },
      // First queued first: the map keeps insertion order, like the SQL adapter's sequence.
      claimNext: async (now, leaseUntil) => {
        const open = [...db.events.values()].filter((e) => e.status === 'queued' || e.status === 'pending');
        const next = open.find(
          (e, i) =>
            e.runAt <= now &&
            (!e.lockedUntil || e.lockedUntil <= now) &&
            !open.slice(0, i).some((p) => p.subscriptionId !== null && p.subscriptionId === e.subscriptionId),
        );
        if (!next) return undefined;
        const leased = { ...copy(next), lockedUntil: leaseUntil };
        db.events.set(leased.id, copy(leased));
        return leased;
      },
    },
    outbox: {
      append: async (events) => events.forEach((e) => db.outbox.set(e.id, copy(e))),
      get: async (id) => copy(db.outbox.get(id)),
      purge: async (before, limit) => {
        const waiting = new Set([...db.deliveries.values()].filter((d) => d.status === 'pending').map((d) => d.eventId));
        const old = [...db.outbox.values()].filter((e) => e.createdAt < before && !waiting.has(e.id)).slice(0, limit);
        for (const e of old) {
          db.outbox.delete(e.id);
          for (const d of [...db.deliveries.values()])
            if (d.eventId === e.id) {
              db.deliveries.delete(d.id);
              for (const a of [...db.attempts.values()]) if (a.deliveryId === d.id) db.attempts.delete(a.id);
            }
        }
        return old.length;
      },
      page: async (tenant, q) =>
        pageOf(
          values(db.outbox).filter((e) => inTenant(e, tenant) && (!q.type || e.type === q.type)),
          q,
        ),
    },
    webhooks: {
      getEndpoint: async (id) => copy(db.endpoints.get(id)),
      pageEndpoints: async (tenant, q) =>
        pageOf(
          values(db.endpoints).filter((e) => inTenant(e, tenant)),
          q,
        ),
      enabledEndpoints: async (tenant) =>
        values(db.endpoints)
          .filter((e) => inTenant(e, tenant) && !e.disabledAt)
          .sort(byCreated),
      saveEndpoint: async (e) => void db.endpoints.set(e.id, copy(e)),
      deleteEndpoint: async (id) => {
        db.endpoints.delete(id);
        for (const d of values(db.deliveries)) if (d.endpointId === id) db.deliveries.delete(d.id);
        for (const a of values(db.attempts)) if (a.endpointId === id) db.attempts.delete(a.id);
      },
      addDeliveries: async (ds) => ds.forEach((d) => db.deliveries.set(d.id, copy(d))),
      getDeliveryForUpdate: async (id) => copy(db.deliveries.get(id)),
      saveDelivery: async (d) => void db.deliveries.set(d.id, copy(d)),
      // First written first: the map keeps insertion order, like the SQL adapter's sequence.
      claimNext: async (now, leaseUntil) => {
        const open = [...db.deliveries.values()].filter((d) => d.status === 'pending');
        const next = open.find(
          (d, i) =>
            d.nextAttemptAt <= now &&
            (!d.lockedUntil || d.lockedUntil <= now) &&
            !open.slice(0, i).some((p) => p.endpointId === d.endpointId && p.orderingKey === d.orderingKey),
        );
        if (!next) return undefined;
        const leased = { ...copy(next), lockedUntil: leaseUntil };
        db.deliveries.set(leased.id, copy(leased));
        return leased;
      },
      addAttempt: async (a) => void db.attempts.set(a.id, copy(a)),
      pageAttempts: async (endpointId, q) =>
        pageOf(
          values(db.attempts).filter((a) => a.endpointId === endpointId),
          q,
        ),
      countPending: async () => [...db.deliveries.values()].filter((d) => d.status === 'pending').length,
    },
    signingKeys: {
      listActive: async (orgId, algorithm) =>
        values(db.signingKeys)
          .filter((k) => k.organisationId === orgId && k.algorithm === algorithm && !k.retiredAt)
          .sort(byCreated)
          .reverse(),
      save: async (k) => {
        changed({ kind: 'signingKey', organisationId: k.organisationId });
        db.signingKeys.set(k.id, copy(k));
      },
    },
    checkoutSessions: {
      get: async (id) => copy(db.checkoutSessions.get(id)),
      getForUpdate: async (id) => copy(db.checkoutSessions.get(id)),
      save: async (cs) => void db.checkoutSessions.set(cs.id, copy(cs)),
    },
    billingDocuments: {
      // Newest first; the map's insertion order breaks ties, like the SQL adapter's sequence.
      list: async (sid, kind) =>
        values(db.billingDocuments)
          .filter((d) => d.subscriptionId === sid && d.kind === kind)
          .reverse()
          .sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime()),
      save: async (d) => void db.billingDocuments.set(d.id, copy(d)),
    },
    idempotency: {
      find: async (orgId, key, since) => {
        const r = db.idempotency.get(`${orgId}:${key}`);
        return r && r.createdAt >= since ? copy(r) : undefined;
      },
      claim: async (rec, expiredBefore, abandonedBefore) => {
        const id = `${rec.organisationId}:${rec.key}`;
        const held = db.idempotency.get(id);
        if (held && held.createdAt >= expiredBefore && !(held.status === null && held.createdAt < abandonedBefore)) return false;
        db.idempotency.set(id, copy({ ...rec, status: null, body: null }));
        return true;
      },
      complete: async (orgId, key, status, body) => {
        const r = db.idempotency.get(`${orgId}:${key}`);
        if (r) db.idempotency.set(`${orgId}:${key}`, copy({ ...r, status, body: body === undefined ? null : body }));
      },
      release: async (orgId, key) => {
        if (db.idempotency.get(`${orgId}:${key}`)?.status === null) db.idempotency.delete(`${orgId}:${key}`);
      },
      purge: async (before) => {
        let n = 0;
        for (const [k, r] of db.idempotency) if (r.createdAt < before && db.idempotency.delete(k)) n++;
        return n;
      },
    },
    webhookEvents: {
      record: async (provider, eventId, at) => {
        const key = `${provider}:${eventId}`;
        if (db.webhookEvents.has(key)) return false;
        db.webhookEvents.set(key, at);
        return true;
      },
    },
  };
}

function planMatches(p: Plan, q: PlanListQuery): boolean {
  if (!q.includeArchived && p.archivedAt) return false;
  if (!matchesSearch(p.name, q)) return false;
  if (q.productId && p.productId !== q.productId) return false;
  if (q.isActive !== undefined && (p.active && !p.archivedAt) !== q.isActive) return false;
  const prices = p.lineItems.flatMap((li) => li.prices);
  if (q.currency && !prices.some((pr) => pr.currencyOptions.some((o) => o.currency === q.currency?.toLowerCase()))) return false;
  if (
    q.interval &&
    !prices.some((pr) => pr.interval === q.interval && (q.intervalCount === undefined || pr.intervalCount === q.intervalCount))
  )
    return false;
  if (!q.interval && q.intervalCount !== undefined && !prices.some((pr) => pr.intervalCount === q.intervalCount)) return false;
  return true;
}

function licenseMatches(l: License, f: LicenseFilter): boolean {
  return (
    (!f.status || l.status === f.status) &&
    (!f.subscriptionId || l.subscriptionId === f.subscriptionId) &&
    (!f.productId || l.productId === f.productId) &&
    (f.purchaser === undefined || l.purchaser === f.purchaser) &&
    (f.granteeId === undefined || l.granteeId === f.granteeId)
  );
}

/**
 * The in-memory database: transactions run one at a time (which makes every read a locking read)
 * and roll back by restoring a snapshot taken at their start.
 */
/**
 * The in-memory change feed: what a committed unit of work changed, heard by every subscriber of
 * the unit of work (as the PostgreSQL triggers' NOTIFY is heard by every instance). `drop()` and
 * `restore()` act a lost and a regained listening connection.
 */
export class MemoryChangeFeed implements ChangeFeed {
  private handlers: ChangeFeedHandlers | undefined;
  private connected = false;

  constructor(private readonly subscribers: Set<MemoryChangeFeed>) {}

  async start(handlers: ChangeFeedHandlers): Promise<void> {
    this.handlers = handlers;
    this.subscribers.add(this);
    this.restore();
  }

  listening(): boolean {
    return this.connected;
  }

  async stop(): Promise<void> {
    this.subscribers.delete(this);
    this.connected = false;
    this.handlers = undefined;
  }

  /** The listening connection is lost: changes are no longer heard. */
  drop(): void {
    if (!this.connected) return;
    this.connected = false;
    this.handlers?.onGap();
  }

  /** Listening again. */
  restore(): void {
    this.connected = true;
    this.handlers?.onResume();
  }

  deliver(changes: CacheInvalidation[]): void {
    if (!this.connected) return;
    for (const c of changes) this.handlers?.onChange(c);
  }
}

export class InMemoryUnitOfWork implements UnitOfWork {
  private tables = emptyTables();
  private queue: Promise<unknown> = Promise.resolve();
  private readonly subscribers = new Set<MemoryChangeFeed>();

  /** A new subscriber to what this unit of work commits (one per instance, as a LISTEN connection). */
  changeFeed(): MemoryChangeFeed {
    return new MemoryChangeFeed(this.subscribers);
  }

  /** Reads here are serialised like transactions; there is nothing to gain from skipping that in memory. */
  read<T>(work: (repos: Repositories) => Promise<T>): Promise<T> {
    return this.run(work);
  }

  run<T>(work: (repos: Repositories) => Promise<T>): Promise<T> {
    const next = this.queue.then(async () => {
      const snapshot = new Map(Object.entries(this.tables).map(([k, m]) => [k, new Map(m as Map<Id, unknown>)]));
      const changes: CacheInvalidation[] = [];
      try {
        const result = await work(repositories(this.tables, (c) => changes.push(c)));
        // Delivered on commit only, as NOTIFY is.
        for (const feed of [...this.subscribers]) feed.deliver(changes);
        return result;
      } catch (e) {
        this.tables = Object.fromEntries(snapshot) as unknown as Tables;
        throw e;
      }
    });
    this.queue = next.catch(() => undefined);
    return next;
  }
}

/**
 * Wraps any unit of work so that a test can fail a transaction after its n-th write (fault
 * injection): the adapter must then leave nothing of that transaction behind.
 */
export class FaultInjectingUnitOfWork implements UnitOfWork {
  /** Throw after this many writes within one transaction; undefined: never. */
  failAfterWrites: number | undefined;

  constructor(private readonly inner: UnitOfWork) {}

  read<T>(work: (repos: Repositories) => Promise<T>): Promise<T> {
    return this.inner.read(work);
  }

  run<T>(work: (repos: Repositories) => Promise<T>): Promise<T> {
    let writes = 0;
    const limit = this.failAfterWrites;
    return this.inner.run((repos) => {
      const wrapped: Record<string, unknown> = {};
      for (const [table, repo] of Object.entries(repos)) {
        wrapped[table] = Object.fromEntries(
          Object.entries(repo as Record<string, (...a: unknown[]) => Promise<unknown>>).map(([method, fn]) => [
            method,
            async (...args: unknown[]) => {
              const out = await fn(...args);
              if (/^(save|delete)/.test(method) && limit !== undefined && ++writes >= limit)
                throw new Error(`injected fault after write ${writes}`);
              return out;
            },
          ]),
        );
      }
      return work(wrapped as unknown as Repositories);
    });
  }
}
