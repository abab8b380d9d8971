import { ErrorCodes, fail } from '../errors';
import type { Id, License, Plan, Subscription } from '../model';
import { isPerSeat, minimumSeats } from './catalog';
import { effectiveStatus } from './subscription';

const isLive = (l: License) => l.status !== 'CANCELED';
export const unassignedSeats = (licenses: License[]): License[] => licenses.filter((l) => isLive(l) && l.granteeId === null);

function assertSeatChange(s: Subscription, plan: Plan, count: number, now: Date): void {
  if (!Number.isInteger(count) || count < 1) fail(ErrorCodes.SEATS_INVALID_COUNT, 'the seat count must be a whole number of at least 1');
  if (!isPerSeat(plan)) fail(ErrorCodes.SUBSCRIPTION_NOT_PER_SEAT, 'seats can change only on a per-seat plan');
  if (effectiveStatus(s, now) === 'CANCELED') fail(ErrorCodes.SUBSCRIPTION_CANCELED, 'the subscription is canceled');
}

/** A new, unassigned seat of the subscription. */
export function seatLicense(s: Subscription, plan: Plan, purchaser: string, id: Id, now: Date): License {
  return {
    id,
    organisationId: s.organisationId,
    isTest: s.isTest,
    productId: s.productId,
    planId: s.planId,
    subscriptionId: s.id,
    granteeId: null,
    purchaser,
    email: s.email,
    name: null,
    paymentService: s.paymentProvider,
    type: plan.licenseType,
    status: s.status === 'TRIALING' ? 'TRIALING' : 'ACTIVE',
    cancelAtPeriodEnd: s.cancelAtPeriodEnd,
    startTime: now,
    endTime: s.currentPeriodEnd,
    metadata: {},
    createdAt: now,
    updatedAt: now,
  };
}

export interface SeatsAdded {
  subscription: Subscription;
  created: License[];
}

/** Raises the quantity by `count` and creates that many unassigned licenses. */
export function addSeats(
  s: Subscription,
  plan: Plan,
  purchaser: string,
  count: number,
  now: Date,
  newId: () => Id,
): SeatsAdded {
  assertSeatChange(s, plan, count, now);
  const created = Array.from({ length: count }, () => seatLicense(s, plan, purchaser, newId(), now));
  return { subscription: { ...s, quantity: s.quantity + count, updatedAt: now }, created };
}

export interface SeatsRemoved {
  subscription: Subscription;
  removed: License[];
}

/**
 * Lowers the quantity by `count`, removing only unassigned licenses (newest first). Refused, with
 * nothing changed, beyond the unassigned seats or below the plan's minimum.
 */
export function removeSeats(s: Subscription, plan: Plan, licenses: License[], count: number, now: Date): SeatsRemoved {
  assertSeatChange(s, plan, count, now);
  const free = unassignedSeats(licenses);
  if (count > free.length) {
    fail(ErrorCodes.SEATS_EXCEED_UNASSIGNED, `only ${free.length} unassigned seat(s) can be removed; unassign licenses first`);
  }
  const min = minimumSeats(plan);
  if (s.quantity - count < min) fail(ErrorCodes.SEATS_BELOW_MINIMUM, `the plan needs at least ${min} seat(s)`);
  const removed = [...free]
    .sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime() || (a.id < b.id ? 1 : -1))
    .slice(0, count);
  return { subscription: { ...s, quantity: s.quantity - count, updatedAt: now }, removed };
}

/** Checks a seat change at request time, so the caller gets 400 before any event is queued. */
export function validateSeatChange(
  s: Subscription,
  plan: Plan,
  licenses: License[],
  change: { increment: number } | { decrement: number },
  now: Date,
): void {
  if ('increment' in change) assertSeatChange(s, plan, change.increment, now);
  else removeSeats(s, plan, licenses, change.decrement, now);
}
