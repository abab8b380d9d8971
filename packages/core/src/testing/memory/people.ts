import type { PeopleRepository } from '../../ports';
import { pageOf } from '../../support/pagination';
import { type Tables, byCreated, copy, inTenant, values } from './tables';

export function peopleRepository(db: Tables): PeopleRepository {
  const memberRefs = (groupId: string) =>
    new Set(
      values(db.memberships)
        .filter((m) => m.groupId === groupId)
        .map((m) => m.granteeRef),
    );
  return {
    getGrantee: async (id) => copy(db.grantees.get(id)),
    findGrantees: async (t, ids) => values(db.grantees).filter((g) => inTenant(g, t) && ids.includes(g.granteeId)),
    pageGrantees: async (t, q) => {
      const members = q.groupId ? memberRefs(q.groupId) : undefined;
      return pageOf(
        values(db.grantees).filter(
          (g) => inTenant(g, t) && (!q.granteeIds || q.granteeIds.includes(g.granteeId)) && (!members || members.has(g.id)),
        ),
        q,
      );
    },
    findOrCreateGrantee: async (g) => {
      const found = values(db.grantees).find((x) => inTenant(x, g) && x.granteeId === g.granteeId);
      if (found) return found;
      db.grantees.set(g.id, copy(g));
      return copy(g);
    },
    saveGrantee: async (g) => void db.grantees.set(g.id, copy(g)),
    deleteGrantee: async (id) => {
      for (const [k, m] of db.memberships) if (m.granteeRef === id) db.memberships.delete(k);
      db.grantees.delete(id);
    },
    getGroup: async (id) => copy(db.groups.get(id)),
    pageGroups: async (t, q) =>
      pageOf(
        values(db.groups).filter((g) => inTenant(g, t) && (!q.customerId || g.customerId === q.customerId)),
        q,
      ),
    saveGroup: async (g) => void db.groups.set(g.id, copy(g)),
    deleteGroup: async (id) => {
      for (const [k, m] of db.memberships) if (m.groupId === id) db.memberships.delete(k);
      db.groups.delete(id);
    },
    members: async (groupId) =>
      values(db.memberships)
        .filter((m) => m.groupId === groupId)
        .sort(byCreated),
    membershipsOf: async (ref) =>
      values(db.memberships)
        .filter((m) => m.granteeRef === ref)
        .sort(byCreated),
    addMember: async (m) => {
      if (values(db.memberships).some((x) => x.groupId === m.groupId && x.granteeRef === m.granteeRef)) return;
      db.memberships.set(m.id, copy(m));
    },
    removeMember: async (groupId, ref) => {
      for (const [k, m] of db.memberships) if (m.groupId === groupId && m.granteeRef === ref) db.memberships.delete(k);
    },
  };
}
