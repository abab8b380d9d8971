import { ErrorCodes, fail, invalid } from '../errors';
import type { Group, License, Subscription } from '../model';
import { assignGrantee } from './license';
import { assertCheckableGranteeId } from './grantee-ids';

/**
 * Rules of the catalog API's people (issue #20): a subscription's group and the seats its members
 * take. Pure: the use cases load, call these, and write what they return.
 */

/** The group a subscription's seats go to: it has the subscription's id and its owner. */
export const subscriptionGroup = (s: Subscription): Group => ({
  id: s.id,
  organisationId: s.organisationId,
  isTest: s.isTest,
  customerId: s.customerId,
  subscriptionId: s.id,
  name: null,
  createdAt: s.createdAt,
  updatedAt: s.createdAt,
});

export type MembershipChange =
  | { type: 'add'; granteeId: string; name?: string }
  | { type: 'remove'; granteeId: string }
  | { type: 'replace'; granteeId: string; newGranteeId: string; name?: string };

const taking = (l: License) => l.status !== 'CANCELED';

/** The grantees a subscription's seats go to now (its group's members), in seat order. */
export const seatHolders = (licenses: License[]): string[] => [
  ...new Set(licenses.filter((l) => taking(l) && l.granteeId !== null).map((l) => l.granteeId as string)),
];

/**
 * The grantee ids membership changes give a seat or a membership (`add`'s, `replace`'s new one):
 * each must read back in the check, unless it is a member's (`members`: the seat holders or
 * memberships before the changes) given nothing new: an `add` of a member, a `replace` by itself
 * (no-ops, however the id was stored before the rule).
 */
export function assertCheckableMembers(changes: MembershipChange[], members: readonly string[]): void {
  // Followed through the changes in order: a member removed and added again is added anew.
  const current = new Set(members);
  changes.forEach((c, i) => {
    if (c.type === 'add') {
      if (!current.has(c.granteeId)) assertCheckableGranteeId(`[${i}].granteeId`, c.granteeId);
      current.add(c.granteeId);
    } else if (c.type === 'remove') current.delete(c.granteeId);
    else {
      if (!(c.newGranteeId === c.granteeId && current.has(c.granteeId))) assertCheckableGranteeId(`[${i}].newGranteeId`, c.newGranteeId);
      current.delete(c.granteeId);
      current.add(c.newGranteeId);
    }
  });
}

/**
 * The seats a group's membership changes move, applied in order: `add` takes an unassigned seat
 * (none left: 400, add seats first; already a member: nothing), `remove` frees the member's seats
 * (not a member: nothing), `replace` gives the member's seats to `newGranteeId` (not a member, or
 * the new one already is: 400). Returns the licenses that changed.
 */
export function applyMembershipChanges(licenses: License[], changes: MembershipChange[], now: Date): License[] {
  const current = new Map(licenses.map((l) => [l.id, l]));
  const changed = new Set<string>();
  const holding = (granteeId: string) => [...current.values()].filter((l) => taking(l) && l.granteeId === granteeId);
  const set = (l: License, granteeId: string | null) => {
    current.set(l.id, assignGrantee(l, granteeId, now));
    changed.add(l.id);
  };
  assertCheckableMembers(changes, seatHolders(licenses));
  changes.forEach((c, i) => {
    if (c.type === 'add') {
      if (holding(c.granteeId).length) return;
      const free = [...current.values()].find((l) => taking(l) && l.granteeId === null);
      if (!free)
        fail(
          ErrorCodes.SEATS_EXCEED_UNASSIGNED,
          `no unassigned seat is left for ${c.granteeId}: add seats to the subscription plan first`,
          [{ property: `[${i}].granteeId`, error: 'has no unassigned seat left to take' }],
        );
      set(free as License, c.granteeId);
    } else if (c.type === 'remove') {
      for (const l of holding(c.granteeId)) set(l, null);
    } else {
      const seats = holding(c.granteeId);
      if (!seats.length) invalid(`[${i}].granteeId`, 'is not a member of the group');
      if (c.newGranteeId !== c.granteeId && holding(c.newGranteeId).length)
        invalid(`[${i}].newGranteeId`, 'is already a member of the group');
      for (const l of seats) set(l, c.newGranteeId);
    }
  });
  return [...changed].map((id) => current.get(id) as License);
}

/** How the published catalog API names a group where a grantee may stand (a checkout's `grantee`). */
export const GROUP_PREFIX = 'grp_';

/** The group id a `grp_<id>` reference names, or undefined when the value is not one. */
export const groupReference = (value: string): string | undefined =>
  value.startsWith(GROUP_PREFIX) ? value.slice(GROUP_PREFIX.length) : undefined;

/**
 * The seats a purchase for a group sells: every member gets one, so a per-seat plan sells at least
 * as many seats as the group has members (the quantity asked, when given, must hold them; when not
 * given, the seats grow to the members), and a plan with one seat is for a group of one at most.
 * Returns the seat count to ask for (undefined: the checkout's own default).
 */
export function seatsForGroup(members: number, perSeat: boolean, minimum: number, asked: number | undefined): number | undefined {
  if (!perSeat) {
    if (members > 1) invalid('grantee', `the plan has one seat and the group has ${members} members: buy a per-seat plan for it`);
    return asked;
  }
  if (asked === undefined) return members > minimum ? members : undefined;
  if (asked < members)
    invalid('grantee', `the group has ${members} members and the checkout sells ${asked} seat(s): ask for at least ${members}`);
  return asked;
}
