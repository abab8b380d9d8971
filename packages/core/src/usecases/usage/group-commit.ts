import { AsyncResource } from 'node:async_hooks';
import { DomainError, ErrorCodes, isDomainError, isOutage } from '../../errors';
import { decide, expireDue, reportDue, sortGrants, type BalanceState, type UsageOp } from '../../domain/usage';
import type { Balance, CreditGrant, Hold, LedgerEntry, UsageMeter, Tenant, UsageAnswer, UsageKey } from '../../model';
import type { Clock, IdGenerator, LockedBalance, Repositories, UnitOfWork, UsageWrite } from '../../ports';
import { freshBalance } from './periods';
import { Lru } from '../../support/lru';
import { isUuid } from '../../support/text';

/** Most operations one transaction decides (a longer queue is written in several). */
export const MAX_BATCH = 500;
/** Most balances one transaction takes. */
export const MAX_BALANCES = 64;
/**
 * Transactions one instance runs at once. One runs whenever operations wait; operations that
 * arrive while it runs wait for the next one, which takes them all (of many balances): fewer,
 * bigger transactions than one per balance, and a batch's fixed cost (its round trips, statements
 * and commit) shared by more operations. A further transaction starts only when a whole batch
 * waits (MAX_BALANCES balances or MAX_BATCH operations), up to this many: a slow database then still
 * gets more work at once, but a busy one is never given two half batches where one full one would
 * do. Measured (`node bench/usage-cpu.js spread 1|2`): always two at once cost 20 to 40 % more CPU
 * an operation on the server and PostgreSQL than one at a time.
 */
const MAX_RUNNING = 4;
/**
 * How long operations may wait while a transaction runs before a further one is started for them
 * anyway (up to MAX_RUNNING): a slow or stuck transaction (one waiting for a row lock another
 * instance or the renewal sweep holds, say) must not hold up every other balance of the instance.
 * A healthy batch takes a few milliseconds, so this rarely fires.
 */
export const STALL_MS = 25;
/** Times a batch is tried again when a concurrent writer on another balance took one of its keys. */
const CONFLICT_RETRIES = 3;

/**
 * The async context drains run in: the one this module was loaded in (start-up), never a caller's.
 * A drain answers many callers; run in the first caller's context it would carry that request's
 * AsyncLocalStorage stores (request id, log fields) into the transaction of all the others.
 */
const DETACHED = new AsyncResource('tollgate.usage.group-commit');

/** One operation waiting in a balance's queue. */
interface Pending {
  /** Null: nothing to decide, only what the clock made due (the sweep's tick). */
  op: UsageOp | null;
  key?: string;
  fingerprint: string;
  resolve(a: UsageAnswer): void;
  reject(e: unknown): void;
}

/** The queue of one balance: operations in arrival order, and whether a transaction has some of them. */
interface Queue {
  target: BalanceTarget;
  pending: Pending[];
  busy: boolean;
  /** When it last became ready (milliseconds, performance.now()): how long its oldest operation has waited for a transaction. */
  readySince: number;
}

/** A balance's share of one transaction. */
interface Group {
  id: string;
  target: BalanceTarget;
  batch: Pending[];
}

const settle = (batch: Pending[], results: (UsageAnswer | Error)[]) =>
  results.forEach((r, i) => (r instanceof Error ? batch[i].reject(r) : batch[i].resolve(r)));

/** Where a balance lives and what a new one starts as. */
export interface BalanceTarget {
  tenant: Tenant;
  owner: string;
  meter: UsageMeter;
  /** Period and cap of the balance if it has to be created. */
  periodStart?: Date;
  periodEnd?: Date | null;
  cap?: bigint | null;
}

/**
 * Group commit (DESIGN section 14): operations queue in this instance per balance in arrival order;
 * whatever queued while transactions were running is decided together by the next one, of many
 * balances at once (at most MAX_BALANCES and MAX_BATCH operations), set-based: one statement locks
 * all its balances (in the order of their ids, so instances never deadlock), each balance's
 * operations are decided in memory in arrival order under that lock, and one statement a table
 * writes them. Each caller is answered only after that transaction commits. A balance is in at most
 * one running transaction of an instance, and instances serialise on the row locks, so no decision
 * ever sees stale counters.
 */
export class GroupCommit {
  private readonly queues = new Map<string, Queue>();
  /** Holders (UUIDs) known to be no subscription: see `endedHolders`. */
  private readonly notSubscriptions = new Lru<string, true>(10_000);
  /** Balances with operations waiting and none in a running transaction, oldest first. */
  private readonly ready = new Set<string>();
  private running = 0;
  /** Armed while operations wait behind running transactions: starts one more if they wait too long. */
  private stallTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly deps: { uow: UnitOfWork; clock: Clock; ids: IdGenerator },
    /** False: no queue, every operation its own transaction (the one-transaction-per-operation baseline). */
    private readonly grouped = true,
    /** Told of each committed write's ledger entries (after the commit; never awaited by the callers). */
    private readonly committed?: (target: BalanceTarget, entries: LedgerEntry[]) => void,
    /** How long operations may wait behind running transactions before another is started (STALL_MS). */
    private readonly stallMs = STALL_MS,
  ) {}

  /** Marks the balance's queue ready (waiting for a transaction), keeping when it first became so. */
  private markReady(id: string, queue: Queue): void {
    if (this.ready.has(id)) return;
    queue.readySince = performance.now();
    this.ready.add(id);
  }

  /** Queues an operation on the balance; resolves with its answer once committed. */
  submit(target: BalanceTarget, op: UsageOp | null, key: string | undefined, fingerprint: string): Promise<UsageAnswer> {
    const id = `${target.tenant.organisationId}:${target.tenant.isTest}:${target.meter.id}:${target.owner}`;
    if (!this.grouped)
      return this.alone({ id, target, batch: [{ op, key, fingerprint, resolve: () => undefined, reject: () => undefined }] });
    return new Promise<UsageAnswer>((resolve, reject) => {
      let queue = this.queues.get(id);
      if (!queue) {
        queue = { target, pending: [], busy: false, readySince: 0 };
        this.queues.set(id, queue);
      }
      queue.pending.push({ op, key, fingerprint, resolve, reject });
      if (!queue.busy) this.markReady(id, queue);
      this.pump();
    });
  }

  /** One operation in a transaction of its own (the baseline path), queued on the row lock only. */
  private async alone(group: Group): Promise<UsageAnswer> {
    const [[r]] = await this.runWithRetries([group]);
    if (r instanceof Error) throw r;
    return r;
  }

  /** Is a whole batch waiting (MAX_BALANCES balances, or MAX_BATCH operations)? */
  private wholeBatchWaits(): boolean {
    if (this.ready.size >= MAX_BALANCES) return true;
    let ops = 0;
    for (const id of this.ready) if ((ops += (this.queues.get(id) as Queue).pending.length) >= MAX_BATCH) return true;
    return false;
  }

  /** How long the longest-waiting ready balance has waited, in milliseconds (0: none waits). */
  private oldestWait(): number {
    for (const id of this.ready) return performance.now() - (this.queues.get(id) as Queue).readySince;
    return 0;
  }

  /**
   * Starts a transaction when none runs and operations wait, and more (up to MAX_RUNNING) while
   * whole batches wait or operations have waited STALL_MS behind the running ones.
   */
  private pump(): void {
    while (
      this.ready.size > 0 &&
      (this.running === 0 || (this.running < MAX_RUNNING && (this.wholeBatchWaits() || this.oldestWait() >= this.stallMs)))
    ) {
      const groups: Group[] = [];
      let ops = 0;
      for (const id of this.ready) {
        if (groups.length >= MAX_BALANCES || ops >= MAX_BATCH) break;
        const queue = this.queues.get(id) as Queue;
        const batch = queue.pending.splice(0, MAX_BATCH - ops);
        ops += batch.length;
        queue.busy = true;
        this.ready.delete(id);
        groups.push({ id, target: queue.target, batch });
      }
      this.running++;
      DETACHED.runInAsyncScope(
        () =>
          void this.drain(groups).finally(() => {
            this.running--;
            for (const g of groups) {
              const queue = this.queues.get(g.id) as Queue;
              queue.busy = false;
              if (queue.pending.length > 0) this.markReady(g.id, queue);
              else this.queues.delete(g.id);
            }
            this.pump();
          }),
      );
    }
    if (this.ready.size > 0 && this.running < MAX_RUNNING && this.stallTimer === undefined) {
      // Operations wait behind running transactions: look again once the oldest has waited STALL_MS.
      this.stallTimer = setTimeout(
        () => {
          this.stallTimer = undefined;
          this.pump();
        },
        Math.max(1, Math.ceil(this.stallMs - this.oldestWait())),
      );
      this.stallTimer.unref?.();
    }
  }

  private async drain(groups: Group[]): Promise<void> {
    try {
      const results = await this.runWithRetries(groups);
      groups.forEach((g, n) => settle(g.batch, results[n]));
    } catch (e) {
      const ops = groups.flatMap((g) => g.batch.map((p) => ({ ...g, batch: [p] })));
      if (ops.length === 1 || isOutage(e)) {
        // The database is away (or busy): a transaction alone would fail alike, and a COMMIT never
        // answered may have landed, so keyless operations must not be tried again behind it.
        for (const o of ops) o.batch[0].reject(e);
        return;
      }
      // The batch's transaction failed and wrote nothing. One operation's failure must not answer
      // for the others: each is decided again in a transaction of its own, and gets its own answer.
      for (const o of ops) {
        try {
          settle(o.batch, (await this.runWithRetries([o]))[0]);
        } catch (single) {
          o.batch[0].reject(single);
        }
      }
    }
  }

  private async runWithRetries(groups: Group[]): Promise<(UsageAnswer | Error)[][]> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.run(groups);
      } catch (e) {
        if (!(isDomainError(e) && e.code === ErrorCodes.CONFLICT) || attempt >= CONFLICT_RETRIES) throw e;
      }
    }
  }

  /** One transaction: lock every balance, decide each balance's operations in order, write everything, commit. */
  private run(groups: Group[]): Promise<(UsageAnswer | Error)[][]> {
    const now = this.deps.clock.now();
    const items = groups.map(({ target, batch }) => ({
      fresh: this.freshBalance(target, now),
      holdIds: batch.flatMap((p) => (p.op && (p.op.kind === 'commit' || p.op.kind === 'release') ? [p.op.holdId] : [])),
      // A balance is opened only for what takes or gives units: a commit or release settles a hold
      // of an open balance, and the sweep's settling (no operation) one that is open; neither opens
      // again a balance that closed meanwhile (an empty balance no period would ever close).
      create: batch.some((p) => p.op !== null && p.op.kind !== 'commit' && p.op.kind !== 'release'),
    }));
    return this.deps.uow
      .run(async (r) => {
        const locked = await r.usage.lockBalances(items, now);
        // What queued on these balances while the locks were awaited joins the batch (a hot balance
        // that two instances take turns on would otherwise wait a whole turn more).
        this.takeLate(groups, locked);
        // The stored idempotency keys of the batch, one look-up per organisation and mode.
        const tenants = new Map<string, { tenant: Tenant; keys: Set<string> }>();
        for (const { target, batch } of groups)
          for (const p of batch) {
            if (!p.key) continue;
            const t = `${target.tenant.organisationId}:${target.tenant.isTest}`;
            const entry = tenants.get(t) ?? { tenant: target.tenant, keys: new Set<string>() };
            entry.keys.add(p.key);
            tenants.set(t, entry);
          }
        const known = new Map<string, UsageKey>();
        for (const { tenant, keys } of tenants.values())
          for (const k of await r.usage.findKeys(tenant, [...keys])) known.set(knownKey(tenant, k.key), k);
        const ended = await this.endedHolders(r, groups, locked);
        const writes: UsageWrite[] = [];
        const out = groups.map((g, n) => {
          const l = locked[n];
          // Not opened for the sweep or a hold's settling (it closed meanwhile): nothing to settle,
          // nothing written; a hold's commit or release finds its period closed (a replay of one
          // that was made answers as it did).
          return l
            ? this.decideGroup(g, l, known, now, writes, ended.has(n))
            : {
                results: g.batch.map(
                  (p) =>
                    this.replay(g.target, p, known) ??
                    (p.op
                      ? new DomainError(ErrorCodes.HOLD_SETTLED, 'the reservation is no longer held: its period has closed')
                      : settled(g.target)),
                ),
                entries: [],
              };
        });
        if (writes.length) await r.usage.writeMany(writes);
        return out;
      })
      .then((out) => {
        out.forEach(({ entries }, n) => {
          if (entries.length && this.committed) this.committed(groups[n].target, entries);
        });
        return out.map((o) => o.results);
      });
  }

  /**
   * Moves into each group the operations that queued on its balance after the batch was formed, in
   * arrival order, up to MAX_BATCH operations in all: they are decided under the locks just taken,
   * after the batch's own, and answered after the same commit. A commit or release stops the take
   * (its hold was not loaded; it waits for the next batch, and so does everything queued behind it,
   * keeping each balance's order).
   */
  private takeLate(groups: Group[], locked: (LockedBalance | null)[]): void {
    if (!this.grouped) return;
    let ops = groups.reduce((n, g) => n + g.batch.length, 0);
    for (const [i, g] of groups.entries()) {
      // A balance not opened for the sweep takes nothing late: its operations open it in the next batch.
      if (!locked[i]) continue;
      const pending = this.queues.get(g.id)?.pending;
      if (!pending) continue;
      let n = 0;
      while (n < pending.length && ops < MAX_BATCH) {
        const op = pending[n].op;
        if (op && (op.kind === 'commit' || op.kind === 'release')) break;
        n++;
        ops++;
      }
      if (n > 0) g.batch.push(...pending.splice(0, n));
    }
  }

  /**
   * The batch's balances (by index) whose holder is a canceled subscription of their tenant. Its
   * cancel closed and billed its usage; what is recorded or taken after it would open a balance no
   * period closes: counted and never billed. Asked only for balances that no period or cap bounds,
   * of a UUID holder, with an operation that needs the holder alive (`needsLiveHolder`), in the
   * batch's transaction after the locks (a record racing the cancel lands in the closed period or
   * is refused). A holder found to be no subscription is remembered (ids are never reused), so ad
   * hoc licenses' balances ask once; bounded balances (every plan's, the benchmark's) never ask.
   */
  private async endedHolders(r: Repositories, groups: Group[], locked: (LockedBalance | null)[]): Promise<Set<number>> {
    const asked = new Map<string, number[]>();
    for (const [n, l] of locked.entries()) {
      const b = l?.balance;
      // Cheapest first: a consume on a limited balance (every plan's, the benchmark's) asks nothing more.
      if (!b || b.periodEnd !== null || b.cap !== null || !groups[n].batch.some((p) => needsLiveHolder(b, p.op))) continue;
      if (this.notSubscriptions.get(b.owner) || !isUuid(b.owner)) continue;
      asked.set(b.owner, [...(asked.get(b.owner) ?? []), n]);
    }
    const out = new Set<number>();
    for (const [owner, ns] of asked) {
      const s = await r.subscriptions.get(owner);
      if (!s) this.notSubscriptions.set(owner, true);
      for (const n of ns) {
        const b = (locked[n] as LockedBalance).balance;
        if (s && s.organisationId === b.organisationId && s.isTest === b.isTest && s.status === 'CANCELED') out.add(n);
      }
    }
    return out;
  }

  private freshBalance(target: BalanceTarget, now: Date): Balance {
    const period = { start: target.periodStart ?? now, end: target.periodEnd ?? null };
    return freshBalance(this.deps.ids, target.tenant, target.owner, target.meter.id, period, target.cap ?? null, now);
  }

  /** The stored answer of an operation whose idempotency key was used before (another body: 409); undefined when new. */
  private replay(target: BalanceTarget, p: Pending, known: Map<string, UsageKey>): UsageAnswer | Error | undefined {
    if (!p.key) return undefined;
    const first = known.get(knownKey(target.tenant, p.key));
    if (first && first.fingerprint !== p.fingerprint)
      return new DomainError(ErrorCodes.IDEMPOTENCY_KEY_REUSED, 'this idempotency-key was used for a different request');
    return first?.answer;
  }

  /** Decides one balance's operations in arrival order (pure core rule); adds its write to `writes`. */
  private decideGroup(
    { target, batch }: Group,
    locked: LockedBalance,
    known: Map<string, UsageKey>,
    now: Date,
    writes: UsageWrite[],
    ended = false,
  ): { results: (UsageAnswer | Error)[]; entries: LedgerEntry[] } {
    const { tenant, owner, meter } = target;
    const state: BalanceState = {
      balance: locked.balance,
      grants: sortGrants([...locked.grants]),
      holds: new Map(locked.holds.map((h) => [h.id, h])),
    };
    const loadedHolds = new Map(locked.holds.map((h) => [h.id, { ...h }]));
    // A grant's expiry may count units drawn with no ledger entry (credit that covered earlier usage).
    const drawnBefore = locked.grants.map((g) => g.drawn);
    const entries: LedgerEntry[] = [];
    const newKeys: UsageKey[] = [];
    const ledger = (es: ReturnType<typeof expireDue>, key: string | null) =>
      es.forEach((e, i) =>
        entries.push({
          kind: e.kind,
          quantity: e.quantity,
          grantedDelta: e.grantedDelta,
          usedDelta: e.usedDelta,
          reservedDelta: e.reservedDelta,
          holdId: e.holdId,
          grantId: e.grantId,
          id: this.deps.ids.newId(),
          organisationId: tenant.organisationId,
          isTest: tenant.isTest,
          balanceId: state.balance.id,
          owner,
          meterId: meter.id,
          idempotencyKey: i === 0 ? key : null,
          createdAt: now,
        }),
      );
    ledger(expireDue(state, now), null);
    const results: (UsageAnswer | Error)[] = batch.map((p) => {
      const replayed = this.replay(target, p, known);
      if (replayed) return replayed;
      if (!p.op) return settled(target);
      if (ended && needsLiveHolder(state.balance, p.op))
        return new DomainError(ErrorCodes.SUBSCRIPTION_CANCELED, `the subscription ${owner} is canceled: its usage was closed and billed`, [
          { property: 'owner', error: 'a canceled subscription' },
        ]);
      try {
        const d = decide(state, p.op, meter.slug, now);
        ledger(d.entries, p.key ?? null);
        if (p.key) {
          const k: UsageKey = {
            organisationId: tenant.organisationId,
            isTest: tenant.isTest,
            key: p.key,
            fingerprint: p.fingerprint,
            answer: d.answer,
            createdAt: now,
          };
          known.set(knownKey(tenant, p.key), k);
          newKeys.push(k);
        }
        return d.answer;
      } catch (e) {
        if (isDomainError(e)) return e;
        throw e;
      }
    });
    const changedHolds = [...state.holds.values()].filter((h: Hold) => {
      const before = loadedHolds.get(h.id);
      return !before || before.status !== h.status;
    });
    // A balance whose waiting usage is due is written even when nothing else changed: the write reports it.
    if (
      entries.length ||
      newKeys.length ||
      changedHolds.length ||
      reportDue(state.balance, now) ||
      locked.grants.some((g, i) => g.drawn !== drawnBefore[i])
    )
      writes.push({
        balance: state.balance,
        meterSlug: meter.slug,
        meterScale: meter.scale,
        // Every grant loaded (expiry or draws may have changed it) and every one the batch made.
        grants: [...new Set<CreditGrant>([...locked.grants, ...state.grants])],
        holds: changedHolds,
        entries,
        keys: newKeys,
      });
    return { results, entries };
  }
}

/**
 * Whether an operation needs its holder alive: one no period bounds, on a holder that might be a
 * subscription. A record is never bounded by credit, so it always does; a consume or reserve only
 * on a balance without a limit (credit granted on purpose bounds what they take).
 */
const needsLiveHolder = (b: Balance, op: UsageOp | null): boolean =>
  op !== null && (op.kind === 'record' || ((op.kind === 'consume' || op.kind === 'reserve') && !b.limited));

/** An idempotency key of a tenant, as the batch's map of stored keys holds it. */
const knownKey = (tenant: Tenant, key: string) => `${tenant.organisationId}:${tenant.isTest}:${key}`;

/** The answer of the sweep's settling of a balance (no operation): nobody reads it. */
const settled = ({ owner, meter }: BalanceTarget): UsageAnswer => ({
  allowed: true,
  owner,
  meterSlug: meter.slug,
  granted: '',
  used: '',
  reserved: '',
  remaining: null,
  periodEnd: null,
});
