import { sql, type Selectable } from 'kysely';
import {
  DomainError,
  formatUnits,
  ErrorCodes,
  type Balance,
  type CreditGrant,
  type GrantSource,
  type Hold,
  type HoldStatus,
  type LedgerEntry,
  type LedgerKind,
  type Page,
  type UsageAnswer,
  type UsageClose,
  type UsageMeter,
  type OutboxEvent,
  type UsageRepository,
  type UsageWrite,
  type WebhookEndpoint,
} from '@tollgate/core';
import type { CreditGrants, Meters, UsageBalances, UsageCloses, UsageHolds, UsageLedger, WebhookEndpoints } from '../schema';
import { toEndpoint } from './webhooks';
import { chunks, json, keysetPage, plainArray, textArray, timeArray, type Db } from './db';

/** The meter-event relay's position: `<transaction id>:<entry id>` (no entry id: nothing of that transaction done yet). */
const relayPosition = (tx: string, entryId: string | null) => `${tx}:${entryId ?? ''}`;
const parsePosition = (position: string): { tx: string; entryId: string | null } => {
  const [tx, entryId] = position.split(':');
  if (!/^[0-9]+$/.test(tx)) throw new Error(`not a meter relay position: ${position}`);
  return { tx, entryId: entryId || null };
};
const NIL_UUID = '00000000-0000-0000-0000-000000000000';
const UUID_TEXT = '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$';

/** numeric columns arrive as text (pg) or a number (PGlite's small values): exact either way as bigint. */
const big = (v: unknown): bigint => BigInt(String(v));
const bigOrNull = (v: unknown): bigint | null => (v === null || v === undefined ? null : big(v));
const text = (v: bigint) => v.toString();

const meterOf = (m: Selectable<Meters>): UsageMeter => ({
  id: m.id,
  organisationId: m.organisation_id as string,
  isTest: m.is_test,
  slug: m.slug,
  name: m.name,
  unitLabel: m.unit_label,
  scale: Number(m.scale),
  paymentMeterId: m.payment_meter_id,
  createdAt: m.created_at,
  updatedAt: m.updated_at,
});

const closeOf = (c: Selectable<UsageCloses>): UsageClose => ({
  id: c.id,
  organisationId: c.organisation_id,
  isTest: c.is_test,
  owner: c.owner,
  meterId: c.meter_id,
  balanceId: c.balance_id,
  subscriptionId: c.subscription_id,
  periodStart: c.period_start,
  periodEnd: c.period_end,
  finalUsage: big(c.final_usage),
  billedUnits: big(c.billed_units),
  currency: c.currency,
  amountMinor: big(c.amount_minor),
  createdAt: c.created_at,
});

const balanceOf = (b: Selectable<UsageBalances>): Balance => ({
  id: b.id,
  organisationId: b.organisation_id,
  isTest: b.is_test,
  owner: b.owner,
  meterId: b.meter_id,
  periodStart: b.period_start,
  periodEnd: b.period_end,
  granted: big(b.granted),
  used: big(b.used),
  reserved: big(b.reserved),
  cap: bigOrNull(b.cap),
  limited: b.limited,
  closedAt: b.closed_at,
  unreported: big(b.unreported),
  unreportedOps: Number(b.unreported_ops),
  reportedAt: b.reported_at,
  reportDueAt: b.report_due_at,
  createdAt: b.created_at,
  updatedAt: b.updated_at,
});

const balanceRow = (b: Balance) => ({
  id: b.id,
  organisation_id: b.organisationId,
  is_test: b.isTest,
  owner: b.owner,
  meter_id: b.meterId,
  period_start: b.periodStart,
  period_end: b.periodEnd,
  granted: text(b.granted),
  used: text(b.used),
  reserved: text(b.reserved),
  cap: b.cap === null ? null : text(b.cap),
  limited: b.limited,
  closed_at: b.closedAt,
  unreported: text(b.unreported),
  unreported_ops: b.unreportedOps,
  reported_at: b.reportedAt,
  report_due_at: b.reportDueAt,
  created_at: b.createdAt,
  updated_at: b.updatedAt,
});

const grantOf = (g: Selectable<CreditGrants>): CreditGrant => ({
  id: g.id,
  balanceId: g.balance_id,
  amount: big(g.amount),
  drawn: big(g.drawn),
  expired: big(g.expired),
  priority: g.priority,
  expiresAt: g.expires_at,
  source: g.source as GrantSource,
  createdAt: g.created_at,
});

/** A live grant as usage_lock_balances returns it (JSON: quantities as text, times as ISO strings). */
interface LockedGrant {
  id: string;
  balance_id: string;
  amount: string;
  drawn: string;
  expired: string;
  priority: number;
  expires_at: string | null;
  source: string;
  created_at: string;
}

/** A balance locked by usage_lock_balances, with its live grants (null: not limited, or none). */
type LockedRow = Selectable<UsageBalances> & { grants: LockedGrant[] | null };

const lockedGrantOf = (g: LockedGrant): CreditGrant => ({
  id: g.id,
  balanceId: g.balance_id,
  amount: big(g.amount),
  drawn: big(g.drawn),
  expired: big(g.expired),
  priority: g.priority,
  expiresAt: g.expires_at === null ? null : new Date(g.expires_at),
  source: g.source as GrantSource,
  createdAt: new Date(g.created_at),
});

const holdOf = (h: Selectable<UsageHolds>): Hold => ({
  id: h.id,
  balanceId: h.balance_id,
  organisationId: h.organisation_id,
  isTest: h.is_test,
  quantity: big(h.quantity),
  status: h.status as HoldStatus,
  committed: bigOrNull(h.committed),
  expiresAt: h.expires_at,
  createdAt: h.created_at,
  settledAt: h.settled_at,
});

const entryOf = (e: Selectable<UsageLedger>): LedgerEntry => ({
  id: e.id,
  organisationId: e.organisation_id,
  isTest: e.is_test,
  balanceId: e.balance_id,
  owner: e.owner,
  meterId: e.meter_id,
  kind: e.kind as LedgerKind,
  quantity: big(e.quantity),
  grantedDelta: big(e.granted_delta),
  usedDelta: big(e.used_delta),
  reservedDelta: big(e.reserved_delta),
  holdId: e.hold_id,
  grantId: e.grant_id,
  idempotencyKey: e.idempotency_key,
  createdAt: e.created_at,
});

const USED_KINDS = ['record', 'consume', 'commit'];
/** The ledger's month partitions are named `usage_ledger_yYYYYmMM` (UTC months). */
const monthStart = (d: Date) => new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1));
const addMonths = (d: Date, n: number) => new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + n, 1));
const partitionName = (month: Date) => `usage_ledger_y${month.getUTCFullYear()}m${String(month.getUTCMonth() + 1).padStart(2, '0')}`;
const monthOf = (name: string): Date | undefined => {
  const m = /^usage_ledger_y(\d{4})m(\d{2})$/.exec(name);
  return m ? new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, 1)) : undefined;
};

const pageMap = <A, B>(p: Page<A>, f: (a: A) => B): Page<B> => ({ ...p, items: p.items.map(f) });

/** Meters, balances, grants, holds, the ledger and its keys (DESIGN section 14). */
export function usageRepository(db: Db): UsageRepository {
  const openQuery = (t: { organisationId: string; isTest: boolean }, owner: string) =>
    db
      .selectFrom('usage_balances')
      .selectAll()
      .where('organisation_id', '=', t.organisationId)
      .where('is_test', '=', t.isTest)
      .where('owner', '=', owner)
      .where('closed_at', 'is', null);
  /**
   * One call writes a whole batch (usage_write_batch, migrations 2026-11-26T10-00 and 2026-11-27T10-00) and appends its
   * events: the session keeps the function's plans, so a batch is not parsed and planned again, and
   * one round trip holds the balances' row locks no longer than needed. Each column travels as one
   * array parameter (quantities as decimal text: exact); an empty array writes nothing to its
   * table. Balances are updated in the order of their ids, the order they were locked in. Returns
   * the enabled webhook endpoints of the events' tenants.
   */
  async function writeBatch(ws: UsageWrite[], events: OutboxEvent[]): Promise<WebhookEndpoint[]> {
    const balances = ws.map((w) => w.balance).sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    const keys = ws.flatMap((x) => x.keys);
    const grants = ws.flatMap((x) => x.grants);
    const holds = ws.flatMap((x) => x.holds);
    const entries = ws.flatMap((x) => x.entries);
    const columns = [
      ...[
        plainArray(balances.map((b) => b.id)),
        plainArray(balances.map((b) => b.granted)),
        plainArray(balances.map((b) => b.used)),
        plainArray(balances.map((b) => b.reserved)),
        plainArray(balances.map((b) => b.cap)),
        plainArray(balances.map((b) => b.limited)),
        timeArray(balances.map((b) => b.closedAt)),
        timeArray(balances.map((b) => b.periodEnd)),
        timeArray(balances.map((b) => b.updatedAt)),
        plainArray(balances.map((b) => b.unreported)),
        plainArray(balances.map((b) => b.unreportedOps)),
        timeArray(balances.map((b) => b.reportedAt)),
        timeArray(balances.map((b) => b.reportDueAt)),
      ],
      ...[
        plainArray(keys.map((k) => k.organisationId)),
        plainArray(keys.map((k) => k.isTest)),
        textArray(keys.map((k) => k.key)),
        textArray(keys.map((k) => k.fingerprint)),
        textArray(keys.map((k) => JSON.stringify(k.answer))),
        timeArray(keys.map((k) => k.createdAt)),
      ],
      ...[
        plainArray(grants.map((g) => g.id)),
        plainArray(grants.map((g) => g.balanceId)),
        plainArray(grants.map((g) => g.amount)),
        plainArray(grants.map((g) => g.drawn)),
        plainArray(grants.map((g) => g.expired)),
        plainArray(grants.map((g) => g.priority)),
        timeArray(grants.map((g) => g.expiresAt)),
        textArray(grants.map((g) => g.source)),
        timeArray(grants.map((g) => g.createdAt)),
      ],
      ...[
        plainArray(holds.map((h) => h.id)),
        plainArray(holds.map((h) => h.balanceId)),
        plainArray(holds.map((h) => h.organisationId)),
        plainArray(holds.map((h) => h.isTest)),
        plainArray(holds.map((h) => h.quantity)),
        textArray(holds.map((h) => h.status)),
        plainArray(holds.map((h) => h.committed)),
        timeArray(holds.map((h) => h.expiresAt)),
        timeArray(holds.map((h) => h.createdAt)),
        timeArray(holds.map((h) => h.settledAt)),
      ],
      ...[
        plainArray(entries.map((e) => e.id)),
        plainArray(entries.map((e) => e.organisationId)),
        plainArray(entries.map((e) => e.isTest)),
        plainArray(entries.map((e) => e.balanceId)),
        textArray(entries.map((e) => e.owner)),
        plainArray(entries.map((e) => e.meterId)),
        textArray(entries.map((e) => e.kind)),
        plainArray(entries.map((e) => e.quantity)),
        plainArray(entries.map((e) => e.grantedDelta)),
        plainArray(entries.map((e) => e.usedDelta)),
        plainArray(entries.map((e) => e.reservedDelta)),
        plainArray(entries.map((e) => e.holdId)),
        plainArray(entries.map((e) => e.grantId)),
        textArray(entries.map((e) => e.idempotencyKey)),
        timeArray(entries.map((e) => e.createdAt)),
      ],
      ...[
        plainArray(events.map((e) => e.id)),
        plainArray(events.map((e) => e.organisationId)),
        plainArray(events.map((e) => e.isTest)),
        textArray(events.map((e) => e.type)),
        plainArray(events.map((e) => e.orderingKey)),
        json(events.map((e) => e.payload)),
        timeArray(events.map((e) => e.createdAt)),
      ],
    ];
    // The parameters take their types from the function's signature.
    const rows = await sql<Selectable<WebhookEndpoints>>`select * from usage_write_batch(${sql.join(columns)})`.execute(db);
    return rows.rows.map(toEndpoint);
  }
  const repo: UsageRepository = {
    async saveMeter(m) {
      const row = {
        id: m.id,
        organisation_id: m.organisationId,
        is_test: m.isTest,
        slug: m.slug,
        name: m.name,
        unit_label: m.unitLabel,
        payment_meter_id: m.paymentMeterId,
        created_at: m.createdAt,
        updated_at: m.updatedAt,
        scale: m.scale ?? 0,
      };
      // A meter saved without a scale (a plan's line item naming it) keeps the one it has.
      const { id: _id, scale: _scale, ...rest } = row;
      void _id;
      const update = m.scale === undefined ? rest : { ...rest, scale: _scale };
      try {
        await db
          .insertInto('meters')
          .values(row)
          .onConflict((oc) => oc.column('id').doUpdateSet(update))
          .execute();
      } catch (e) {
        if ((e as { code?: string }).code === '23505')
          throw new DomainError(ErrorCodes.METER_EXISTS, `a meter with slug "${m.slug}" exists`);
        throw e;
      }
    },
    async findMeter(t, slug) {
      const row = await db
        .selectFrom('meters')
        .selectAll()
        .where('organisation_id', '=', t.organisationId)
        .where('is_test', '=', t.isTest)
        .where('slug', '=', slug)
        .executeTakeFirst();
      return row && meterOf(row);
    },
    async getMeters(ids) {
      if (ids.length === 0) return [];
      return (await db.selectFrom('meters').selectAll().where('id', 'in', ids).where('organisation_id', 'is not', null).execute()).map(
        meterOf,
      );
    },
    async pageMeters(t, q) {
      return pageMap(
        await keysetPage(
          () => {
            const b = db
              .selectFrom('meters as m')
              .selectAll('m')
              .where('m.organisation_id', '=', t.organisationId)
              .where('m.is_test', '=', t.isTest);
            if (!q.search) return b;
            const like = `%${q.search.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
            return b.where((eb) => eb.or([eb('m.slug', 'ilike', like), eb('m.name', 'ilike', like)]));
          },
          'm',
          q,
        ),
        meterOf,
      );
    },
    async lockBalances(items, now) {
      if (items.length === 0) return [];
      const keyOf = (b: { organisationId: string; isTest: boolean; owner: string; meterId: string }) =>
        `${b.organisationId}:${b.isTest}:${b.meterId}:${b.owner}`;
      const rowKey = (r: Selectable<UsageBalances>) =>
        keyOf({ organisationId: r.organisation_id, isTest: r.is_test, owner: r.owner, meterId: r.meter_id });
      // One round trip locks every open balance of the batch, in the order of their ids (two writers
      // locking overlapping sets take the rows they share in the same order and never deadlock), and
      // reads them with the live grants of the limited ones, under the locks (usage_lock_balances,
      // migration 2026-11-25T10-00-usage-lock). The keys travel as arrays joined row by row
      // (`unnest`): one index probe per balance on the full unique key whatever the planner's
      // statistics say (a row-value IN list let a stale-statistics plan scan every balance of the
      // organisation, 6 ms a batch at 10 000 balances), and one statement text whatever the batch size.
      const lockAll = async (fs: Balance[]) =>
        (
          await sql<LockedRow>`
            select * from usage_lock_balances(${plainArray(fs.map((f) => f.organisationId))}::uuid[], ${plainArray(fs.map((f) => f.isTest))}::boolean[],
              ${textArray(fs.map((f) => f.owner))}::text[], ${plainArray(fs.map((f) => f.meterId))}::uuid[])`.execute(db)
        ).rows;
      /** Whether any of these keys has an open balance now (read without a lock). */
      const anyOpen = async (fs: Balance[]) =>
        (
          await sql<{ one: number }>`
            select 1 as one from unnest(${plainArray(fs.map((f) => f.organisationId))}::uuid[], ${plainArray(fs.map((f) => f.isTest))}::boolean[],
              ${textArray(fs.map((f) => f.owner))}::text[], ${plainArray(fs.map((f) => f.meterId))}::uuid[]) as k (o, t, w, m)
            join usage_balances b on b.organisation_id = k.o and b.is_test = k.t and b.owner = k.w and b.meter_id = k.m and b.closed_at is null
            limit 1`.execute(db)
        ).rows.length > 0;
      const found = new Map<string, LockedRow>();
      for (const r of await lockAll(items.map((i) => i.fresh))) found.set(rowKey(r), r);
      for (let attempt = 0; ; attempt++) {
        // Balances not found: new, or their period closed while this waited (a renewal, a plan move).
        const absent = items.filter((i) => !found.has(keyOf(i.fresh)));
        // Missing balances are created, except where the caller only settles an existing one
        // (`create: false`: a hold's commit or release, the sweep): that one is looked for again
        // while one is open now, since the close that ended the period it waited on may have
        // opened the next (and moved its holds there), and another close may have followed.
        const missing = absent.filter((i) => i.create !== false).map((i) => i.fresh);
        if (absent.length === 0) break;
        if (missing.length === 0 && attempt > 0 && !(await anyOpen(absent.map((i) => i.fresh)))) break;
        if (attempt === 5) throw new DomainError(ErrorCodes.CONFLICT, 'the balance changed period repeatedly meanwhile; retry');
        missing.sort((a, b) => (keyOf(a) < keyOf(b) ? -1 : 1));
        for (const part of chunks(missing, 15))
          await db
            .insertInto('usage_balances')
            .values(part.map(balanceRow))
            .onConflict((oc) => oc.columns(['organisation_id', 'is_test', 'owner', 'meter_id']).where('closed_at', 'is', null).doNothing())
            .execute();
        for (const r of await lockAll(absent.map((i) => i.fresh))) found.set(rowKey(r), r);
      }
      const rows = items.map((i) => found.get(keyOf(i.fresh)) ?? null);
      // Open holds only where something is reserved or named.
      const due = rows.flatMap((r, n) => (r && (big(r.reserved) !== 0n || items[n].holdIds.length > 0) ? [r.id] : []));
      const named = [...new Set(items.flatMap((i) => i.holdIds))];
      const holds = due.length
        ? await db
            .selectFrom('usage_holds')
            .selectAll()
            .where((eb) =>
              eb.or([
                eb.and([eb('balance_id', 'in', due), eb('status', '=', 'held'), eb('expires_at', '<=', now)]),
                ...(named.length ? [eb('id', 'in', named)] : []),
              ]),
            )
            .execute()
        : [];
      return rows.map((row, n) =>
        row === null
          ? null
          : {
              balance: balanceOf(row),
              grants: (row.grants ?? []).map(lockedGrantOf),
              holds: holds
                .filter(
                  (h) =>
                    (h.balance_id === row.id && h.status === 'held' && h.expires_at <= now) ||
                    (items[n].holdIds.includes(h.id) && h.organisation_id === row.organisation_id && h.is_test === row.is_test),
                )
                .filter((h) => h.status !== 'held' || h.balance_id === row.id)
                .map(holdOf),
            },
      );
    },
    async lockBalance(fresh, holdIds, now) {
      // Insert-if-missing, then lock: two instances creating the same balance meet at the unique index.
      // A period closed while this waited for the lock no longer matches once locked (READ
      // COMMITTED re-checks the row): then the next period's balance, committed by the close, is taken.
      // The common case (the balance exists) locks it in one statement; the insert only when it is missing.
      const locked = () => openQuery(fresh, fresh.owner).where('meter_id', '=', fresh.meterId).forUpdate().executeTakeFirst();
      let row: Selectable<UsageBalances> | undefined = await locked();
      for (let attempt = 0; !row; attempt++) {
        if (attempt === 5) throw new DomainError(ErrorCodes.CONFLICT, 'the balance changed period repeatedly meanwhile; retry');
        await db
          .insertInto('usage_balances')
          .values(balanceRow(fresh))
          .onConflict((oc) => oc.columns(['organisation_id', 'is_test', 'owner', 'meter_id']).where('closed_at', 'is', null).doNothing())
          .execute();
        row = await locked();
      }
      // Grants exist only on a limited balance, open holds only where something is reserved: the
      // queries are skipped when they could find nothing.
      const [grants, holds] = await Promise.all([
        row.limited
          ? db
              .selectFrom('credit_grants')
              .selectAll()
              .where('balance_id', '=', row.id)
              // `live` (drawn + expired < amount, stored) is the partial index's predicate.
              .where('live', '=', true)
              .execute()
          : [],
        big(row.reserved) === 0n && holdIds.length === 0
          ? []
          : db
              .selectFrom('usage_holds')
              .selectAll()
              .where((eb) =>
                eb.or([
                  eb.and([eb('balance_id', '=', row.id), eb('status', '=', 'held'), eb('expires_at', '<=', now)]),
                  ...(holdIds.length
                    ? [eb.and([eb('id', 'in', holdIds), eb('organisation_id', '=', row.organisation_id), eb('is_test', '=', row.is_test)])]
                    : []),
                ]),
              )
              .execute(),
      ]);
      return {
        balance: balanceOf(row),
        grants: grants.map(grantOf),
        holds: holds.filter((h) => h.status !== 'held' || h.balance_id === row.id).map(holdOf),
      };
    },
    async openBalance(t, owner, meterId) {
      const row = await openQuery(t, owner).where('meter_id', '=', meterId).executeTakeFirst();
      return row && balanceOf(row);
    },
    async openBalances(t, owner, meterId) {
      let q = openQuery(t, owner);
      if (meterId) q = q.where('meter_id', '=', meterId);
      return (await q.orderBy('created_at').orderBy('id').execute()).map(balanceOf);
    },
    async getBalance(id) {
      const row = await db.selectFrom('usage_balances').selectAll().where('id', '=', id).executeTakeFirst();
      return row && balanceOf(row);
    },
    async getHold(id) {
      const row = await db.selectFrom('usage_holds').selectAll().where('id', '=', id).executeTakeFirst();
      return row && holdOf(row);
    },
    async moveHolds(ids, balanceId) {
      if (ids.length) await db.updateTable('usage_holds').set({ balance_id: balanceId }).where('id', 'in', ids).execute();
    },
    async setPeriodStart(id, start) {
      await db.updateTable('usage_balances').set({ period_start: start }).where('id', '=', id).where('closed_at', 'is', null).execute();
    },
    async findKeys(t, keys) {
      if (keys.length === 0) return [];
      // The keys as one array parameter: one statement text whatever the batch's number of keys.
      const rows = await db
        .selectFrom('usage_keys')
        .selectAll()
        .where('organisation_id', '=', t.organisationId)
        .where('is_test', '=', t.isTest)
        .where('key', '=', sql<string>`any(${textArray(keys)}::text[])`)
        .execute();
      return rows.map((k) => ({
        organisationId: k.organisation_id,
        isTest: k.is_test,
        key: k.key,
        fingerprint: k.fingerprint,
        answer: k.answer as unknown as UsageAnswer,
        createdAt: k.created_at,
      }));
    },
    async write(w) {
      await repo.writeMany([w]);
    },
    async writeMany(ws) {
      if (ws.length) await writeBatch(ws, []);
    },
    async writeManyAppending(ws, events) {
      return ws.length || events.length ? writeBatch(ws, events) : [];
    },
    async balancesWithDueHolds(now, limit) {
      const rows = await db
        .selectFrom('usage_balances')
        .selectAll()
        .where('id', 'in', (eb) =>
          eb.selectFrom('usage_holds').select('balance_id').where('status', '=', 'held').where('expires_at', '<=', now).limit(limit),
        )
        .execute();
      return rows.map(balanceOf);
    },
    async balancesWithDueGrants(now, limit) {
      // By the partial index credit_grants_due (live grants with an expiry): balances whose credit
      // past its expiry is more than their holds keep (lapseExpired keeps at most `reserved` of it
      // over all such grants), oldest expiry first.
      const rows = await db
        .selectFrom('usage_balances as b')
        .selectAll('b')
        .where('b.id', 'in', (eb) =>
          eb
            .selectFrom('credit_grants as g')
            .innerJoin('usage_balances as o', 'o.id', 'g.balance_id')
            .select('g.balance_id')
            .where(sql<boolean>`g.live`)
            .where('g.expires_at', 'is not', null)
            .where('g.expires_at', '<=', now)
            .where('o.closed_at', 'is', null)
            .where(sql<boolean>`not (g.source = 'plan' and o.period_end is not null and g.expires_at >= o.period_end)`)
            .groupBy(['g.balance_id', 'o.reserved'])
            .having(sql<boolean>`sum(g.amount - g.drawn - g.expired) > o.reserved`)
            .orderBy(sql`min(g.expires_at)`)
            .limit(limit),
        )
        .execute();
      return rows.map(balanceOf);
    },
    async balancesWithDueReports(now, limit) {
      const rows = await db
        .selectFrom('usage_balances')
        .selectAll()
        .where('report_due_at', '<=', now)
        .where('closed_at', 'is', null)
        .orderBy('report_due_at')
        .limit(limit)
        .execute();
      return rows.map(balanceOf);
    },
    async pageRecords(t, q) {
      const page = await keysetPage(
        () => {
          let b = db
            .selectFrom('usage_ledger as l')
            .selectAll('l')
            .where('l.organisation_id', '=', t.organisationId)
            .where('l.is_test', '=', t.isTest)
            .where('l.kind', 'in', USED_KINDS);
          if (q.owner) b = b.where('l.owner', '=', q.owner);
          if (q.meterId) b = b.where('l.meter_id', '=', q.meterId);
          return b;
        },
        'l',
        q,
      );
      return pageMap(page, entryOf);
    },
    async pageRecordsOf(t, q) {
      if (q.afterId !== undefined && !new RegExp(UUID_TEXT).test(q.afterId)) return undefined;
      if (!q.owners.length || !q.kinds.length) return q.afterId === undefined ? { items: [], hasMore: false } : undefined;
      // The kinds as literals, so that the planner matches the partial index of used entries (usage_ledger_records).
      const usedOf = (a: 'l' | 'c') =>
        sql<boolean>`${sql.ref(`${a}.organisation_id`)} = ${t.organisationId} and ${sql.ref(`${a}.is_test`)} = ${t.isTest}
          and ${sql.ref(`${a}.kind`)} in ('record', 'consume', 'commit') and ${sql.ref(`${a}.kind`)} = any(${textArray(q.kinds)}::text[]) and ${sql.ref(`${a}.owner`)} = any(${textArray(q.owners)}::text[])`;
      const desc = q.order === 'desc';
      let query = db.selectFrom('usage_ledger as l').selectAll('l').where(usedOf('l'));
      // The cursor's exact position (microseconds) is read in the statement itself; over the month
      // partitions an ordered scan stops after limit + 1 rows.
      if (q.afterId !== undefined) {
        const cursor = db
          .selectFrom('usage_ledger as c')
          .select(['c.created_at', 'c.id'])
          .where(usedOf('c'))
          .where('c.id', '=', q.afterId)
          .limit(1);
        query = query.where(sql<boolean>`(l.created_at, l.id) ${sql.raw(desc ? '<' : '>')} (${cursor})`);
      }
      const rows = await query
        .orderBy('l.created_at', desc ? 'desc' : 'asc')
        .orderBy('l.id', desc ? 'desc' : 'asc')
        .limit(q.limit + 1)
        .execute();
      if (!rows.length && q.afterId !== undefined) {
        const known = await db
          .selectFrom('usage_ledger as c')
          .select(sql`1`.as('one'))
          .where(usedOf('c'))
          .where('c.id', '=', q.afterId)
          .limit(1)
          .execute();
        if (!known.length) return undefined;
      }
      return { items: rows.slice(0, q.limit).map(entryOf), hasMore: rows.length > q.limit };
    },
    async findClose(t, owner, meterId, periodEnd) {
      const row = await db
        .selectFrom('usage_closes')
        .selectAll()
        .where('organisation_id', '=', t.organisationId)
        .where('is_test', '=', t.isTest)
        .where('owner', '=', owner)
        .where('meter_id', '=', meterId)
        .where('period_end', '=', periodEnd)
        .executeTakeFirst();
      return row && closeOf(row);
    },
    async saveClose(c) {
      const inserted = await db
        .insertInto('usage_closes')
        .values({
          id: c.id,
          organisation_id: c.organisationId,
          is_test: c.isTest,
          owner: c.owner,
          meter_id: c.meterId,
          balance_id: c.balanceId,
          subscription_id: c.subscriptionId,
          period_start: c.periodStart,
          period_end: c.periodEnd,
          final_usage: text(c.finalUsage),
          billed_units: text(c.billedUnits),
          currency: c.currency,
          amount_minor: text(c.amountMinor),
          created_at: c.createdAt,
        })
        .onConflict((oc) => oc.columns(['organisation_id', 'is_test', 'owner', 'meter_id', 'period_end']).doNothing())
        .executeTakeFirst();
      if (Number(inserted.numInsertedOrUpdatedRows ?? 0n) === 0)
        throw new DomainError(ErrorCodes.CONFLICT, 'this period was closed already');
    },
    async pageCloses(t, q) {
      const page = await keysetPage(
        () => {
          let b = db
            .selectFrom('usage_closes as c')
            .selectAll('c')
            .where('c.organisation_id', '=', t.organisationId)
            .where('c.is_test', '=', t.isTest);
          if (q.owner) b = b.where('c.owner', '=', q.owner);
          if (q.meterId) b = b.where('c.meter_id', '=', q.meterId);
          return b;
        },
        'c',
        q,
      );
      return pageMap(page, closeOf);
    },
    async ledgerOf(balanceId) {
      return (
        await db.selectFrom('usage_ledger').selectAll().where('balance_id', '=', balanceId).orderBy('created_at').orderBy('id').execute()
      ).map(entryOf);
    },
    async mismatches(limit) {
      // Retention drops old months of closed balances only: a closed balance made before the oldest
      // month kept may have lost rows to it, so only open balances and later closed ones are compared.
      const months = (
        await sql<{ name: string }>`
          select c.relname as name from pg_inherits i
          join pg_class c on c.oid = i.inhrelid join pg_class p on p.oid = i.inhparent
          where p.relname = 'usage_ledger'`.execute(db)
      ).rows.flatMap((r) => monthOf(r.name) ?? []);
      const kept = months.length ? new Date(Math.min(...months.map((m) => m.getTime()))) : new Date(0);
      const rows = await sql<{
        id: string;
        granted: string;
        used: string;
        reserved: string;
        lg: string | null;
        lu: string | null;
        lr: string | null;
      }>`
        select b.id, b.granted, b.used, b.reserved, l.g as lg, l.u as lu, l.r as lr
        from usage_balances b
        left join (select balance_id, sum(granted_delta) g, sum(used_delta) u, sum(reserved_delta) r from usage_ledger group by balance_id) l on l.balance_id = b.id
        where (b.closed_at is null or b.created_at >= ${kept})
          and (b.granted <> coalesce(l.g, 0) or b.used <> coalesce(l.u, 0) or b.reserved <> coalesce(l.r, 0))
        limit ${limit}`.execute(db);
      return rows.rows.map((r) => ({
        balanceId: r.id,
        counters: { granted: big(r.granted), used: big(r.used), reserved: big(r.reserved) },
        ledger: { granted: big(r.lg ?? 0), used: big(r.lu ?? 0), reserved: big(r.lr ?? 0) },
      }));
    },
    async maintainLedger(now, retentionMonths, ahead) {
      // One maintainer at a time across instances; the partition DDL locks the ledger briefly.
      await sql`select pg_advisory_xact_lock(hashtext('tollgate.usage_ledger.partitions'))`.execute(db);
      const existing = new Set(
        (
          await sql<{ name: string }>`
            select c.relname as name from pg_inherits i
            join pg_class c on c.oid = i.inhrelid join pg_class p on p.oid = i.inhparent
            where p.relname = 'usage_ledger'`.execute(db)
        ).rows.map((r) => r.name),
      );
      const created: string[] = [];
      const dropped: string[] = [];
      const first = monthStart(now);
      for (let k = 0; k <= ahead; k++) {
        const from = addMonths(first, k);
        const to = addMonths(first, k + 1);
        const name = partitionName(from);
        if (existing.has(name)) continue;
        const table = sql.table(name);
        const inDefault = await sql`select 1 from usage_ledger_default where created_at >= ${from} and created_at < ${to} limit 1`.execute(
          db,
        );
        if (inDefault.rows.length) {
          // The month's rows already in the default partition move into the month's own.
          await sql`alter table usage_ledger detach partition usage_ledger_default`.execute(db);
          await sql`create table ${table} partition of usage_ledger for values from (${sql.lit(from.toISOString())}) to (${sql.lit(to.toISOString())})`.execute(
            db,
          );
          await sql`insert into ${table} select * from usage_ledger_default where created_at >= ${from} and created_at < ${to}`.execute(db);
          await sql`delete from usage_ledger_default where created_at >= ${from} and created_at < ${to}`.execute(db);
          await sql`alter table usage_ledger attach partition usage_ledger_default default`.execute(db);
        } else {
          await sql`create table ${table} partition of usage_ledger for values from (${sql.lit(from.toISOString())}) to (${sql.lit(to.toISOString())})`.execute(
            db,
          );
        }
        created.push(name);
      }
      if (retentionMonths !== null) {
        const cutoff = addMonths(first, -retentionMonths);
        for (const name of [...existing].sort()) {
          const start = monthOf(name);
          if (!start || addMonths(start, 1) > cutoff) continue;
          const table = sql.table(name);
          // A month holding a row of an open balance stays: its period's ledger must stay whole.
          const open =
            await sql`select 1 from ${table} l join usage_balances b on b.id = l.balance_id where b.closed_at is null limit 1`.execute(db);
          if (open.rows.length) continue;
          // A month holding an entry the meter-event relay has not passed yet (of a subscription a
          // relayed provider bills) stays too: retention never drops usage before it was planned
          // (a planned send keeps its own sum in usage_meter_sends until the provider takes it).
          const unsent = await sql`select 1 from ${table} l
            join usage_meter_relay r on (l.tx, l.id) > (r.tx, coalesce(r.entry_id, ${NIL_UUID}::uuid))
            join subscriptions s on s.id = (case when l.owner ~* ${UUID_TEXT} then l.owner::uuid end)
              and s.organisation_id = l.organisation_id and s.payment_provider = r.name
            where l.used_delta > 0 and l.kind in ('record', 'consume', 'commit') limit 1`.execute(db);
          if (unsent.rows.length) continue;
          await sql`alter table usage_ledger detach partition ${table}`.execute(db);
          await sql`drop table ${table}`.execute(db);
          dropped.push(name);
        }
      }
      return { created, dropped };
    },
    async claimMeterRelay(name) {
      const claim = () =>
        sql<{
          tx: string;
          entry_id: string | null;
          attempts: number;
          next_attempt_at: Date | null;
          last_error: string | null;
          updated_at: Date | null;
        }>`
          select tx::text as tx, entry_id, attempts, next_attempt_at, last_error, updated_at
          from usage_meter_relay where name = ${name} for update skip locked`.execute(db);
      let rows = (await claim()).rows;
      if (!rows.length) {
        // None yet (the migration made Stripe's): one from the ledger's start. A row another relay holds is left alone.
        const made = await sql`insert into usage_meter_relay (name, tx) values (${name}, 0) on conflict (name) do nothing`.execute(db);
        if (!Number(made.numAffectedRows ?? 0)) return undefined;
        rows = (await claim()).rows;
      }
      const c = rows[0];
      if (!c) return undefined;
      return {
        name,
        position: relayPosition(c.tx, c.entry_id),
        attempts: Number(c.attempts),
        nextAttemptAt: c.next_attempt_at,
        lastError: c.last_error,
        updatedAt: c.updated_at,
      };
    },
    async pendingMeterEvents(cursor, limit) {
      const { tx, entryId } = parsePosition(cursor.position);
      // Every transaction below the horizon has finished: its entries are all visible to the next
      // statement, and none can appear below it later. Entries of later ones wait for a later pass.
      const horizon = (await sql<{ h: string }>`select (pg_snapshot_xmin(pg_current_snapshot())::text) as h`.execute(db)).rows[0].h;
      const rows = (
        await sql<{
          id: string;
          tx: string;
          organisation_id: string;
          is_test: boolean;
          owner: string;
          balance_id: string;
          meter_slug: string;
          scale: number;
          value: string;
          created_at: Date;
          customer_id: string | null;
        }>`
          select l.id, l.tx::text as tx, l.organisation_id, l.is_test, l.owner, l.balance_id, m.slug as meter_slug, m.scale,
                 l.used_delta::text as value, l.created_at, c.payment_customer_id as customer_id
          from usage_ledger l
          join meters m on m.id = l.meter_id
          left join subscriptions s
            on s.id = (case when l.owner ~* ${UUID_TEXT} then l.owner::uuid end)
           and s.organisation_id = l.organisation_id and s.is_test = l.is_test and s.payment_provider = ${cursor.name}
          left join customers c on c.id = s.customer_id
          where l.tx >= ${tx}::bigint and l.tx < ${horizon}::bigint
            and (l.tx, l.id) > (${tx}::bigint, ${entryId ?? NIL_UUID}::uuid)
            and l.kind in ('record', 'consume', 'commit') and l.used_delta > 0
          order by l.tx, l.id
          limit ${limit}`.execute(db)
      ).rows;
      return {
        events: rows.map((r) => ({
          entryId: r.id,
          organisationId: r.organisation_id,
          isTest: r.is_test,
          owner: r.owner,
          balanceId: r.balance_id,
          meterSlug: r.meter_slug,
          value: formatUnits(BigInt(r.value), Number(r.scale)),
          createdAt: r.created_at,
          customerId: r.customer_id,
          position: relayPosition(r.tx, r.id),
        })),
        // Fewer than asked: everything below the horizon is done; the cursor may start at it.
        end: BigInt(horizon) > BigInt(tx) ? relayPosition(horizon, null) : cursor.position,
      };
    },
    async saveMeterRelay(c) {
      const { tx, entryId } = parsePosition(c.position);
      await sql`update usage_meter_relay set tx = ${tx}::bigint, entry_id = ${entryId}, attempts = ${c.attempts},
        next_attempt_at = ${c.nextAttemptAt}, last_error = ${c.lastError}, updated_at = ${c.updatedAt} where name = ${c.name}`.execute(db);
    },
    async planMeterSends(sends) {
      const rows = sends.map((m) => ({
        id: m.id,
        provider: m.provider,
        organisation_id: m.organisationId,
        is_test: m.isTest,
        owner: m.owner,
        meter_slug: m.meterSlug,
        customer_id: m.customerId,
        value: m.value,
        event_at: m.timestamp,
        first_entry_at: m.firstEntryAt,
        entries: m.entries,
        created_at: m.createdAt,
      }));
      if (!rows.length) return;
      for (const chunk of chunks(rows, Object.keys(rows[0]).length)) await db.insertInto('usage_meter_sends').values(chunk).execute();
    },
    async plannedMeterSends(provider, limit) {
      const rows = await db
        .selectFrom('usage_meter_sends')
        .selectAll()
        .where('provider', '=', provider)
        .orderBy('first_entry_at')
        .orderBy('id')
        .limit(limit)
        .execute();
      return rows.map((m) => ({
        id: m.id,
        provider: m.provider,
        organisationId: m.organisation_id,
        isTest: m.is_test,
        owner: m.owner,
        meterSlug: m.meter_slug,
        customerId: m.customer_id,
        value: String(m.value),
        timestamp: m.event_at,
        firstEntryAt: m.first_entry_at,
        entries: Number(m.entries),
        createdAt: m.created_at,
      }));
    },
    async deleteMeterSends(provider, ids) {
      for (const chunk of chunks(ids, 1))
        await db.deleteFrom('usage_meter_sends').where('provider', '=', provider).where('id', 'in', chunk).execute();
    },
    async saveMeterEventFailure(f) {
      await db
        .insertInto('usage_meter_event_failures')
        .values({
          send_id: f.sendId,
          provider: f.provider,
          organisation_id: f.organisationId,
          is_test: f.isTest,
          owner: f.owner,
          meter_slug: f.meterSlug,
          customer_id: f.customerId,
          value: f.value,
          event_at: f.timestamp,
          entries: f.entries,
          error: f.error,
          failed_at: f.failedAt,
        })
        .onConflict((o) => o.columns(['provider', 'send_id']).doNothing())
        .execute();
    },
    async meterEventFailures(limit) {
      const rows = await db.selectFrom('usage_meter_event_failures').selectAll().orderBy('failed_at', 'desc').limit(limit).execute();
      return rows.map((f) => ({
        sendId: f.send_id,
        provider: f.provider,
        organisationId: f.organisation_id,
        isTest: f.is_test,
        owner: f.owner,
        meterSlug: f.meter_slug,
        customerId: f.customer_id,
        value: String(f.value),
        timestamp: f.event_at,
        entries: Number(f.entries),
        error: f.error,
        failedAt: f.failed_at,
      }));
    },
    async purgeKeys(before) {
      const r = await db.deleteFrom('usage_keys').where('created_at', '<', before).executeTakeFirst();
      return Number(r.numDeletedRows);
    },
  };
  return repo;
}
