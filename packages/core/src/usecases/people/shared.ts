import type { Grantee, Group, Id, License, Tenant } from '../../model';
import { assignGrantee } from '../../domain/license';
import { assertCheckableGranteeId } from '../../domain/grantee-ids';
import { groupReference, seatHolders, subscriptionGroup } from '../../domain/people';
import { ErrorCodes, fail } from '../../errors';
import { isUuid } from '../../support/text';
import { assertAccessible } from '../../domain/tenancy';
import type { Repositories } from '../../ports';
import type { CoreDeps } from '../deps';
import { lockSubscriptions } from '../subscriptions/shared';

export type PeopleDeps = Pick<CoreDeps, 'uow' | 'clock' | 'ids'>;

/** A member of a group: the grantee and the membership that puts it there (a seat's license for a subscription's group). */
export interface GroupMember {
  membershipId: Id;
  groupId: Id;
  grantee: Grantee;
  createdAt: Date;
  updatedAt: Date;
}

/** Helpers of the people use cases (grantees and groups). */

/** The group, a subscription's group without a row (made before groups existed) included. */
export async function loadGroup(r: Repositories, tenant: Tenant, id: Id): Promise<Group> {
  const row = await r.people.getGroup(id);
  if (row) return assertAccessible(row, tenant, 'group');
  const s = await r.subscriptions.get(id);
  return assertAccessible(s && subscriptionGroup(s), tenant, 'group');
}

/**
 * The grantee records of these vendor identifiers, created when new (with `names` for new ones).
 * New ones are inserted in granteeId order, whatever the order asked: two requests making the same
 * new grantees ([a, b] and [b, a]) wait for each other at one key, never each at the other's.
 */
export async function ensureGrantees(
  r: Repositories,
  deps: PeopleDeps,
  tenant: Tenant,
  wanted: { granteeId: string; name?: string | null }[],
): Promise<Map<string, Grantee>> {
  const found = new Map((await r.people.findGrantees(tenant, [...new Set(wanted.map((w) => w.granteeId))])).map((g) => [g.granteeId, g]));
  const now = deps.clock.now();
  const made = new Map<string, Grantee>();
  const inOrder = [...wanted].sort((a, b) => (a.granteeId < b.granteeId ? -1 : a.granteeId > b.granteeId ? 1 : 0));
  for (const w of inOrder) {
    if (found.has(w.granteeId) || made.has(w.granteeId)) continue;
    // Found or made in one step: a request making the same grantee at once shares it (no unique-key failure).
    const g = await r.people.findOrCreateGrantee({
      id: deps.ids.newId(),
      organisationId: tenant.organisationId,
      isTest: tenant.isTest,
      granteeId: w.granteeId,
      name: w.name ?? null,
      createdAt: now,
      updatedAt: now,
    });
    made.set(w.granteeId, g);
  }
  // Answered as before: those found, then the new ones in the order asked.
  for (const w of wanted) if (made.has(w.granteeId)) found.set(w.granteeId, made.get(w.granteeId) as Grantee);
  return found;
}

/** The members of a group: seat holders of a subscription's group (those known as grantees), or its memberships. */
export async function membersOf(r: Repositories, group: Group): Promise<GroupMember[]> {
  if (group.subscriptionId) {
    const licenses = await r.licenses.listBySubscription(group.subscriptionId);
    const holders = seatHolders(licenses);
    const grantees = new Map((await r.people.findGrantees(group, holders)).map((g) => [g.granteeId, g]));
    return holders.flatMap((h) => {
      const g = grantees.get(h);
      const seat = licenses.find((l) => l.granteeId === h && l.status !== 'CANCELED') as License;
      return g ? [{ membershipId: seat.id, groupId: group.id, grantee: g, createdAt: seat.updatedAt, updatedAt: seat.updatedAt }] : [];
    });
  }
  const out: GroupMember[] = [];
  for (const m of await r.people.members(group.id)) {
    const g = await r.people.getGrantee(m.granteeRef);
    if (g) out.push({ membershipId: m.id, groupId: group.id, grantee: g, createdAt: m.createdAt, updatedAt: m.updatedAt });
  }
  return out;
}

/**
 * Moves every running license of one grantee to another identifier (or frees it: null). The seats'
 * subscriptions are locked first (in id order, as every seat writer does), then the licenses, and
 * the licenses are read again under the locks: a license canceled or reassigned since the plain
 * read is left as it now is (never brought back, never taken from its new grantee).
 */
export async function moveLicenses(r: Repositories, tenant: Tenant, from: string, to: string | null, now: Date): Promise<void> {
  await (await lockForMoves(r, tenant, [from])).move(from, to, now);
}

/**
 * Locks, for several moves of one request (a group's members renamed), the subscriptions of every
 * `from`'s running licenses and `also` (a subscription's group) together, in id order, before any
 * license: one subscription after another's licenses could deadlock with a writer of both. Then
 * `move` as `moveLicenses` does, limited to what is locked.
 */
export async function lockForMoves(
  r: Repositories,
  tenant: Tenant,
  froms: string[],
  also: (Id | null)[] = [],
): Promise<{ move: (from: string, to: string | null, now: Date) => Promise<void> }> {
  const seen = new Map<string, License[]>();
  for (const from of new Set(froms))
    seen.set(
      from,
      (await r.licenses.list(tenant, { granteeId: from })).filter((l) => l.status !== 'CANCELED'),
    );
  const locked = new Set([...seen.values()].flat().flatMap((l) => (l.subscriptionId ? [l.subscriptionId] : [])));
  for (const id of also) if (id) locked.add(id);
  await lockSubscriptions(r, locked);
  return {
    move: async (from, to, now) => {
      // Read again: a license given to `from` meanwhile on a subscription locked now (or ad hoc) moves
      // too; one on another subscription was given after this move began, and is left as given.
      const again = (await r.licenses.list(tenant, { granteeId: from })).filter(
        (l) => l.subscriptionId === null || locked.has(l.subscriptionId),
      );
      const ids = [...new Set([...(seen.get(from) ?? []), ...again].map((l) => l.id))];
      if (ids.length === 0) return;
      const held = (await r.licenses.getManyForUpdate(ids)).filter((l) => l.granteeId === from && l.status !== 'CANCELED');
      if (held.length) await r.licenses.saveMany(held.map((l) => assignGrantee(l, to, now)));
    },
  };
}

/** Who a purchase is for: a grantee, or a group (named `grp_<id>`, or by the id of one of the tenant's groups). */
export interface PurchaseFor {
  granteeId: string | null;
  group: Group | null;
  /** The group's members' vendor identifiers, in order (empty for a grantee). */
  members: string[];
}

/** The vendor identifiers of a group's members: every seat holder of a subscription's group, or its memberships' grantees. */
export async function memberIdsOf(r: Repositories, group: Group): Promise<string[]> {
  if (group.subscriptionId) return seatHolders(await r.licenses.listBySubscription(group.subscriptionId));
  const out: string[] = [];
  for (const m of await r.people.members(group.id)) {
    const g = await r.people.getGrantee(m.granteeRef);
    if (g) out.push(g.granteeId);
  }
  return out;
}

/**
 * Reads a checkout's or cart item's `grantee`: `grp_<id>` names a group of the tenant (unknown:
 * 404; another organisation's: 403); a bare id that names one of the tenant's groups is that group
 * (an id read from `GET /api/groups`); anything else is a grantee.
 */
export async function purchaseFor(
  r: Repositories,
  tenant: Tenant,
  grantee: string | undefined | null,
  property = 'grantee',
): Promise<PurchaseFor> {
  if (grantee === undefined || grantee === null) return { granteeId: null, group: null, members: [] };
  const ref = groupReference(grantee);
  let group: Group | undefined;
  if (ref !== undefined) {
    if (!isUuid(ref)) return fail(ErrorCodes.NOT_FOUND, 'group not found');
    group = await loadGroup(r, tenant, ref);
  } else if (isUuid(grantee)) {
    const row = (await r.people.getGroup(grantee)) ?? (await r.subscriptions.get(grantee));
    if (row && row.organisationId === tenant.organisationId && row.isTest === tenant.isTest) group = await loadGroup(r, tenant, grantee);
  }
  if (!group) {
    assertCheckableGranteeId(property, grantee);
    return { granteeId: grantee, group: null, members: [] };
  }
  return { granteeId: null, group, members: await memberIdsOf(r, group) };
}
