import { DEFAULT_MAX_SEATS } from './limits';
import { ErrorCodes, fail } from '../errors';
import type { Id, License, Plan, SeatChange, Subscription } from '../model';
import { isPerSeat, minimumSeats } from './catalog';
import { effectiveStatus } from './subscription';
import { SUBSCRIPTION_STATUSES } from './status';
import { NewSeats } from './new-seats';

export { NewSeats, SEAT_BATCH } from './new-seats';

const isLive = (l: License) => l.status !== 'CANCELED';
export const unassignedSeats = (licenses: License[]): License[] => licenses.filter((l) => isLive(l) && l.granteeId === null);

/** Refuses a seat total above the configured bound (every path that creates seats checks it). */
export function assertSeatTotal(total: number, maxSeats: number): void {
  if (total > maxSeats)
    fail(ErrorCodes.SEATS_LIMIT_EXCEEDED, `a subscription can have at most ${maxSeats} seats`, [
      { property: 'quantity', error: `must be at most ${maxSeats} seats in all` },
    ]);
}

function assertSeatChange(s: Subscription, plan: Plan, count: number, now: Date): void {
  if (!Number.isInteger(count) || count < 1) fail(ErrorCodes.SEATS_INVALID_COUNT, 'the seat count must be a whole number of at least 1');
  assertSeatsChangeable(s, plan, now);
}

/** Refuses any seat change of a plan that is not per seat, or of a canceled subscription. */
function assertSeatsChangeable(s: Subscription, plan: Plan, now: Date): void {
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
    // Never of a canceled subscription (its seats change no more): ACTIVE, TRIALING or INACTIVE.
    status: SUBSCRIPTION_STATUSES[s.status].license,
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
  created: NewSeats;
}

/** Raises the quantity by `count` (never above `maxSeats` in all) and creates that many unassigned licenses. */
export function addSeats(
  s: Subscription,
  plan: Plan,
  purchaser: string,
  count: number,
  now: Date,
  newId: () => Id,
  maxSeats = DEFAULT_MAX_SEATS,
): SeatsAdded {
  assertSeatChange(s, plan, count, now);
  assertSeatTotal(s.quantity + count, maxSeats);
  const subscription = { ...s, quantity: s.quantity + count, updatedAt: now };
  return { subscription, created: new NewSeats(seatLicense(s, plan, purchaser, '', now), count, newId) };
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
  const removed = [...free].sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime() || (a.id < b.id ? 1 : -1)).slice(0, count);
  return { subscription: { ...s, quantity: s.quantity - count, updatedAt: now }, removed };
}

/** Checks a seat change at request time, so the caller gets 400 before any event is queued. */
export function validateSeatChange(
  s: Subscription,
  plan: Plan,
  licenses: License[],
  change: Pick<SeatChange, 'type' | 'count' | 'quantity'>,
  now: Date,
  maxSeats = DEFAULT_MAX_SEATS,
): void {
  // A number of seats already held (queued behind other changes, see SeatService.requestQuantity).
  if (change.count === 0 && change.quantity !== undefined) return assertSeatsChangeable(s, plan, now);
  if (change.type === 'seats.increment') {
    assertSeatChange(s, plan, change.count, now);
    assertSeatTotal(s.quantity + change.count, maxSeats);
  } else removeSeats(s, plan, licenses, change.count, now);
}
