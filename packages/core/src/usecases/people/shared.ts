import type { Grantee, Group, Id, License, Tenant } from '../../model';
import { assignGrantee } from '../../domain/license';
import { seatHolders, subscriptionGroup } from '../../domain/people';
import { assertAccessible } from '../../domain/tenancy';
import type { Repositories } from '../../ports';
import type { CoreDeps } from '../deps';

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

/** The grantee records of these vendor identifiers, created when new (with `names` for new ones). */
export async function ensureGrantees(
  r: Repositories,
  deps: PeopleDeps,
  tenant: Tenant,
  wanted: { granteeId: string; name?: string | null }[],
): Promise<Map<string, Grantee>> {
  const found = new Map((await r.people.findGrantees(tenant, [...new Set(wanted.map((w) => w.granteeId))])).map((g) => [g.granteeId, g]));
  const now = deps.clock.now();
  for (const w of wanted) {
    if (found.has(w.granteeId)) continue;
    const g: Grantee = { id: deps.ids.newId(), ...tenant, granteeId: w.granteeId, name: w.name ?? null, createdAt: now, updatedAt: now };
    await r.people.saveGrantee(g);
    found.set(w.granteeId, g);
  }
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

/** Moves every running license of one grantee to another identifier (or frees it: null). */
export async function moveLicenses(r: Repositories, tenant: Tenant, from: string, to: string | null, now: Date): Promise<void> {
  const held = (await r.licenses.list(tenant, { granteeId: from })).filter((l) => l.status !== 'CANCELED');
  if (held.length) await r.licenses.saveMany(held.map((l) => assignGrantee(l, to, now)));
}
