import { ErrorCodes, fail, invalid } from '../errors';
import type { Customer, License, Subscription } from '../model';
import { assignGrantee } from './license';
import { assertCheckableGranteeId } from './grantee-ids';

/** One change of who holds a subscription's seats (v2/v3 `manage-seats`). */
export type SeatGranteeChange =
  | { type: 'assign'; granteeId: string }
  | { type: 'unassign'; granteeId: string }
  | { type: 'replace'; granteeId: string; newGranteeId: string };

const running = (l: License) => l.status !== 'CANCELED';

/**
 * The rule "a grantee holds at most one seat of a subscription" for a write that gives `seat` (one of
 * a subscription's seats, as it stands before the write) to `granteeId` (the license updates, v1/v2
 * `PUT /licenses[/:uuid]`): a 400 naming `property` when the grantee holds another running seat of
 * the subscription among `seats` (its seats as the write has left them so far). A seat given back
 * to its own holder is no change and passes; an ad hoc license or an unassignment is not checked.
 */
export function assertOneSeatPerGrantee(seats: Iterable<License>, seat: License, granteeId: string | null, property: string): void {
  if (seat.subscriptionId === null || granteeId === null || granteeId === seat.granteeId) return;
  for (const l of seats)
    if (l.id !== seat.id && running(l) && l.subscriptionId === seat.subscriptionId && l.granteeId === granteeId)
      invalid(
        property,
        `${granteeId} already holds seat ${l.id} of subscription ${seat.subscriptionId}: a grantee holds at most one seat of a subscription (unassign that seat first)`,
      );
}

/**
 * Applies the changes in order to the subscription's seats, all or none: `assign` gives an unassigned
 * seat to the grantee, `unassign` takes the grantee's seats back, `replace` moves the grantee's seat
 * to another grantee. A grantee holds at most one seat of a subscription; one holding several (data
 * written before license updates kept the rule) loses them all to `unassign`, and `replace` gives the
 * new grantee the first of them and frees the others, so the rule holds after it. Returns the seats
 * that changed.
 */
export function manageSeatGrantees(seats: License[], changes: SeatGranteeChange[], now: Date): License[] {
  const current = new Map(seats.filter(running).map((l) => [l.id, l]));
  const changed = new Map<string, License>();
  const holding = (granteeId: string) => [...current.values()].filter((l) => l.granteeId === granteeId);
  const put = (l: License) => {
    current.set(l.id, l);
    changed.set(l.id, l);
  };
  changes.forEach((c, i) => {
    const at = `[${i}].granteeId`;
    if (c.type === 'assign') assertCheckableGranteeId(at, c.granteeId);
    if (c.type === 'replace') assertCheckableGranteeId(`[${i}].newGranteeId`, c.newGranteeId);
    if (c.type === 'assign') {
      if (holding(c.granteeId).length) invalid(at, `${c.granteeId} already holds a seat of this subscription`);
      const free = [...current.values()].find((l) => l.granteeId === null);
      if (!free)
        fail(ErrorCodes.SEATS_EXCEED_UNASSIGNED, 'no unassigned seat is left: add seats first', [
          { property: at, error: 'no unassigned seat' },
        ]);
      put(assignGrantee(free as License, c.granteeId, now));
    } else {
      const held = holding(c.granteeId);
      if (!held.length) invalid(at, `${c.granteeId} holds no seat of this subscription`);
      if (c.type === 'unassign') for (const seat of held) put(assignGrantee(seat, null, now));
      else {
        if (holding(c.newGranteeId).length) invalid(`[${i}].newGranteeId`, `${c.newGranteeId} already holds a seat of this subscription`);
        const [kept, ...extra] = held;
        put(assignGrantee(kept, c.newGranteeId, now));
        for (const seat of extra) put(assignGrantee(seat, null, now));
      }
    }
  });
  return [...changed.values()];
}

/** A subscription passed to another paying customer (v2/v3 `PUT /subscriptions/:uuid {owner}`): its seats' purchaser follows. */
export function changeOwner(
  s: Subscription,
  seats: License[],
  owner: Customer,
  now: Date,
): { subscription: Subscription; licenses: License[] } {
  if (s.status === 'CANCELED') fail(ErrorCodes.SUBSCRIPTION_CANCELED, 'a canceled subscription cannot change owner');
  return {
    subscription: { ...s, customerId: owner.id, email: owner.emailAddress ?? s.email, updatedAt: now },
    licenses: seats.map((l) => ({ ...l, purchaser: owner.value, updatedAt: now })),
  };
}

/**
 * A subscription created without payment (v2/v3 `POST /subscriptions`) may name when its period
 * ends: it must lie ahead; the seats end with it.
 */
export function withPeriodEnd(s: Subscription, expiry: Date, now: Date): Subscription {
  if (Number.isNaN(expiry.getTime())) invalid('expiryDate', 'must be an ISO 8601 date-time');
  if (expiry.getTime() <= now.getTime()) invalid('expiryDate', 'must lie in the future');
  return { ...s, currentPeriodEnd: expiry };
}
