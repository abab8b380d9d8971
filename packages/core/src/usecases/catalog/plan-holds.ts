import { ErrorCodes, fail, invalid } from '../../errors';
import { effectiveStatus } from '../../domain/subscription';
import { pricedIn } from '../../domain/catalog';
import type { Id, Plan, Subscription } from '../../model';
import type { Repositories } from '../../ports';
import { subscriptionProviders, type CoreDeps } from '../deps';
import { scanRecurringBilling } from './plan-pricing';
import { loadCurrencies } from '../catalog-queries';

/**
 * How long an open checkout session holds its plan's interval: a provider prices the session on
 * the plan's interval when it is created (Stripe's `price_data.recurring`), and Stripe's sessions
 * can be paid for 24 hours. An older open session is abandoned as far as the interval goes.
 */
export const OPEN_CHECKOUT_HOLD_MS = 24 * 60 * 60 * 1000;

/** What keeps a plan on its billing interval. */
export interface PlanHolds {
  /** Every subscription of the plan (added plans included), as `listByPlan` reads them. */
  subscriptions: Subscription[];
  /** Why the interval may not change, if it may not. */
  holder: 'running subscriptions' | 'open checkouts' | undefined;
}

/**
 * The providers whose open checkouts hold a plan's interval: those that bill on periods of their
 * own, priced when the session was made (Stripe). The sandbox and the free checkout bill by
 * Tollgate's periods, which follow the plan, so their sessions hold nothing (a developer's test
 * checkout does not block the plan's edit for a day).
 */
export function intervalPricingProviders(deps: Pick<CoreDeps, 'payments' | 'freeCheckout'>): string[] {
  return subscriptionProviders(deps)
    .filter((p) => !p.renewedBySweep)
    .map((p) => p.name);
}

/** Nothing holds a plan not yet saved. */
export const NO_HOLDS: PlanHolds = { subscriptions: [], holder: undefined };

/**
 * What holds the plan's interval: a running subscription (not effectively canceled, added plans
 * included) or an open checkout session of the last `OPEN_CHECKOUT_HOLD_MS` (its first plan or a
 * cart's other plan). Open sessions are read before subscriptions: a checkout completing meanwhile
 * (READ COMMITTED, no lock on the plan) is then seen either way, its session still open or its
 * subscription made, so the interval cannot change under it.
 */
export async function planHolds(r: Repositories, planId: Id, now: Date, providers: string[]): Promise<PlanHolds> {
  const openCheckouts = await r.checkoutSessions.hasOpenForPlan(planId, new Date(now.getTime() - OPEN_CHECKOUT_HOLD_MS), providers);
  const subscriptions = await r.subscriptions.listByPlan(planId);
  const running = subscriptions.some((x) => effectiveStatus(x, now) !== 'CANCELED');
  return { subscriptions, holder: running ? 'running subscriptions' : openCheckouts ? 'open checkouts' : undefined };
}

/**
 * Refuses (409 `CONFLICT`, naming `property` when given) a new interval for a plan something holds:
 * running subscriptions' periods (and their licenses') are of the old interval and an open checkout
 * was priced on it; a new interval is a new plan, as Stripe's prices' recurring terms never change.
 */
export function refuseIntervalChange(holds: PlanHolds, was: Pick<Plan, 'interval' | 'length'>, property?: string): void {
  if (!holds.holder) return;
  const by =
    holds.holder === 'open checkouts' ? 'open checkouts (started in the last 24 hours, priced at that interval)' : 'running subscriptions';
  const error = `the plan is billed every ${was.length} ${was.interval}(s) and has ${by}: make a new plan for another interval`;
  if (property === undefined) fail(ErrorCodes.CONFLICT, error);
  else fail(ErrorCodes.CONFLICT, `${property}: ${error}`, [{ property, error }]);
}

/**
 * The plan after a write of one of its pricing parts (a line item's update, archive or delete, a
 * price's archive or delete), billed as `POST /api/plans/save` bills it: by its active recurring
 * prices' interval. `field` names the request field that can change it (a line item's
 * `intervalType`); an archive or delete has none and only removes prices, so it cannot mix
 * intervals (on a plan saved mixed before they were refused, it keeps the plan's interval until
 * the prices agree).
 * - A write that leaves the recurring prices mixed is a 400 naming `field`.
 * - A write that changes the interval the prices give is refused while something holds the plan
 *   (`refuseIntervalChange`); otherwise the plan takes it.
 * - A plan whose interval already disagreed with its prices (saved before plans took their
 *   prices' interval) keeps it when the write does not change what the prices give and something
 *   holds it; with nothing holding it the plan takes its prices' interval, as a save would.
 */
export function rebilledAfterPartWrite(before: Plan, after: Plan, holds: PlanHolds, field?: string): Plan {
  const was = scanRecurringBilling(before.lineItems);
  const now = scanRecurringBilling(after.lineItems);
  if (now && 'mixed' in now) {
    if (field === undefined) return after;
    return invalid(
      field,
      was && 'mixed' in was
        ? `the plan's recurring prices already mix billing intervals (${was.mixed.property}: ${was.mixed.error}): save it with one interval through POST /api/plans/save`
        : `would mix billing intervals on the plan (${now.mixed.property}: ${now.mixed.error})`,
    );
  }
  if (!now || (now.interval === before.interval && now.length === before.length)) return after;
  const changed = !was || 'mixed' in was || was.interval !== now.interval || was.length !== now.length;
  if (holds.holder) {
    if (changed) refuseIntervalChange(holds, before, field);
    return after;
  }
  return { ...after, interval: now.interval, length: now.length };
}

/**
 * Refuses (409 `CONFLICT`, naming `property` when given) a write of a paid plan's pricing after
 * which a running subscription of it (added plans included) is billed in a currency the plan no
 * longer has a price in: renewals, proration and plan changes read the plan's current amount in the
 * subscription's currency, which would be 0. Amounts may change in place (as Stripe's price sync
 * follows them); only the removal of a currency a running subscription is billed in is refused. A
 * plan made free, or one that already had no price in it, is not a removal. `subscriptions` is what
 * `listByPlan` reads (every subscription of the plan; canceled ones hold nothing).
 */
export async function refuseCurrencyRemoval(
  r: Repositories,
  before: Plan,
  after: Plan,
  subscriptions: readonly Subscription[],
  now: Date,
  property?: (currency: string) => string,
): Promise<void> {
  if (before.pricingType !== 'paid' || after.pricingType !== 'paid') return;
  const billed = [
    ...new Set(subscriptions.filter((s) => effectiveStatus(s, now) !== 'CANCELED').map((s) => s.currency.toUpperCase())),
  ].sort();
  if (billed.length === 0) return;
  const currencies = await loadCurrencies(r);
  for (const currency of billed) {
    if (!pricedIn(before, currency, currencies) || pricedIn(after, currency, currencies)) continue;
    const error = `the plan ${before.displayName} (${before.id}) has running subscriptions billed in ${currency}: it must keep a price in ${currency} (amounts may change; a currency may go once those subscriptions end or move)`;
    const at = property?.(currency);
    if (at === undefined) fail(ErrorCodes.CONFLICT, error);
    else fail(ErrorCodes.CONFLICT, `${at}: ${error}`, [{ property: at, error }]);
  }
}
