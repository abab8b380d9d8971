import { ErrorCodes, fail } from '../../errors';
import { compareKeys, pageOf } from '../../support/pagination';
import { formatUnits } from '../../domain/usage';
import type {
  Balance,
  BalanceMismatch,
  CreditGrant,
  Customer,
  Hold,
  Id,
  LedgerEntry,
  Subscription,
  Tenant,
  UsageClose,
  UsageKey,
  UsageMeter,
} from '../../model';
import type { LockedBalance, MeterEventFailure, MeterRelayCursor, MeterSend, PendingMeterEvent, UsageRepository } from '../../ports';

/** The in-memory tables of usage (part of the in-memory database's tables). */
export interface UsageTables {
  usageMeters: Map<Id, UsageMeter>;
  balances: Map<Id, Balance>;
  grants: Map<Id, CreditGrant>;
  holds: Map<Id, Hold>;
  ledger: Map<Id, LedgerEntry>;
  usageKeys: Map<string, UsageKey>;
  usageCloses: Map<Id, UsageClose>;
  /** The meter-event relay's cursors by provider; a position is how many ledger entries (in commit order) are done. */
  meterRelays: Map<string, MeterRelayCursor>;
  /** Planned meter events not yet taken, by `provider:id`. */
  meterSends: Map<string, MeterSend>;
  meterEventFailures: Map<string, MeterEventFailure>;
}

export const emptyUsageTables = (): UsageTables => ({
  usageMeters: new Map(),
  balances: new Map(),
  grants: new Map(),
  holds: new Map(),
  ledger: new Map(),
  usageKeys: new Map(),
  usageCloses: new Map(),
  meterRelays: new Map(),
  meterSends: new Map(),
  meterEventFailures: new Map(),
});

const copy = <T>(v: T): T => structuredClone(v);
const all = <T>(m: Map<string, T>): T[] => [...m.values()].map(copy);
const inTenant = (r: { organisationId: Id; isTest: boolean }, t: Tenant) => r.organisationId === t.organisationId && r.isTest === t.isTest;
const keyId = (t: Tenant, key: string) => `${t.organisationId}:${t.isTest}:${key}`;
const USED_KINDS = new Set(['record', 'consume', 'commit']);

/** The usage repository over in-memory tables (transactions of the in-memory database run one at a time). */
export function memoryUsageRepository(
  db: UsageTables & { subscriptions: Map<Id, Subscription>; customers: Map<Id, Customer> },
): UsageRepository {
  const open = (t: Tenant, owner: string, meterId?: Id) =>
    all(db.balances).filter((b) => inTenant(b, t) && b.owner === owner && (!meterId || b.meterId === meterId) && !b.closedAt);
  const repo: UsageRepository = {
    saveMeter: async (m) => {
      const taken = [...db.usageMeters.values()].find((x) => inTenant(x, m) && x.slug === m.slug && x.id !== m.id);
      if (taken) fail(ErrorCodes.METER_EXISTS, `a meter with slug "${m.slug}" exists`);
      db.usageMeters.set(m.id, copy({ ...m, scale: m.scale ?? db.usageMeters.get(m.id)?.scale ?? 0 }));
    },
    findMeter: async (t, slug) => all(db.usageMeters).find((m) => inTenant(m, t) && m.slug === slug),
    getMeters: async (ids) => ids.flatMap((id) => (db.usageMeters.has(id) ? [copy(db.usageMeters.get(id)!)] : [])),
    pageMeters: async (t, q) =>
      pageOf(
        all(db.usageMeters).filter(
          (m) =>
            inTenant(m, t) && (!q.search || [m.slug, m.name].some((v) => v.toLowerCase().includes((q.search as string).toLowerCase()))),
        ),
        q,
      ),
    lockBalances: async (items, now) => {
      const out: (LockedBalance | null)[] = [];
      for (const i of items)
        out.push(
          i.create === false && !open(i.fresh, i.fresh.owner, i.fresh.meterId)[0] ? null : await repo.lockBalance(i.fresh, i.holdIds, now),
        );
      return out;
    },
    lockBalance: async (fresh, holdIds, now) => {
      let balance = open(fresh, fresh.owner, fresh.meterId)[0];
      if (!balance) {
        db.balances.set(fresh.id, copy(fresh));
        balance = copy(fresh);
      }
      const id = balance.id;
      const grants = all(db.grants).filter((g) => g.balanceId === id && g.amount - g.drawn - g.expired > 0n);
      const holds = all(db.holds).filter(
        (h) => h.balanceId === id && h.status === 'held' && (holdIds.includes(h.id) || h.expiresAt <= now),
      );
      // A named hold of this tenant that is settled or of a closed period is still found (to say so).
      for (const hid of holdIds) {
        const h = db.holds.get(hid);
        if (
          h &&
          !holds.some((x) => x.id === hid) &&
          h.organisationId === balance.organisationId &&
          h.isTest === balance.isTest &&
          (h.status !== 'held' || h.balanceId === id)
        )
          holds.push(copy(h));
      }
      return { balance, grants, holds };
    },
    openBalance: async (t, owner, meterId) => open(t, owner, meterId)[0],
    openBalances: async (t, owner, meterId) => open(t, owner, meterId).sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime()),
    getBalance: async (id) => copy(db.balances.get(id)),
    getHold: async (id) => copy(db.holds.get(id)),
    moveHolds: async (ids, balanceId) => {
      for (const id of ids) {
        const h = db.holds.get(id);
        if (h) h.balanceId = balanceId;
      }
    },
    setPeriodStart: async (id, start) => {
      // As on PostgreSQL: an open balance only.
      const b = db.balances.get(id);
      if (b && !b.closedAt) b.periodStart = new Date(start);
    },
    findKeys: async (t, keys) => keys.flatMap((k) => (db.usageKeys.has(keyId(t, k)) ? [copy(db.usageKeys.get(keyId(t, k))!)] : [])),
    write: async (w) => {
      for (const k of w.keys) {
        if (db.usageKeys.has(keyId(k, k.key)))
          fail(ErrorCodes.CONFLICT, 'a record with the same identity was written meanwhile; reload and retry');
      }
      // As on PostgreSQL: a balance written again keeps its period start (setPeriodStart sets it).
      db.balances.set(w.balance.id, {
        ...copy(w.balance),
        periodStart: db.balances.get(w.balance.id)?.periodStart ?? w.balance.periodStart,
      });
      for (const g of w.grants) db.grants.set(g.id, copy(g));
      // As on PostgreSQL: a hold written again keeps its balance (moveHolds moves it).
      for (const h of w.holds) db.holds.set(h.id, { ...copy(h), balanceId: db.holds.get(h.id)?.balanceId ?? h.balanceId });
      for (const e of w.entries) db.ledger.set(e.id, copy(e));
      for (const k of w.keys) db.usageKeys.set(keyId(k, k.key), copy(k));
    },
    writeMany: async (ws) => {
      const keys = ws.flatMap((w) => w.keys);
      if (new Set(keys.map((k) => keyId(k, k.key))).size < keys.length)
        fail(ErrorCodes.CONFLICT, 'a record with the same identity was written meanwhile; reload and retry');
      for (const k of keys) {
        if (db.usageKeys.has(keyId(k, k.key)))
          fail(ErrorCodes.CONFLICT, 'a record with the same identity was written meanwhile; reload and retry');
      }
      for (const w of ws) await repo.write(w);
    },
    balancesWithDueHolds: async (now, limit) => {
      const ids = new Set(all(db.holds).flatMap((h) => (h.status === 'held' && h.expiresAt <= now ? [h.balanceId] : [])));
      return [...ids].slice(0, limit).flatMap((id) => (db.balances.has(id) ? [copy(db.balances.get(id)!)] : []));
    },
    balancesWithDueGrants: async (now, limit) => {
      const pastExpiry = (g: CreditGrant, b: Balance) =>
        g.expiresAt !== null && g.expiresAt <= now && !(g.source === 'plan' && b.periodEnd !== null && g.expiresAt >= b.periodEnd);
      const due = new Map<Id, { undrawn: bigint; first: number }>();
      for (const g of all(db.grants)) {
        const b = db.balances.get(g.balanceId);
        const undrawn = g.amount - g.drawn - g.expired;
        if (!b || b.closedAt !== null || undrawn <= 0n || !pastExpiry(g, b)) continue;
        const d = due.get(b.id) ?? { undrawn: 0n, first: Infinity };
        due.set(b.id, { undrawn: d.undrawn + undrawn, first: Math.min(d.first, (g.expiresAt as Date).getTime()) });
      }
      return [...due.entries()]
        .filter(([id, d]) => d.undrawn > db.balances.get(id)!.reserved)
        .sort(([, a], [, b]) => a.first - b.first)
        .slice(0, limit)
        .map(([id]) => copy(db.balances.get(id)!));
    },
    balancesWithDueReports: async (now, limit) =>
      all(db.balances)
        .filter((b) => b.closedAt === null && b.reportDueAt !== null && b.reportDueAt <= now)
        .sort((a, b) => (a.reportDueAt as Date).getTime() - (b.reportDueAt as Date).getTime())
        .slice(0, limit),
    pageRecords: async (t, q) =>
      pageOf(
        all(db.ledger).filter(
          (e) => inTenant(e, t) && USED_KINDS.has(e.kind) && (!q.owner || e.owner === q.owner) && (!q.meterId || e.meterId === q.meterId),
        ),
        q,
      ),
    pageRecordsOf: async (t, q) => {
      const owners = new Set(q.owners);
      const sign = q.order === 'asc' ? 1 : -1;
      const records = all(db.ledger)
        .filter((e) => inTenant(e, t) && USED_KINDS.has(e.kind) && q.kinds.includes(e.kind as never) && owners.has(e.owner))
        .sort((a, b) => sign * compareKeys(a, b));
      let start = 0;
      if (q.afterId !== undefined) {
        const at = records.findIndex((e) => e.id === q.afterId);
        if (at < 0) return undefined;
        start = at + 1;
      }
      return { items: records.slice(start, start + q.limit), hasMore: records.length > start + q.limit };
    },
    ledgerOf: async (id) =>
      all(db.ledger)
        .filter((e) => e.balanceId === id)
        .sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime()),
    mismatches: async (limit) => {
      const out: BalanceMismatch[] = [];
      for (const b of db.balances.values()) {
        const sums = { granted: 0n, used: 0n, reserved: 0n };
        for (const e of db.ledger.values()) {
          if (e.balanceId !== b.id) continue;
          sums.granted += e.grantedDelta;
          sums.used += e.usedDelta;
          sums.reserved += e.reservedDelta;
        }
        if (sums.granted !== b.granted || sums.used !== b.used || sums.reserved !== b.reserved)
          out.push({ balanceId: b.id, counters: { granted: b.granted, used: b.used, reserved: b.reserved }, ledger: sums });
      }
      return out.slice(0, limit);
    },
    findClose: async (t, owner, meterId, periodEnd) =>
      all(db.usageCloses).find(
        (c) => inTenant(c, t) && c.owner === owner && c.meterId === meterId && c.periodEnd.getTime() === periodEnd.getTime(),
      ),
    saveClose: async (c) => {
      const taken = [...db.usageCloses.values()].some(
        (x) => inTenant(x, c) && x.owner === c.owner && x.meterId === c.meterId && x.periodEnd.getTime() === c.periodEnd.getTime(),
      );
      if (taken) fail(ErrorCodes.CONFLICT, 'this period was closed already');
      db.usageCloses.set(c.id, copy(c));
    },
    pageCloses: async (t, q) =>
      pageOf(
        all(db.usageCloses)
          .filter((c) => inTenant(c, t) && (!q.owner || c.owner === q.owner) && (!q.meterId || c.meterId === q.meterId))
          .sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || (a.id < b.id ? -1 : 1)),
        { limit: q.limit, after: q.after, before: q.before },
      ),
    // Transactions run one at a time, so the ledger's insertion order is its commit order.
    claimMeterRelay: async (name) => {
      if (!db.meterRelays.has(name))
        db.meterRelays.set(name, { name, position: '0', attempts: 0, nextAttemptAt: null, lastError: null, updatedAt: null });
      return copy(db.meterRelays.get(name));
    },
    pendingMeterEvents: async (cursor, limit) => {
      const entries = [...db.ledger.values()];
      const events: PendingMeterEvent[] = [];
      for (let i = Number(cursor.position); i < entries.length && events.length < limit; i++) {
        const e = entries[i];
        if (!USED_KINDS.has(e.kind) || e.usedDelta <= 0n) continue;
        const s = db.subscriptions.get(e.owner);
        const billed = s && inTenant(s, e) && s.paymentProvider === cursor.name ? db.customers.get(s.customerId) : undefined;
        events.push({
          entryId: e.id,
          organisationId: e.organisationId,
          isTest: e.isTest,
          owner: e.owner,
          balanceId: e.balanceId,
          meterSlug: db.usageMeters.get(e.meterId)?.slug ?? '',
          value: formatUnits(e.usedDelta, db.usageMeters.get(e.meterId)?.scale),
          createdAt: new Date(e.createdAt),
          customerId: billed?.paymentCustomerId ?? null,
          position: String(i + 1),
        });
      }
      return { events, end: String(entries.length) };
    },
    saveMeterRelay: async (cursor) => void db.meterRelays.set(cursor.name, copy(cursor)),
    planMeterSends: async (sends) => {
      for (const s of sends) db.meterSends.set(`${s.provider}:${s.id}`, copy(s));
    },
    plannedMeterSends: async (provider, limit) =>
      all(db.meterSends)
        .filter((s) => s.provider === provider)
        .sort((a, b) => a.firstEntryAt.getTime() - b.firstEntryAt.getTime() || (a.id < b.id ? -1 : 1))
        .slice(0, limit),
    deleteMeterSends: async (provider, ids) => {
      for (const id of ids) db.meterSends.delete(`${provider}:${id}`);
    },
    saveMeterEventFailure: async (f) => {
      const id = `${f.provider}:${f.sendId}`;
      if (!db.meterEventFailures.has(id)) db.meterEventFailures.set(id, copy(f));
    },
    meterEventFailures: async (limit) =>
      all(db.meterEventFailures)
        .sort((a, b) => b.failedAt.getTime() - a.failedAt.getTime())
        .slice(0, limit),
    // The in-memory ledger is one table: nothing to partition.
    maintainLedger: async () => ({ created: [], dropped: [] }),
    purgeKeys: async (before) => {
      let n = 0;
      for (const [id, k] of db.usageKeys) {
        if (k.createdAt < before) {
          db.usageKeys.delete(id);
          n++;
        }
      }
      return n;
    },
  };
  return repo;
}
