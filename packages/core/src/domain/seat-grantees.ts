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

/** A seat a license write gives to a grantee it did not have before the write, and the field a refusal names. */
export interface GivenSeat {
  /** The seat as the write leaves it. */
  seat: License;
  property: string;
}

const sameSeatOf = (a: License, b: License) => a.subscriptionId === b.subscriptionId && a.planId === b.planId;

/**
 * The rule "a grantee holds at most one seat of each plan of a subscription" on the end state of a
 * license write (v1/v2 `PUT /licenses[/:uuid]`), all items applied: `seats` holds, as the write
 * leaves them, the seats of the subscriptions and plans of `given` that their new grantees hold (or
 * more). `given` lists the seats the write gives to a new grantee, in the order of the items that set
 * them last; the last one whose grantee holds another running seat of the same subscription and
 * plan is refused (400 naming its `property`). A seat given back to its own holder is not given;
 * ad hoc licenses and unassignments are not checked. A grantee holds a seat of each plan of a
 * subscription: a plan added to it gives each seat holder one seat of that plan.
 */
export function assertOneSeatPerGrantee(seats: Iterable<License>, given: readonly GivenSeat[]): void {
  const all = [...seats];
  for (const { seat, property } of [...given].reverse()) {
    if (seat.subscriptionId === null || seat.granteeId === null) continue;
    const other = all.find((l) => l.id !== seat.id && running(l) && sameSeatOf(l, seat) && l.granteeId === seat.granteeId);
    if (other)
      invalid(
        property,
        `${seat.granteeId} already holds seat ${other.id} of subscription ${seat.subscriptionId} and plan ${seat.planId}: a grantee holds at most one seat of each plan of a subscription (unassign that seat first)`,
      );
  }
}

/**
 * Applies the changes in order to the subscription's seats (of all its plans), all or none. A
 * grantee holds at most one seat of each plan of a subscription. `assign` gives the grantee one
 * unassigned seat of each plan it holds no seat of (of those with one left); `unassign` takes every
 * seat the grantee holds back, of every plan; `replace` moves the grantee's seat of each plan to
 * another grantee, who may hold no seat of those plans. A grantee holding several seats of one plan
 * (data written before license updates kept the rule) loses them all to `unassign`, and `replace`
 * gives the new grantee the first of them and frees the other seats of that plan, so the rule holds
 * after it. Returns the seats that changed.
 */
export function manageSeatGrantees(seats: License[], changes: SeatGranteeChange[], now: Date): License[] {
  const current = new Map(seats.filter(running).map((l) => [l.id, l]));
  const changed = new Map<string, License>();
  const holding = (granteeId: string) => [...current.values()].filter((l) => l.granteeId === granteeId);
  const plansOf = (ls: License[]) => [...new Set(ls.map((l) => l.planId))];
  const put = (l: License) => {
    current.set(l.id, l);
    changed.set(l.id, l);
  };
  changes.forEach((c, i) => {
    const at = `[${i}].granteeId`;
    if (c.type === 'assign') assertCheckableGranteeId(at, c.granteeId);
    if (c.type === 'replace') assertCheckableGranteeId(`[${i}].newGranteeId`, c.newGranteeId);
    if (c.type === 'assign') {
      const held = new Set(plansOf(holding(c.granteeId)));
      const missing = plansOf([...current.values()]).filter((planId) => !held.has(planId));
      if (held.size && !missing.length) invalid(at, `${c.granteeId} already holds a seat of this subscription`);
      const free = missing
        .map((planId) => [...current.values()].find((l) => l.planId === planId && l.granteeId === null))
        .filter((l): l is License => !!l);
      if (!free.length)
        fail(ErrorCodes.SEATS_EXCEED_UNASSIGNED, 'no unassigned seat is left: add seats first', [
          { property: at, error: 'no unassigned seat' },
        ]);
      for (const seat of free) put(assignGrantee(seat, c.granteeId, now));
    } else {
      const held = holding(c.granteeId);
      if (!held.length) invalid(at, `${c.granteeId} holds no seat of this subscription`);
      if (c.type === 'unassign') for (const seat of held) put(assignGrantee(seat, null, now));
      else {
        const plans = plansOf(held);
        if (holding(c.newGranteeId).some((l) => plans.includes(l.planId)))
          invalid(`[${i}].newGranteeId`, `${c.newGranteeId} already holds a seat of this subscription`);
        for (const planId of plans) {
          const [kept, ...extra] = held.filter((l) => l.planId === planId);
          put(assignGrantee(kept, c.newGranteeId, now));
          for (const seat of extra) put(assignGrantee(seat, null, now));
        }
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
