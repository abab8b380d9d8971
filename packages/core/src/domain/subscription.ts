import { ErrorCodes, fail, invalid } from '../errors';
import type { Id, License, Plan, Product, Proration, Subscription, SubscriptionStatus } from '../model';
import { assertPlanSellable, isPerSeat, minimumSeats } from './catalog';
import { SUBSCRIPTION_STATUSES } from './status';
import { DEFAULT_MAX_SEATS } from './limits';
import type { NewSeats } from './new-seats';

export const isRunning = (s: Subscription): boolean => SUBSCRIPTION_STATUSES[s.status].running;

/** Every plan the subscription holds: its first, then the added ones. */
export const heldPlanIds = (s: Subscription): Id[] => [s.planId, ...s.addedPlans.map((a) => a.planId)];

export const holdsPlan = (s: Subscription, planId: Id): boolean => heldPlanIds(s).includes(planId);

/** The line items of every plan the subscription holds. */
export const heldLineItemIds = (s: Subscription): Id[] => [...s.lineItemIds, ...s.addedPlans.flatMap((a) => a.lineItemIds)];

/**
 * The status a reader must see at `now`: a subscription whose cancellation was scheduled is
 * CANCELED from the end of its period on, even before the sweep has written it.
 */
export function effectiveStatus(s: Subscription, now: Date): SubscriptionStatus {
  if (isRunning(s) && s.cancelAtPeriodEnd && now >= s.currentPeriodEnd) return 'CANCELED';
  return s.status;
}

export function assertRunning(s: Subscription, now: Date): void {
  if (effectiveStatus(s, now) === 'CANCELED') fail(ErrorCodes.SUBSCRIPTION_CANCELED, 'the subscription is canceled');
}

/** Licenses of the subscription, ended with it. */
const endLicenses = (licenses: License[], now: Date): License[] =>
  licenses.map((l) => (l.status === 'CANCELED' ? l : { ...l, status: 'CANCELED', cancelAtPeriodEnd: false, endTime: now, updatedAt: now }));

export interface SubscriptionChange {
  subscription: Subscription;
  licenses: License[];
}

export function cancelNow(s: Subscription, licenses: License[], now: Date): SubscriptionChange {
  assertRunning(s, now);
  return {
    subscription: { ...s, status: 'CANCELED', cancelAtPeriodEnd: false, canceledAt: now, updatedAt: now },
    licenses: endLicenses(licenses, now),
  };
}

/** Schedules cancellation; asking again while scheduled changes nothing. */
export function cancelAtPeriodEnd(s: Subscription, licenses: License[], now: Date): SubscriptionChange {
  assertRunning(s, now);
  if (s.cancelAtPeriodEnd) return { subscription: s, licenses };
  return {
    subscription: { ...s, cancelAtPeriodEnd: true, updatedAt: now },
    licenses: licenses.map((l) => (l.status === 'CANCELED' ? l : { ...l, cancelAtPeriodEnd: true, updatedAt: now })),
  };
}

/** The sweep: a scheduled cancellation takes effect once the period has ended. */
export function periodEndReached(s: Subscription, licenses: License[], now: Date): SubscriptionChange {
  if (!isRunning(s)) fail(ErrorCodes.SUBSCRIPTION_CANCELED, 'the subscription is canceled');
  if (!s.cancelAtPeriodEnd || now < s.currentPeriodEnd) {
    fail(ErrorCodes.SUBSCRIPTION_PERIOD_NOT_ENDED, 'no cancellation is due for this subscription');
  }
  const end = s.currentPeriodEnd;
  return {
    subscription: { ...s, status: 'CANCELED', canceledAt: end, updatedAt: now },
    licenses: endLicenses(licenses, end),
  };
}

/** Only while cancellation is scheduled and the period has not passed. */
export function reactivate(s: Subscription, licenses: License[], now: Date): SubscriptionChange {
  if (!isRunning(s) || !s.cancelAtPeriodEnd || now >= s.currentPeriodEnd) {
    fail(
      ErrorCodes.SUBSCRIPTION_NOT_REACTIVATABLE,
      'only a subscription whose cancellation is scheduled and whose period has not passed can be reactivated; create a new subscription',
    );
  }
  return {
    subscription: { ...s, cancelAtPeriodEnd: false, updatedAt: now },
    licenses: licenses.map((l) => (l.status === 'CANCELED' ? l : { ...l, cancelAtPeriodEnd: false, updatedAt: now })),
  };
}

/**
 * Auto-renew on (the catalog API): a subscription that renews already is left as it is (the very
 * object: nothing to write, nothing to tell), a scheduled cancellation is taken back as `reactivate`.
 */
export function enableRenewal(s: Subscription, licenses: License[], now: Date): SubscriptionChange {
  if (effectiveStatus(s, now) !== 'CANCELED' && !s.cancelAtPeriodEnd) return { subscription: s, licenses: [] };
  return reactivate(s, licenses, now);
}

/**
 * A payment for the next period arrived: the period and the licenses move on, and the subscription
 * is ACTIVE. Its licenses take an ACTIVE subscription's license status by the provider sync's rule
 * (`SUBSCRIPTION_STATUSES`' `license`): a trial's become ACTIVE, and those an UNPAID or PAUSED subscription held
 * INACTIVE come back (with their grantees) at once, not only at the provider's next update.
 */
export function renew(s: Subscription, licenses: License[], periodStart: Date, periodEnd: Date, now: Date): SubscriptionChange {
  assertRunning(s, now);
  return {
    subscription: { ...s, status: 'ACTIVE', currentPeriodStart: periodStart, currentPeriodEnd: periodEnd, updatedAt: now },
    licenses: licenses.map((l) =>
      l.status === 'CANCELED' ? l : { ...l, status: SUBSCRIPTION_STATUSES.ACTIVE.license, endTime: periodEnd, updatedAt: now },
    ),
  };
}

export type PlanChange =
  | { kind: 'moved'; subscription: Subscription; licenses: License[]; proration: Proration }
  | { kind: 'replaced'; canceled: Subscription; created: Subscription; canceledLicenses: License[]; createdLicenses: License[] };

export interface ChangePlanInput {
  subscription: Subscription;
  licenses: License[];
  currentPlan: Plan;
  target: Plan;
  targetProduct: Product;
  proration: Proration;
  now: Date;
  newId: () => Id;
  /**
   * Whether a payment provider bills the subscription (`billedByProvider`): one bought through the
   * free checkout, or started without payment, is billed by no one and moves only to a plan that
   * charges nothing.
   */
  billed: boolean;
  /** The request's field naming the target plan, for the errors (v1, v2, v3: `planUuid`). */
  field?: string;
}

/** The body field naming the target plan of a plan change in the generations that ask one (v1, v2, v3). */
export const PLAN_CHANGE_FIELD = 'planUuid';

/**
 * A subscription no payment provider bills (bought through the free checkout, or made by the vendor
 * without payment: v2 `POST /subscriptions`, the catalog's service-only subscriptions) takes only
 * plans that charge nothing, as its plan or beside it: the sweep renews it for nothing, so a paid
 * plan on it would never be charged. The refusal names `field` and says both ways to a paid plan:
 * its checkout, or, for a vendor that bills the customer itself, the subscription canceled and
 * made anew on the paid plan.
 */
export function assertFreeWhenUnbilled(target: Plan, field: string): void {
  if (target.pricingType === 'free') return;
  invalid(
    field,
    `${target.displayName} is a paid plan and no payment provider bills this subscription, so it would never be charged: check out ${target.displayName} instead and cancel this subscription; or, if you bill the customer yourself, cancel this subscription and create it anew on ${target.displayName}`,
  );
}

/**
 * A move asked through the API keeps the subscription's seat count (the quantity the provider
 * bills), so it must fit the target: a paid flat plan is billed once, not once a seat (moved with
 * 10 seats it would be billed ten times), and a per-seat plan at least its minimum seats (moved
 * with fewer it would be billed below it). A move to a free plan not per seat, one seat to a flat
 * plan, or to a per-seat plan whose minimum it meets, fits. (A switch the provider made is followed
 * as it is: the provider's quantity comes with it.)
 */
export function assertSeatsCarry(s: Subscription, target: Plan, field = PLAN_CHANGE_FIELD): void {
  if (!isPerSeat(target) && target.pricingType === 'paid' && s.quantity > 1)
    fail(
      ErrorCodes.VALIDATION_FAILED,
      `the subscription has ${s.quantity} seats and ${target.displayName} is not a per-seat plan: it would be billed ${s.quantity} times; cancel it and check out the new plan`,
      [{ property: field, error: `is not a per-seat plan, and the subscription has ${s.quantity} seats` }],
    );
  if (isPerSeat(target) && s.quantity < minimumSeats(target))
    fail(
      ErrorCodes.SEATS_BELOW_MINIMUM,
      `${target.displayName} needs at least ${minimumSeats(target)} seats and the subscription has ${s.quantity}: add seats first`,
      [{ property: field, error: `needs at least ${minimumSeats(target)} seats` }],
    );
}

/**
 * Not usage-based: the same subscription moves to the target plan (prorated by `proration`).
 * Usage-based: the subscription is canceled and a new one starts on the target plan, with no
 * proration. Licenses follow the subscription either way.
 */
export function changePlan(input: ChangePlanInput): PlanChange {
  const { subscription: s, licenses, currentPlan, target, targetProduct, now } = input;
  const field = input.field ?? PLAN_CHANGE_FIELD;
  assertPlanSellable(target, targetProduct);
  assertRunning(s, now);
  if (holdsPlan(s, target.id)) fail(ErrorCodes.SUBSCRIPTION_ALREADY_ON_PLAN, 'the subscription is already on that plan');
  if (target.productId !== s.productId) fail(ErrorCodes.PLAN_NOT_IN_PRODUCT, "the plan does not belong to the subscription's product");
  // No provider bills it (the free checkout's, or one made without payment): moved to a paid plan
  // it would grant what the plan charges for and never collect it. A paid plan is bought through
  // its checkout.
  if (!input.billed) assertFreeWhenUnbilled(target, field);

  if (!currentPlan.usageBased) {
    // The first plan's seats move; an added plan's stay on it.
    return {
      kind: 'moved',
      subscription: { ...s, planId: target.id, type: target.licenseType, updatedAt: now },
      licenses: licenses.map((l) =>
        l.status === 'CANCELED' || l.planId !== s.planId ? l : { ...l, planId: target.id, type: target.licenseType, updatedAt: now },
      ),
      proration: input.proration,
    };
  }
  if (s.addedPlans.length)
    fail(ErrorCodes.VALIDATION_FAILED, 'a usage-based plan change starts a new subscription: remove the added plans first', [
      { property: field, error: 'the subscription holds other plans beside its usage-based one' },
    ]);
  const canceled = cancelNow(s, licenses, now);
  const created: Subscription = {
    ...s,
    id: input.newId(),
    planId: target.id,
    type: target.licenseType,
    status: 'ACTIVE',
    paymentSubscriptionId: null,
    cancelAtPeriodEnd: false,
    canceledAt: null,
    replacesId: s.id,
    currentPeriodStart: now,
    currentPeriodEnd: s.currentPeriodEnd > now ? s.currentPeriodEnd : now,
    createdAt: now,
    updatedAt: now,
  };
  const createdLicenses = licenses
    .filter((l) => l.status !== 'CANCELED')
    .map((l) => ({
      ...l,
      id: input.newId(),
      subscriptionId: created.id,
      planId: target.id,
      type: target.licenseType,
      startTime: now,
      endTime: created.currentPeriodEnd,
      cancelAtPeriodEnd: false,
      createdAt: now,
      updatedAt: now,
    }));
  return { kind: 'replaced', canceled: canceled.subscription, created, canceledLicenses: canceled.licenses, createdLicenses };
}

/** What a payment provider reports about a subscription (re-fetched, never taken from a webhook body). */
export interface ProviderSnapshot {
  status: SubscriptionStatus;
  currentPeriodStart: Date;
  currentPeriodEnd: Date;
  cancelAtPeriodEnd: boolean;
  canceledAt: Date | null;
  quantity: number;
  /**
   * The provider's items, one per plan it bills, in its order (Stripe's subscription items); absent
   * for providers that bill one plan. `quantity` above is the first item's.
   */
  items?: ProviderItem[];
  /** False when the provider said there are more items than `items` holds: none is then taken as removed. */
  itemsComplete?: boolean;
}

/** One item of a provider's subscription: its id, its price's id at the provider and its quantity. */
export interface ProviderItem {
  id: string;
  priceId: string | null;
  quantity: number;
  /**
   * The plan Tollgate named when it made or moved the item (Stripe's `metadata.tollgatePlan`);
   * absent for items Tollgate did not write (a checkout's, one made in the provider's dashboard).
   */
  planId?: string | null;
  /**
   * What the item's price bills (Stripe's `price.unit_amount`, `currency`, `recurring`): per seat
   * per interval in minor units, the currency's short name (any case), the interval and how many of
   * them. Absent when not known: a name is then never trusted alone (`billsAsPlan`).
   */
  unitAmount?: number | null;
  currency?: string | null;
  interval?: string | null;
  intervalCount?: number | null;
}

/**
 * Brings our copy in line with the provider's truth: status, period, scheduled cancellation and
 * seat count (adding unassigned seats, or removing unassigned ones newest first; assigned seats are
 * never removed, so the license count may stay above a lowered quantity until they are unassigned).
 */
export function syncWithProvider(
  s: Subscription,
  licenses: License[],
  snapshot: ProviderSnapshot,
  now: Date,
  newSeats: (s: Subscription, count: number) => NewSeats,
  maxSeats = DEFAULT_MAX_SEATS,
): { subscription: Subscription; saved: License[]; added: NewSeats | null; removed: License[] } {
  const subscription: Subscription = {
    ...s,
    status: snapshot.status,
    currentPeriodStart: snapshot.currentPeriodStart,
    currentPeriodEnd: snapshot.currentPeriodEnd,
    cancelAtPeriodEnd: snapshot.status === 'CANCELED' ? false : snapshot.cancelAtPeriodEnd,
    canceledAt: snapshot.status === 'CANCELED' ? (snapshot.canceledAt ?? now) : null,
    quantity: snapshot.quantity,
    updatedAt: now,
  };
  const status = SUBSCRIPTION_STATUSES[snapshot.status].license;
  // The provider's quantity is the first plan's seats (a plan bought beside it keeps its own).
  const live = licenses.filter((l) => l.status !== 'CANCELED' && l.planId === s.planId);
  let removed: License[] = [];
  let added: NewSeats | null = null;
  if (snapshot.status !== 'CANCELED') {
    // Seats beyond the bound are not made (the provider's quantity is still recorded).
    const wanted = Math.min(snapshot.quantity, maxSeats);
    if (wanted > live.length) {
      added = newSeats(subscription, wanted - live.length);
    } else if (snapshot.quantity < live.length) {
      removed = live
        .filter((l) => l.granteeId === null)
        .sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime())
        .slice(0, live.length - snapshot.quantity);
    }
  }
  const removedIds = new Set(removed.map((l) => l.id));
  const saved = licenses
    .filter((l) => !removedIds.has(l.id) && l.status !== 'CANCELED')
    .map((l) => ({
      ...l,
      status,
      cancelAtPeriodEnd: subscription.cancelAtPeriodEnd,
      endTime: status === 'CANCELED' ? subscription.canceledAt : snapshot.currentPeriodEnd,
      updatedAt: now,
    }));
  return { subscription, saved, added, removed };
}
