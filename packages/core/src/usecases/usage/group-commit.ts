import { AsyncResource } from 'node:async_hooks';
import { DomainError, ErrorCodes, isDomainError } from '../../errors';
import { decide, expireDue, sortGrants, type BalanceState, type UsageOp } from '../../domain/usage';
import type { Balance, CreditGrant, Hold, LedgerEntry, UsageMeter, Tenant, UsageAnswer, UsageKey } from '../../model';
import type { Clock, IdGenerator, UnitOfWork } from '../../ports';

/** Most operations one transaction decides (a longer queue is written in several). */
export const MAX_BATCH = 500;
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

const unreachable = (e: unknown) => isDomainError(e) && (e.code === ErrorCodes.DATABASE_UNAVAILABLE || e.code === ErrorCodes.BUSY);

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
 * Group commit (DESIGN section 14): operations on one balance queue in this instance in arrival
 * order; whatever queued while a transaction was running is decided together by the next one, under
 * the balance's row lock, and each caller is answered only after that transaction commits. One hot
 * balance thus costs one transaction per batch, not one per operation, and instances still
 * serialise on the row lock, so no decision ever sees stale counters.
 */
export class GroupCommit {
  private readonly queues = new Map<string, Pending[]>();

  constructor(
    private readonly deps: { uow: UnitOfWork; clock: Clock; ids: IdGenerator },
    /** False: no queue, every operation its own transaction (the one-transaction-per-operation baseline). */
    private readonly grouped = true,
    /** Told of each committed write's ledger entries (after the commit; never awaited by the callers). */
    private readonly committed?: (target: BalanceTarget, entries: LedgerEntry[]) => void,
  ) {}

  /** Queues an operation on the balance; resolves with its answer once committed. */
  submit(target: BalanceTarget, op: UsageOp | null, key: string | undefined, fingerprint: string): Promise<UsageAnswer> {
    if (!this.grouped) return this.alone(target, { op, key, fingerprint, resolve: () => undefined, reject: () => undefined });
    const id = `${target.tenant.organisationId}:${target.tenant.isTest}:${target.meter.id}:${target.owner}`;
    return new Promise<UsageAnswer>((resolve, reject) => {
      const queue = this.queues.get(id);
      const pending: Pending = { op, key, fingerprint, resolve, reject };
      if (queue) {
        queue.push(pending);
        return;
      }
      const fresh = [pending];
      this.queues.set(id, fresh);
      DETACHED.runInAsyncScope(() => void this.drain(id, target, fresh));
    });
  }

  /** One operation in a transaction of its own (the baseline path), queued on the row lock only. */
  private async alone(target: BalanceTarget, p: Pending): Promise<UsageAnswer> {
    const [r] = await this.runWithRetries(target, [p]);
    if (r instanceof Error) throw r;
    return r;
  }

  private async drain(id: string, target: BalanceTarget, queue: Pending[]): Promise<void> {
    while (queue.length > 0) {
      const batch = queue.splice(0, MAX_BATCH);
      try {
        settle(batch, await this.runWithRetries(target, batch));
      } catch (e) {
        if (batch.length === 1 || unreachable(e)) {
          // The database is away (or busy): a transaction alone would fail alike, and a COMMIT never
          // answered may have landed, so keyless operations must not be tried again behind it.
          for (const p of batch) p.reject(e);
          continue;
        }
        // The batch's transaction failed and wrote nothing. One operation's failure must not answer
        // for the others: each is decided again in a transaction of its own, and gets its own answer.
        for (const p of batch) {
          try {
            settle([p], await this.runWithRetries(target, [p]));
          } catch (single) {
            p.reject(single);
          }
        }
      }
    }
    this.queues.delete(id);
  }

  private async runWithRetries(target: BalanceTarget, batch: Pending[]): Promise<(UsageAnswer | Error)[]> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.run(target, batch);
      } catch (e) {
        if (!(isDomainError(e) && e.code === ErrorCodes.CONFLICT) || attempt >= CONFLICT_RETRIES) throw e;
      }
    }
  }

  /** One transaction: lock, decide each operation in order, write everything, commit. */
  private run(target: BalanceTarget, batch: Pending[]): Promise<(UsageAnswer | Error)[]> {
    const { tenant, owner, meter } = target;
    const now = this.deps.clock.now();
    const fresh: Balance = {
      id: this.deps.ids.newId(),
      organisationId: tenant.organisationId,
      isTest: tenant.isTest,
      owner,
      meterId: meter.id,
      periodStart: target.periodStart ?? now,
      periodEnd: target.periodEnd ?? null,
      granted: 0n,
      used: 0n,
      reserved: 0n,
      cap: target.cap ?? null,
      limited: false,
      closedAt: null,
      createdAt: now,
      updatedAt: now,
    };
    const holdIds = batch.flatMap((p) => (p.op && (p.op.kind === 'commit' || p.op.kind === 'release') ? [p.op.holdId] : []));
    return this.deps.uow
      .run(async (r) => {
        const locked = await r.usage.lockBalance(fresh, holdIds, now);
        const state: BalanceState = {
          balance: locked.balance,
          grants: sortGrants([...locked.grants]),
          holds: new Map(locked.holds.map((h) => [h.id, h])),
        };
        const touchedGrants = new Set<CreditGrant>(locked.grants);
        const loadedHolds = new Map(locked.holds.map((h) => [h.id, { ...h }]));
        const keys = [...new Set(batch.flatMap((p) => (p.key ? [p.key] : [])))];
        const known = new Map((keys.length ? await r.usage.findKeys(tenant, keys) : []).map((k) => [k.key, k]));
        const entries: LedgerEntry[] = [];
        const newKeys: UsageKey[] = [];
        const ledger = (es: ReturnType<typeof expireDue>, key: string | null) =>
          es.forEach((e, i) =>
            entries.push({
              ...e,
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
          if (p.key) {
            const first = known.get(p.key);
            if (first && first.fingerprint !== p.fingerprint)
              return new DomainError(ErrorCodes.IDEMPOTENCY_KEY_REUSED, 'this idempotency-key was used for a different request');
            if (first) return first.answer;
          }
          if (!p.op)
            return { allowed: true, owner, meterSlug: meter.slug, granted: '', used: '', reserved: '', remaining: null, periodEnd: null };
          try {
            const d = decide(state, p.op, meter.slug, now);
            if (p.op.kind === 'grant') touchedGrants.add(p.op.grant);
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
              known.set(p.key, k);
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
        if (entries.length || newKeys.length || changedHolds.length)
          await r.usage.write({
            balance: state.balance,
            meterSlug: meter.slug,
            grants: [...touchedGrants],
            holds: changedHolds,
            entries,
            keys: newKeys,
          });
        return { results, entries };
      })
      .then(({ results, entries }) => {
        if (entries.length && this.committed) this.committed(target, entries);
        return results;
      });
  }
}
