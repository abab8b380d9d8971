import type {
  CheckoutSession,
  Id,
  License,
  OutboxDelivery,
  OutboxEvent,
  Plan,
  Product,
  Subscription,
  Tenant,
  UsageClose,
  WebhookEndpoint,
  WebhookEventType,
} from '../../model';
import type { Clock, EventQueue, IdGenerator, Repositories, UnitOfWork, UsageWrite } from '../../ports';
import { createHash } from 'node:crypto';
import { available, exactNumber, reportUsage } from '../../domain/usage';
import { catalogPlan, catalogProduct, iso, licenseView, subscriptionView } from '../../views';
import { capabilitiesByPlan } from '../licenses';

/**
 * The transactional outbox (DESIGN section 12). Every unit of work runs over repositories that note
 * what each save changes; before the transaction commits, the changes become events (and a
 * delivery per subscribed endpoint) written by the same transaction. A change therefore never
 * commits without its event, nor an event without its change, and no use case can forget one: the
 * events follow from the writes, not from each write path remembering to add them.
 */
export class OutboxUnitOfWork implements UnitOfWork {
  constructor(
    private readonly inner: UnitOfWork,
    private readonly deps: OutboxDeps,
  ) {}

  async run<T>(work: (repos: Repositories) => Promise<T>): Promise<T> {
    let delivering = false;
    const result = await this.inner.run(async (r) => {
      const recorder = new ChangeRecorder(r, this.deps);
      const out = await work(recorder.repos);
      delivering = await writeEvents(r, recorder.changes(), this.deps, recorder.appended);
      return out;
    });
    if (delivering) this.deps.events.wake();
    return result;
  }

  read<T>(work: (repos: Repositories) => Promise<T>): Promise<T> {
    return this.inner.read(work);
  }
}

/**
 * What the outbox needs: the clock and ids of its events, the queue it wakes, and how often a usage
 * balance may report its usage (`usage.recorded`, at most once per `usageEventWindowMs`; absent or 0:
 * every write that used units reports; `reportUsage`).
 */
export interface OutboxDeps {
  clock: Clock;
  ids: IdGenerator;
  events: EventQueue;
  usageEventWindowMs?: number;
}

type Change =
  | { kind: 'subscription'; before: Subscription | undefined; after: Subscription }
  | { kind: 'license'; before: License | undefined; after: License | undefined }
  | { kind: 'product'; before: Product | undefined; after: Product }
  | { kind: 'plan'; before: Plan | undefined; after: Plan }
  | { kind: 'checkout'; before: CheckoutSession | undefined; after: CheckoutSession }
  | { kind: 'usage'; write: UsageWrite }
  | { kind: 'usageClose'; close: UsageClose };
type Kind = Exclude<Change['kind'], 'usage' | 'usageClose'>;
type Record_ = Subscription | License | Product | Plan | CheckoutSession;

/** Wraps the repositories of one transaction: remembers each record as first read, and each save. */
class ChangeRecorder {
  private readonly seen = new Map<string, Record_ | undefined>();
  private readonly order: string[] = [];
  private readonly latest = new Map<string, Record_ | undefined>();
  /** Usage writes and period closes, in the order written (each is its own change). */
  private readonly usage: Change[] = [];
  /** Events the usage writes appended themselves (`writeManyAppending`), and the endpoints seen then. */
  readonly appended: Appended = { events: [], endpoints: [] };
  readonly repos: Repositories;

  constructor(r: Repositories, deps: OutboxDeps) {
    const note = <T extends Record_>(kind: Kind, x: T | undefined): T | undefined => {
      if (x && !this.seen.has(`${kind}:${x.id}`)) this.seen.set(`${kind}:${x.id}`, structuredClone(x));
      return x;
    };
    const noteAll = <T extends Record_>(kind: Kind, xs: T[]): T[] => {
      for (const x of xs) note(kind, x);
      return xs;
    };
    /** A repository of single records: reads noted, each save noted with the state before it. */
    const single = <T extends Record_, R extends { get(id: Id): Promise<T | undefined>; save(x: T): Promise<void> }>(
      kind: Kind,
      repo: R,
    ): R => ({
      ...repo,
      get: async (id: Id) => note(kind, await repo.get(id)),
      save: async (x: T) => {
        await this.saving(kind, [x], (ids) => Promise.all(ids.map((id) => repo.get(id))));
        await repo.save(x);
      },
    });
    const s = single('subscription', r.subscriptions);
    const c = single('checkout', r.checkoutSessions);
    const pl = single('plan', r.plans);
    const l = r.licenses;
    // Each usage write decides, before it is written, whether it reports its usage (`usage.recorded`)
    // or leaves it waiting on the balance (whose row the write carries).
    const reporting = (ws: UsageWrite[]) => {
      const now = deps.clock.now();
      for (const w of ws) {
        let quantity = 0n;
        let operations = 0;
        for (const e of w.entries)
          if (USED_KINDS.has(e.kind)) {
            quantity += e.usedDelta;
            operations++;
          }
        w.report = reportUsage(w.balance, quantity, operations, now, deps.usageEventWindowMs ?? 0);
      }
    };
    this.repos = {
      ...r,
      usage: {
        ...r.usage,
        write: async (w) => {
          reporting([w]);
          await r.usage.write(w);
          this.usage.push({ kind: 'usage', write: w });
        },
        writeMany: async (ws) => {
          reporting(ws);
          if (r.usage.writeManyAppending && this.order.length === 0 && this.usage.length === 0) {
            // The group commit's batch: its events go with its write, one round trip less. Only
            // when nothing else changed before it in the transaction (a group-commit batch changes
            // nothing else), so no event of an earlier change would be created after these.
            const pending: Pending[] = [];
            for (const w of ws) usageEvents(w, pendingAdder(pending));
            const events = outboxEvents(pending, deps, this.appended.events.length);
            const endpoints = await r.usage.writeManyAppending(ws, events);
            this.appended.events.push(...events);
            this.appended.endpoints.push(...endpoints);
            return;
          }
          await r.usage.writeMany(ws);
          for (const w of ws) this.usage.push({ kind: 'usage', write: w });
        },
        saveClose: async (c) => {
          await r.usage.saveClose(c);
          this.usage.push({ kind: 'usageClose', close: c });
        },
      },
      subscriptions: { ...s, getForUpdate: async (id) => note('subscription', await r.subscriptions.getForUpdate(id)) },
      checkoutSessions: { ...c, getForUpdate: async (id) => note('checkout', await r.checkoutSessions.getForUpdate(id)) },
      products: single('product', r.products),
      plans: {
        ...pl,
        getMany: async (ids) => noteAll('plan', await r.plans.getMany(ids)),
        listByProduct: async (id) => noteAll('plan', await r.plans.listByProduct(id)),
      },
      licenses: {
        ...l,
        get: async (id) => note('license', await l.get(id)),
        getManyForUpdate: async (ids) => noteAll('license', await l.getManyForUpdate(ids)),
        listBySubscription: async (id) => noteAll('license', await l.listBySubscription(id)),
        saveMany: async (xs) => {
          await this.saving('license', xs, (ids) => l.getManyForUpdate(ids));
          await l.saveMany(xs);
        },
        deleteMany: async (ids) => {
          await this.saving(
            'license',
            ids.map((id) => ({ id })),
            (missing) => l.getManyForUpdate(missing),
            true,
          );
          await l.deleteMany(ids);
        },
      },
    };
  }

  /** Notes a save (or, `removed`, a delete): the state before it (read now if not read before) and after. */
  private async saving<T extends { id: Id }>(
    kind: Kind,
    xs: T[],
    load: (ids: Id[]) => Promise<(Record_ | undefined)[]>,
    removed = false,
  ): Promise<void> {
    const keyOf = (id: Id) => `${kind}:${id}`;
    const unknown = xs.map((x) => x.id).filter((id) => !this.seen.has(keyOf(id)));
    if (unknown.length) {
      const found = new Map((await load(unknown)).filter((x): x is Record_ => !!x).map((x) => [x.id, structuredClone(x)]));
      for (const id of unknown) this.seen.set(keyOf(id), found.get(id));
    }
    for (const x of xs) {
      const key = keyOf(x.id);
      if (!this.latest.has(key)) this.order.push(key);
      this.latest.set(key, removed ? undefined : (structuredClone(x) as unknown as Record_));
    }
  }

  /** What the transaction changed, record by record in the order of their first save. */
  changes(): Change[] {
    return [
      ...this.order.map((key) => {
        const kind = key.slice(0, key.indexOf(':')) as Kind;
        return { kind, before: this.seen.get(key), after: this.latest.get(key) } as Change;
      }),
      ...this.usage,
    ];
  }
}

/** A view without the fields every save touches, to tell a real change from a rewrite. */
const same = (a: object, b: object): boolean => {
  const strip = (v: object) => JSON.stringify({ ...v, updatedAt: undefined });
  return strip(a) === strip(b);
};

interface Pending {
  tenant: Tenant;
  type: WebhookEventType;
  orderingKey: Id;
  data: unknown;
}

/** Events already appended by the transaction's writes, with the enabled endpoints of their tenants. */
interface Appended {
  events: OutboxEvent[];
  endpoints: WebhookEndpoint[];
}

const pendingAdder =
  (out: Pending[]) => (o: { organisationId: Id; isTest: boolean }, type: WebhookEventType, orderingKey: Id, data: unknown) =>
    out.push({ tenant: { organisationId: o.organisationId, isTest: o.isTest }, type, orderingKey, data });

/**
 * The outbox events of pending ones. The events of one transaction get distinct creation instants,
 * a millisecond apart in write order (as the records of one catalog file do), so that lists ordered
 * by creation show that order: `before` is how many the transaction made already.
 */
function outboxEvents(pending: Pending[], deps: { clock: Clock; ids: IdGenerator }, before = 0): OutboxEvent[] {
  const now = deps.clock.now();
  return pending.map((p, i) => ({
    id: deps.ids.newId(),
    organisationId: p.tenant.organisationId,
    isTest: p.tenant.isTest,
    type: p.type,
    orderingKey: p.orderingKey,
    payload: { type: p.type, timestamp: now.toISOString(), data: p.data },
    createdAt: new Date(now.getTime() + before + i),
  }));
}

const checkoutView = (s: CheckoutSession) => ({
  id: s.id,
  productUuid: s.productId,
  planUuid: s.planId,
  member: s.member,
  granteeId: s.granteeId,
  subscriptionUuid: s.subscriptionId,
  provider: s.provider,
  quantity: s.options.quantity,
  currency: s.options.currency,
  status: s.status,
  isTest: s.isTest,
  createdAt: iso(s.createdAt),
  completedAt: iso(s.completedAt),
});

/** The events of the changes (DESIGN section 12's list), in the order of the changes. */
async function eventsOf(r: Repositories, changes: Change[]): Promise<Pending[]> {
  const licenses = changes.flatMap((c) => (c.kind === 'license' ? [c.after ?? c.before].filter((l): l is License => !!l) : []));
  const caps = licenses.length
    ? await capabilitiesByPlan(
        r,
        licenses.map((l) => l.planId),
      )
    : new Map();
  const out: Pending[] = [];
  const add = pendingAdder(out);
  for (const c of changes) {
    switch (c.kind) {
      case 'subscription': {
        const { before, after } = c;
        const view = subscriptionView(after);
        if (!before) add(after, 'subscription.created', after.id, view);
        else if (after.status === 'CANCELED' && before.status !== 'CANCELED') add(after, 'subscription.cancelled', after.id, view);
        else if (!same(subscriptionView(before), view)) add(after, 'subscription.updated', after.id, view);
        if (before && before.quantity !== after.quantity)
          add(after, 'seats.changed', after.id, { ...view, previousQuantity: before.quantity });
        break;
      }
      case 'license': {
        const { before, after } = c;
        const record = (after ?? before) as License;
        const key = record.subscriptionId ?? record.id;
        const view = licenseView(record, caps.get(record.planId) ?? []);
        if (!before && after) add(after, 'license.created', key, view);
        else if (before && (!after || (after.status === 'CANCELED' && before.status !== 'CANCELED')))
          add(record, 'license.cancelled', key, after ? view : { ...view, status: 'CANCELED' });
        else if (before && after && !same(licenseView(before, []), licenseView(after, []))) add(after, 'license.updated', key, view);
        break;
      }
      case 'product':
        if (c.before && !same(catalogProduct(c.before), catalogProduct(c.after)))
          add(c.after, 'product.updated', c.after.id, catalogProduct(c.after));
        break;
      case 'plan':
        if (c.before && !same(catalogPlan(c.before), catalogPlan(c.after)))
          add(c.after, 'plan.updated', c.after.productId, catalogPlan(c.after));
        break;
      case 'checkout':
        if (c.after.status === 'completed' && c.before?.status !== 'completed')
          add(c.after, 'checkout.completed', c.after.subscriptionId ?? c.after.id, checkoutView(c.after));
        break;
      case 'usage':
        usageEvents(c.write, add);
        break;
      case 'usageClose': {
        const x = c.close;
        const [meter] = await r.usage.getMeters([x.meterId]);
        add(x, 'usage.finalised', usageOrderingKey(x, x.owner), {
          id: x.id,
          owner: x.owner,
          meterSlug: meter?.slug ?? null,
          subscriptionId: x.subscriptionId,
          status: 'final',
          periodStart: iso(x.periodStart),
          periodEnd: iso(x.periodEnd),
          finalUsage: exactNumber(x.finalUsage, meter?.scale),
          billedUnits: exactNumber(x.billedUnits, meter?.scale),
          currency: x.currency,
          amount: exactNumber(x.amountMinor),
        });
        break;
      }
    }
  }
  return out;
}

/**
 * The ordering key of an owner's usage events: a UUID derived from (organisation, mode, owner), the
 * owner being any string of the vendor's (the key of an event is a UUID).
 */
export function usageOrderingKey(o: Tenant, owner: string): Id {
  const name = `${o.organisationId}:${o.isTest}:${owner}`;
  let key = orderingKeys.get(name);
  if (key === undefined) {
    const h = createHash('sha256').update(name).digest('hex');
    key = `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-${((parseInt(h[16], 16) & 3) | 8).toString(16)}${h.slice(17, 20)}-${h.slice(20, 32)}`;
    // The owners of recent batches (a busy instance writes an event per balance and batch): a small memo.
    if (orderingKeys.size >= ORDERING_KEYS_KEPT) orderingKeys.clear();
    orderingKeys.set(name, key);
  }
  return key;
}
const ORDERING_KEYS_KEPT = 4_096;
const orderingKeys = new Map<string, Id>();

/** Shares of what a period allows at which `usage.threshold` is sent, each once as usage crosses it. */
export const USAGE_THRESHOLDS = [80, 90, 100] as const;
const USED_KINDS = new Set(['record', 'consume', 'commit']);

/**
 * The events of one usage write (one group-commit batch of a balance): `usage.recorded` when the
 * write reports (`w.report`, decided as it was written: the units and operations since the
 * balance's previous `usage.recorded`, at most one a window per balance, so a busy balance does not
 * write an event per batch), and `usage.threshold` for each of 80, 90 and 100 % of what the period
 * allows (its grants, else its cap) that the batch's usage crossed. Usage only grows within a
 * period, and batches of a balance are serialised by its row lock, so each threshold is crossed
 * once per period, unless a grant raises what the period allows (then a share of the new total is
 * news, and the event's `allowance` says of what). A closed balance's write tells only what waited (its thresholds were told).
 */
function usageEvents(w: UsageWrite, add: (o: Tenant, type: WebhookEventType, key: Id, data: unknown) => void): void {
  const b = w.balance;
  const report = w.report;
  const used = b.closedAt ? 0n : w.entries.reduce((n, e) => n + (USED_KINDS.has(e.kind) ? e.usedDelta : 0n), 0n);
  // What the period allows: its grants (allowance, rollover, credits) when they limit it, else its cap.
  const allowed = b.limited ? b.granted : b.cap;
  const crossed: number[] = [];
  if (used !== 0n && allowed !== null && allowed > 0n) {
    const before = b.used - w.entries.reduce((n, e) => n + e.usedDelta, 0n);
    for (const t of USAGE_THRESHOLDS) {
      const at = BigInt(t) * allowed;
      if (before * 100n < at && b.used * 100n >= at) crossed.push(t);
    }
  }
  // Most writes of a busy balance tell nothing (their usage waits for the window): no view is built.
  if (!report && crossed.length === 0) return;
  const shown = w.ended ?? b;
  const left = available(shown);
  const scale = w.meterScale ?? 0;
  const view = {
    owner: b.owner,
    meterSlug: w.meterSlug ?? null,
    granted: exactNumber(shown.granted, scale),
    used: exactNumber(shown.used, scale),
    reserved: exactNumber(shown.reserved, scale),
    remaining: left === null ? null : exactNumber(left, scale),
    periodStart: iso(shown.periodStart),
    periodEnd: iso(shown.periodEnd),
  };
  const key = usageOrderingKey(b, b.owner);
  if (report) add(b, 'usage.recorded', key, { ...view, quantity: exactNumber(report.quantity, scale), operations: report.operations });
  for (const t of crossed) add(b, 'usage.threshold', key, { ...view, threshold: t, allowance: exactNumber(allowed as bigint, scale) });
}

/**
 * Writes the events of the changes, and the deliveries of those and of the events the writes
 * appended themselves; true when something is to be delivered.
 */
async function writeEvents(
  r: Repositories,
  changes: Change[],
  deps: { clock: Clock; ids: IdGenerator },
  appended: Appended = { events: [], endpoints: [] },
): Promise<boolean> {
  const pending = changes.length ? await eventsOf(r, changes) : [];
  if (!pending.length && !appended.events.length) return false;
  const now = deps.clock.now();
  const events = outboxEvents(pending, deps, appended.events.length);
  const endpoints = new Map<string, Map<Id, WebhookEndpoint>>();
  const seen = (tenantKey: string, found: WebhookEndpoint[]) => {
    const known = endpoints.get(tenantKey) ?? new Map<Id, WebhookEndpoint>();
    endpoints.set(tenantKey, known);
    for (const endpoint of found) if (`${endpoint.organisationId}:${endpoint.isTest}` === tenantKey) known.set(endpoint.id, endpoint);
  };
  for (const tenantKey of new Set(appended.events.map((e) => `${e.organisationId}:${e.isTest}`))) seen(tenantKey, appended.endpoints);
  if (events.length && r.outbox.appendSeeingEndpoints) {
    const found = await r.outbox.appendSeeingEndpoints(events);
    for (const e of events) seen(`${e.organisationId}:${e.isTest}`, found);
  } else if (events.length) await r.outbox.append(events);
  const deliveries: OutboxDelivery[] = [];
  for (const e of [...appended.events, ...events]) {
    const tenantKey = `${e.organisationId}:${e.isTest}`;
    if (!endpoints.has(tenantKey)) seen(tenantKey, await r.webhooks.enabledEndpoints(e));
    for (const endpoint of endpoints.get(tenantKey)?.values() ?? [])
      if (receives(endpoint, e.type)) deliveries.push(newDelivery(deps.ids.newId(), e, endpoint.id, now));
  }
  if (deliveries.length) await r.webhooks.addDeliveries(deliveries);
  return deliveries.length > 0;
}

/** Whether the endpoint subscribed to this type (no list: every type). */
export const receives = (endpoint: Pick<WebhookEndpoint, 'events'>, type: WebhookEventType): boolean =>
  endpoint.events.length === 0 || endpoint.events.includes(type);

export const newDelivery = (id: Id, event: OutboxEvent, endpointId: Id, now: Date): OutboxDelivery => ({
  id,
  eventId: event.id,
  endpointId,
  organisationId: event.organisationId,
  orderingKey: event.orderingKey,
  status: 'pending',
  attempts: 0,
  nextAttemptAt: now,
  lockedUntil: null,
  createdAt: now,
  updatedAt: now,
});
