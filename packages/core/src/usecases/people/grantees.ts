import { ErrorCodes, fail, invalid } from '../../errors';
import type { Grantee, Group, Id, Page, Tenant } from '../../model';
import { seatHolders } from '../../domain/people';
import { assertCheckableGranteeId } from '../../domain/grantee-ids';
import { assertAccessible } from '../../domain/tenancy';
import { loadGroup, moveLicenses, type GroupMember, type PeopleDeps } from './shared';

/**
 * Grantees of the catalog API: who uses a product, named by the vendor's `granteeId` as licenses
 * and the check name it (docs/decisions.md, "Owners, grantees and groups").
 */
export class GranteeDirectory {
  constructor(private readonly deps: PeopleDeps) {}

  async list(tenant: Tenant, q: { limit: number; after?: string; before?: string; groupId?: Id }): Promise<Page<Grantee>> {
    return this.deps.uow.read(async (r) => {
      if (!q.groupId) return r.people.pageGrantees(tenant, q);
      const group = await loadGroup(r, tenant, q.groupId);
      return group.subscriptionId
        ? r.people.pageGrantees(tenant, {
            ...q,
            groupId: undefined,
            granteeIds: seatHolders(await r.licenses.listBySubscription(group.subscriptionId)),
          })
        : r.people.pageGrantees(tenant, q);
    });
  }

  /** The grantee and the groups it is in. */
  async get(tenant: Tenant, id: Id): Promise<{ grantee: Grantee; memberships: { member: GroupMember; group: Group }[] }> {
    return this.deps.uow.read(async (r) => {
      const grantee = assertAccessible(await r.people.getGrantee(id), tenant, 'grantee');
      const memberships: { member: GroupMember; group: Group }[] = [];
      for (const m of await r.people.membershipsOf(grantee.id)) {
        const group = await r.people.getGroup(m.groupId);
        if (group)
          memberships.push({
            group,
            member: { membershipId: m.id, groupId: group.id, grantee, createdAt: m.createdAt, updatedAt: m.updatedAt },
          });
      }
      const seats = (await r.licenses.list(tenant, { granteeId: grantee.granteeId })).filter(
        (l) => l.subscriptionId && l.status !== 'CANCELED',
      );
      for (const seat of seats) {
        const group = await loadGroup(r, tenant, seat.subscriptionId as Id);
        memberships.push({
          group,
          member: { membershipId: seat.id, groupId: group.id, grantee, createdAt: seat.updatedAt, updatedAt: seat.updatedAt },
        });
      }
      return { grantee, memberships };
    });
  }

  async create(tenant: Tenant, input: { granteeId: string; name?: string }): Promise<Grantee> {
    assertCheckableGranteeId('granteeId', input.granteeId);
    const now = this.deps.clock.now();
    return this.deps.uow.run(async (r) => {
      const fresh: Grantee = {
        id: this.deps.ids.newId(),
        organisationId: tenant.organisationId,
        isTest: tenant.isTest,
        granteeId: input.granteeId,
        name: input.name ?? null,
        createdAt: now,
        updatedAt: now,
      };
      // One step: of two creations of one new granteeId at once, the second is told it exists.
      const stored = await r.people.findOrCreateGrantee(fresh);
      if (stored.id !== fresh.id)
        fail(ErrorCodes.CONFLICT, 'a grantee with this granteeId exists', [
          { property: 'granteeId', error: 'is taken by another grantee' },
        ]);
      return stored;
    });
  }

  /** Renames the grantee; a new `granteeId` takes its licenses along (the same user under a new identifier). */
  async update(tenant: Tenant, id: Id, input: { granteeId: string; name?: string | null }): Promise<Grantee> {
    const now = this.deps.clock.now();
    return this.deps.uow.run(async (r) => {
      const current = assertAccessible(await r.people.getGrantee(id), tenant, 'grantee');
      if (input.granteeId !== current.granteeId) {
        assertCheckableGranteeId('granteeId', input.granteeId);
        if ((await r.people.findGrantees(tenant, [input.granteeId])).length) invalid('granteeId', 'is taken by another grantee');
        await moveLicenses(r, tenant, current.granteeId, input.granteeId, now);
      }
      const updated = {
        ...current,
        granteeId: input.granteeId,
        name: input.name === undefined ? current.name : input.name,
        updatedAt: now,
      };
      await r.people.saveGrantee(updated);
      return updated;
    });
  }

  /** Removes the grantee: its memberships go, and the seats it held are freed. */
  async delete(tenant: Tenant, id: Id): Promise<void> {
    await this.deps.uow.run(async (r) => {
      const g = assertAccessible(await r.people.getGrantee(id), tenant, 'grantee');
      await moveLicenses(r, tenant, g.granteeId, null, this.deps.clock.now());
      await r.people.deleteGrantee(g.id);
    });
  }
}
