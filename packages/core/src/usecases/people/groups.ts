import { invalid } from '../../errors';
import { isUuid } from '../../support/text';
import type { Customer, Grantee, Group, Id, Membership, Page, Tenant } from '../../model';
import { applyMembershipChanges, assertCheckableMembers, type MembershipChange } from '../../domain/people';
import { assertCheckableGranteeId, isCheckableGranteeId } from '../../domain/grantee-ids';
import { lockSubscriptions } from '../subscriptions/shared';
import { ensureGrantees, loadGroup, lockForMoves, memberIdsOf, membersOf, type GroupMember, type PeopleDeps } from './shared';

/**
 * Groups of the catalog API: teams of grantees of one owner. A subscription's group (with the
 * subscription's id) gives its seats to its members; another group only keeps its members.
 */
export class GroupDirectory {
  constructor(private readonly deps: PeopleDeps) {}

  async list(
    tenant: Tenant,
    q: { limit: number; after?: string; before?: string; owner?: string },
  ): Promise<Page<{ group: Group; owner: Customer | undefined }>> {
    return this.deps.uow.read(async (r) => {
      let customerId: Id | undefined;
      if (q.owner !== undefined) {
        const owner = await r.customers.findByValue(tenant, q.owner);
        if (!owner) return { items: [], hasMore: false, nextCursor: null, previousCursor: null };
        customerId = owner.id;
      }
      const page = await r.people.pageGroups(tenant, { ...q, customerId });
      const items = [];
      for (const group of page.items) items.push({ group, owner: await r.customers.get(group.customerId) });
      return { ...page, items };
    });
  }

  async get(tenant: Tenant, id: Id): Promise<{ group: Group; owner: Customer | undefined; members: GroupMember[] }> {
    return this.deps.uow.read(async (r) => {
      const group = await loadGroup(r, tenant, id);
      return { group, owner: await r.customers.get(group.customerId), members: await membersOf(r, group) };
    });
  }

  /** A group of the owner (a customer, made when new) with these grantees (made when new). */
  async create(tenant: Tenant, input: { owner: string; name?: string; grantees?: { granteeId: string; name?: string }[] }): Promise<Group> {
    (input.grantees ?? []).forEach((g, i) => assertCheckableGranteeId(`grantees[${i}].granteeId`, g.granteeId));
    const now = this.deps.clock.now();
    return this.deps.uow.run(async (r) => {
      const owner = await r.customers.findOrCreate({
        id: this.deps.ids.newId(),
        organisationId: tenant.organisationId,
        isTest: tenant.isTest,
        value: input.owner,
        emailAddress: null,
        paymentCustomerId: null,
        createdAt: now,
        updatedAt: now,
      });
      const group: Group = {
        id: this.deps.ids.newId(),
        ...tenant,
        customerId: owner.id,
        subscriptionId: null,
        name: input.name ?? null,
        createdAt: now,
        updatedAt: now,
      };
      await r.people.saveGroup(group);
      const grantees = await ensureGrantees(r, this.deps, tenant, input.grantees ?? []);
      for (const g of grantees.values()) await r.people.addMember(this.membership(group, g.id, now));
      return group;
    });
  }

  /** Renames the group and its members (`grantees`: each a member's record id with its new granteeId and name). */
  async update(
    tenant: Tenant,
    id: Id,
    input: { name?: string | null; grantees: { id: Id; granteeId: string; name?: string | null }[] },
  ): Promise<void> {
    const now = this.deps.clock.now();
    await this.deps.uow.run(async (r) => {
      const group = await loadGroup(r, tenant, id);
      // Every subscription the renames touch (and the group's own) is locked first, together and in
      // id order, before its seats are read as the group's members.
      const named = await Promise.all(input.grantees.map((g) => (isUuid(g.id) ? r.people.getGrantee(g.id) : undefined)));
      const moves = await lockForMoves(
        r,
        tenant,
        named.flatMap((g, i) => (g && g.granteeId !== input.grantees[i].granteeId ? [g.granteeId] : [])),
        [group.subscriptionId],
      );
      const members = new Map((await membersOf(r, group)).map((m) => [m.grantee.id, m.grantee]));
      for (const [i, g] of input.grantees.entries()) {
        const current = members.get(g.id) ?? invalid(`grantees[${i}].id`, 'is not a member of the group');
        if (g.granteeId !== current.granteeId) {
          assertCheckableGranteeId(`grantees[${i}].granteeId`, g.granteeId);
          if ((await r.people.findGrantees(tenant, [g.granteeId])).length)
            invalid(`grantees[${i}].granteeId`, 'is taken by another grantee');
          await moves.move(current.granteeId, g.granteeId, now);
        }
        await r.people.saveGrantee({
          ...current,
          granteeId: g.granteeId,
          name: g.name === undefined ? current.name : g.name,
          updatedAt: now,
        });
      }
      if (input.name !== undefined) await r.people.saveGroup({ ...group, name: input.name, updatedAt: now });
    });
  }

  /** Removes a group without a subscription (a subscription's group goes with the subscription: 400). */
  async delete(tenant: Tenant, id: Id): Promise<void> {
    await this.deps.uow.run(async (r) => {
      const group = await loadGroup(r, tenant, id);
      if (group.subscriptionId) invalid('id', "is a subscription's group: it goes with the subscription");
      await r.people.deleteGroup(group.id);
    });
  }

  /**
   * Adds, removes and replaces members, all or nothing. In a subscription's group a member takes a
   * seat (a license gets its granteeId, so the check answers for it at once); elsewhere it is a
   * membership.
   */
  async manage(tenant: Tenant, id: Id, changes: MembershipChange[]): Promise<void> {
    const now = this.deps.clock.now();
    await this.deps.uow.run(async (r) => {
      const group = await loadGroup(r, tenant, id);
      // A subscription's group: the subscription locked first (as every seat writer does, before
      // anything else is written), so its seats are read below as they are, not changed meanwhile.
      if (group.subscriptionId) await lockSubscriptions(r, [group.subscriptionId]);
      const named = changes.flatMap((c) =>
        c.type === 'add'
          ? [{ granteeId: c.granteeId, name: c.name }]
          : c.type === 'replace'
            ? [{ granteeId: c.newGranteeId, name: c.name }]
            : [],
      );
      if (group.subscriptionId) {
        // The members' new ids are checked here, against the seats' holders (a holder added again is no change).
        const changed = applyMembershipChanges(await r.licenses.listBySubscription(group.subscriptionId), changes, now);
        await ensureGrantees(r, this.deps, tenant, named);
        if (changed.length) await r.licenses.saveMany(changed);
        if (!(await r.people.getGroup(group.id))) await r.people.saveGroup(group);
        return;
      }
      // Only a change naming an id the check cannot read back needs the members (a member kept as stored is no change).
      const unreadable = changes.some(
        (c) => (c.type === 'add' && !isCheckableGranteeId(c.granteeId)) || (c.type === 'replace' && !isCheckableGranteeId(c.newGranteeId)),
      );
      if (unreadable) assertCheckableMembers(changes, await memberIdsOf(r, group));
      const grantees = await ensureGrantees(r, this.deps, tenant, named);
      const refOf = async (granteeId: string) => grantees.get(granteeId) ?? (await r.people.findGrantees(tenant, [granteeId]))[0];
      const members = new Set((await r.people.members(group.id)).map((m) => m.granteeRef));
      for (const [i, c] of changes.entries()) {
        const g = await refOf(c.granteeId);
        if (c.type === 'add') {
          await r.people.addMember(this.membership(group, (g as Grantee).id, now));
          members.add((g as Grantee).id);
        } else if (c.type === 'remove') {
          if (g) await r.people.removeMember(group.id, g.id);
          if (g) members.delete(g.id);
        } else {
          if (!g || !members.has(g.id)) invalid(`[${i}].granteeId`, 'is not a member of the group');
          const next = (await refOf(c.newGranteeId)) as Grantee;
          await r.people.removeMember(group.id, (g as Grantee).id);
          members.delete((g as Grantee).id);
          await r.people.addMember(this.membership(group, next.id, now));
          members.add(next.id);
        }
      }
    });
  }

  private membership(group: Group, granteeRef: Id, now: Date): Membership {
    return {
      id: this.deps.ids.newId(),
      organisationId: group.organisationId,
      isTest: group.isTest,
      groupId: group.id,
      granteeRef,
      createdAt: now,
      updatedAt: now,
    };
  }
}
