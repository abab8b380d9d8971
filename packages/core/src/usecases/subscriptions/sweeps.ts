import { periodEndReached, renew } from '../../domain/subscription';
import { pricedIn, unitAmount } from '../../domain/catalog';
import { addInterval } from '../../domain/time';
import { isOutage } from '../../errors';
import { billsTestModeOnly, limitsOf, providerOf, subscriptionProviders, type CoreDeps } from '../deps';
import { loadCurrencies } from '../catalog-queries';
import { billingProviderOf, endSubscriptionUsage, loadPlan, saveOutcome } from './shared';
import type { Id, License } from '../../model';
import type { Repositories } from '../../ports';
import type { UsageService } from '../usage';
import { closeSubscriptionPeriod, usageInvoiceLines } from '../usage/periods';

/**
 * How long a subscription whose renewal failed (not for an outage), or an ended evaluation license
 * that could not be ended, is passed over by this process's sweeps.
 */
export const RENEWAL_RETRY_MS = 10 * 60_000;
/** Subscriptions (or licenses) one process passes over at most, each sweep (the oldest failure is forgotten first). */
const PASSED_OVER_MAX = 1_000;

/**
 * What one sweep passes over, and until when: one broken row (bad data, a bug) must not stop every
 * row behind it, nor be tried again on every pass. Per process, forgotten on restart.
 */
class PassedOver {
  private readonly until = new Map<string, number>();

  /** `field` names the id in the log line (`subscription`, `license`); `message` says what failed. */
  constructor(
    private readonly field: string,
    private readonly message: string,
  ) {}

  /**
   * A failure of `id`'s own is passed over (one log line); an outage is rethrown: it stops the
   * sweep, and the next pass tries again.
   */
  failed(id: string, now: Date, e: unknown, logger: CoreDeps['logger']): void {
    if (isOutage(e)) throw e;
    this.add(id, now);
    logger?.error(this.message, {
      [this.field]: id,
      retryAfterMinutes: RENEWAL_RETRY_MS / 60_000,
      error: e instanceof Error ? e.message : String(e),
    });
  }

  /** Forgets what is due again at `now`; how many are still passed over. */
  prune(now: Date): number {
    for (const [id, until] of this.until) if (until <= now.getTime()) this.until.delete(id);
    return this.until.size;
  }

  has(id: string): boolean {
    return this.until.has(id);
  }

  /** Passes `id` over for `RENEWAL_RETRY_MS` from `now` (the oldest is forgotten past `PASSED_OVER_MAX`). */
  private add(id: string, now: Date): void {
    this.until.set(id, now.getTime() + RENEWAL_RETRY_MS);
    if (this.until.size > PASSED_OVER_MAX) this.until.delete(this.until.keys().next().value as string);
  }
}
/** Ended evaluation licenses one transaction of `Sweeps.endedEvaluations` writes at most. */
const EVALUATION_BATCH = 100;

/** Work the clock brings: scheduled cancellations that fall due, and renewals our providers leave to us. */
export class Sweeps {
  /** Subscriptions whose renewal failed for something else than an outage. */
  private readonly passedOver = new PassedOver('subscription', 'subscription renewal failed; passed over for now, the others go on');
  /** Subscriptions whose scheduled cancellation failed for something else than an outage. */
  private readonly cancellationsPassedOver = new PassedOver(
    'subscription',
    'scheduled cancellation failed; passed over for now, the others go on',
  );
  /** Ended evaluation licenses that could not be ended for something else than an outage. */
  private readonly evaluationsPassedOver = new PassedOver(
    'license',
    'ending an evaluation license failed; passed over for now, the others go on',
  );

  constructor(
    private readonly deps: Pick<
      CoreDeps,
      'uow' | 'clock' | 'payments' | 'testPayments' | 'otherPayments' | 'freeCheckout' | 'ids' | 'limits' | 'logger'
    >,
    private readonly usage?: Pick<UsageService, 'sweep' | 'maintainLedger'>,
  ) {}

  /**
   * The usage ledger's monthly partitions: months ahead made, months past the retention
   * (`usageLedgerRetentionMonths`; 0 keeps all) dropped unless they hold an open period's rows.
   */
  async usageLedger(): Promise<{ created: string[]; dropped: string[] }> {
    const months = limitsOf(this.deps).usageLedgerRetentionMonths;
    return this.usage ? this.usage.maintainLedger(months > 0 ? months : null) : { created: [], dropped: [] };
  }

  /**
   * Usage holds whose time ran out return to their balances, usage that waited its window is
   * reported (`usage.recorded`), expired idempotency keys go. Returns how many balances.
   */
  async usageHolds(limit = 500): Promise<number> {
    return this.usage ? this.usage.sweep(limit) : 0;
  }

  /**
   * For providers that do not bill renewals themselves (sandbox, free): a running subscription
   * whose period ended moves on by whole periods, with its licenses. Returns how many. A provider
   * that bills test mode only (the sandbox beside a live Stripe key) renews only test-mode
   * subscriptions: a live-mode one (made before Stripe was configured) is not renewed, as before
   * test mode went to the sandbox, so unpaid live access ends with its period.
   */
  async renewals(limit = 100): Promise<number> {
    const now = this.deps.clock.now();
    const renewers = subscriptionProviders(this.deps).filter((p) => p.renewedBySweep);
    const providers = renewers.map((p) => p.name);
    if (providers.length === 0) return 0;
    // Asked of the database, so live-mode ones never fill a pass (they keep their old period ends, first in line).
    const testModeOnly = renewers.filter((p) => billsTestModeOnly(this.deps, p)).map((p) => p.name);
    const listed = limit + this.passedOver.prune(now);
    const due = (await this.deps.uow.run((r) => r.subscriptions.listDueForRenewal(now, providers, listed, testModeOnly)))
      .filter((id) => !this.passedOver.has(id))
      .slice(0, limit);
    let done = 0;
    for (const id of due) {
      try {
        if (await this.renewOne(id, now)) done++;
      } catch (e) {
        this.passedOver.failed(id, now, e, this.deps.logger);
      }
    }
    return done;
  }

  /** Renews one subscription whose period ended (under its row lock); false when there was nothing to do. */
  private renewOne(id: string, now: Date): Promise<boolean> {
    return this.deps.uow.run(async (r) => {
      const s = await r.subscriptions.getForUpdate(id);
      if (!s || s.status === 'CANCELED' || s.cancelAtPeriodEnd || now < s.currentPeriodEnd) return false;
      const renewer = providerOf(this.deps, s);
      if (!s.isTest && renewer && billsTestModeOnly(this.deps, renewer)) return false;
      const plan = await loadPlan(r, s.planId);
      const currencies = await loadCurrencies(r);
      const addedPlans = [];
      for (const a of s.addedPlans) addedPlans.push({ plan: await loadPlan(r, a.planId), quantity: a.quantity });
      // A paid plan with no price in the subscription's currency would be charged 0: refused (the
      // sweep logs it and passes the subscription over for a while) rather than renewed for nothing.
      // Catalog writes refuse to remove such a currency; this guards data that lost it anyway.
      // The free checkout charges nothing: a plan made paid under its subscription renews as before.
      const charges = renewer !== this.deps.freeCheckout;
      const unpriced = charges ? [plan, ...addedPlans.map((a) => a.plan)].find((p) => !pricedIn(p, s.currency, currencies)) : undefined;
      if (unpriced)
        throw new Error(
          `the plan ${unpriced.displayName} (${unpriced.id}) has no price in ${s.currency}: not renewed rather than charged 0`,
        );
      let start = s.currentPeriodEnd;
      let end = addInterval(start, plan.interval, plan.length);
      while (end <= now) {
        start = end;
        end = addInterval(start, plan.interval, plan.length);
      }
      const change = renew(s, await r.licenses.listBySubscription(s.id), start, end, now);
      await r.subscriptions.save(change.subscription);
      await r.licenses.saveMany(change.licenses);
      // The ended period's usage becomes final and billed; the next starts from the allowance
      // plus what rolls over. Under the subscription's lock, and once per period by its key.
      const usage = await closeSubscriptionPeriod(r, this.deps.ids, {
        subscription: s,
        plan,
        periodEnd: s.currentPeriodEnd,
        next: { start, end, plan, subscription: change.subscription },
        now,
      });
      // Local bookkeeping of the sandbox (its renewal invoice); no network call under the lock.
      const provider = renewer;
      // Every plan the subscription holds is billed for the new period.
      const added = addedPlans.map((a) => ({ ...a, unitAmount: unitAmount(a.plan, s.currency, currencies) }));
      const outcome = provider?.renewedBySweep?.(
        change.subscription,
        plan,
        unitAmount(plan, s.currency, currencies),
        usageInvoiceLines(usage),
        added,
        (await r.customers.get(s.customerId))?.value,
      );
      if (outcome) await saveOutcome(r, outcome);
      return true;
    });
  }

  /**
   * Ad hoc evaluation licenses (`EVALUATION`, no subscription) whose end has come are written as
   * `CANCELED`, keeping their `endTime`: lists, `status` filters and counts of every generation stop
   * showing them as evaluations, and each one's `license.cancelled` webhook and change-feed notice
   * are written by its transaction (the outbox and the license trigger follow the write). The check
   * ignored them already (their end passed). A trial is a subscription's (`TRIALING` seats): never
   * touched here. At most `limit` a pass, `EVALUATION_BATCH` a transaction; each license is locked
   * and checked again before it is written, so two instances sweeping at once end it once (the
   * second finds it `CANCELED` and writes nothing). A license that cannot be ended (not for an
   * outage) is logged and passed over by this process for `RENEWAL_RETRY_MS`, as renewals do: it
   * would otherwise stay first in line (the earliest end) and be tried on every pass, and enough of
   * them would fill every pass. Returns how many it ended.
   */
  async endedEvaluations(limit = 500): Promise<number> {
    const now = this.deps.clock.now();
    const listed = limit + this.evaluationsPassedOver.prune(now);
    const due = (await this.deps.uow.run((r) => r.licenses.listEndedEvaluations(now, listed)))
      .filter((id) => !this.evaluationsPassedOver.has(id))
      .slice(0, limit);
    let done = 0;
    for (let at = 0; at < due.length; at += EVALUATION_BATCH) {
      const batch = due.slice(at, at + EVALUATION_BATCH);
      try {
        done += await this.deps.uow.run((r) => endEvaluations(r, batch, now));
      } catch (e) {
        if (isOutage(e)) throw e;
        // Something of one license's own (bad data, a bug): the others of its batch end one by one.
        for (const id of batch) {
          try {
            done += await this.deps.uow.run((r) => endEvaluations(r, [id], now));
          } catch (one) {
            this.evaluationsPassedOver.failed(id, now, one, this.deps.logger);
          }
        }
      }
    }
    return done;
  }

  /** Cancels subscriptions whose scheduled cancellation is due. Returns how many. */
  async cancellations(limit = 100): Promise<number> {
    const now = this.deps.clock.now();
    const listed = limit + this.cancellationsPassedOver.prune(now);
    const due = (await this.deps.uow.run((r) => r.subscriptions.listDueForCancellation(now, listed)))
      .filter((id) => !this.cancellationsPassedOver.has(id))
      .slice(0, limit);
    let done = 0;
    for (const id of due) {
      try {
        if (await this.cancelOne(id, now)) done++;
      } catch (e) {
        this.cancellationsPassedOver.failed(id, now, e, this.deps.logger);
      }
    }
    return done;
  }

  /** Ends one subscription whose scheduled cancellation is due (under its row lock); false when there was nothing to do. */
  private cancelOne(id: string, now: Date): Promise<boolean> {
    return this.deps.uow.run(async (r) => {
      const s = await r.subscriptions.getForUpdate(id);
      if (!s || !s.cancelAtPeriodEnd || s.status === 'CANCELED' || now < s.currentPeriodEnd) return false;
      const change = periodEndReached(s, await r.licenses.listBySubscription(s.id), now);
      await r.subscriptions.save(change.subscription);
      await r.licenses.saveMany(change.licenses);
      // The last period's usage is final and billed (local bookkeeping of the sandbox, no network call under the lock).
      await endSubscriptionUsage(r, this.deps.ids, billingProviderOf(this.deps, s), {
        // As the period ran (a trial's usage is not billed), not as its end leaves it (canceled).
        subscription: s,
        plan: await loadPlan(r, s.planId),
        periodEnd: s.currentPeriodEnd,
        now,
      });
      return true;
    });
  }
}

/** Whether the license is an ad hoc evaluation whose end has come (what `endedEvaluations` ends). */
const evaluationEnded = (l: License, now: Date): boolean =>
  l.status === 'EVALUATION' && l.subscriptionId === null && l.endTime !== null && l.endTime <= now;

/** Ends those of the licenses that are still ended evaluations, under their row locks (id order); how many. */
async function endEvaluations(r: Repositories, ids: Id[], now: Date): Promise<number> {
  const ended = (await r.licenses.getManyForUpdate(ids)).filter((l) => evaluationEnded(l, now));
  if (ended.length === 0) return 0;
  await r.licenses.saveMany(ended.map((l) => ({ ...l, status: 'CANCELED', cancelAtPeriodEnd: false, updatedAt: now })));
  return ended.length;
}
