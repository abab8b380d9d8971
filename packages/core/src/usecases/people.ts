import { ErrorCodes, fail, invalid } from '../errors';
import type { Customer, Grantee, Group, Id, License, Membership, Page, Tenant } from '../model';
import { assignGrantee } from '../domain/license';
import { applyMembershipChanges, seatHolders, subscriptionGroup, type MembershipChange } from '../domain/people';
import { assertAccessible } from '../domain/tenancy';
import type { Repositories } from '../ports';
import type { CoreDeps } from './deps';

type PeopleDeps = Pick<CoreDeps, 'uow' | 'clock' | 'ids'>;

/** A member of a group: the grantee and the membership that puts it there (a seat's license for a subscription's group). */
export interface GroupMember {
  membershipId: Id;
  groupId: Id;
  grantee: Grantee;
  createdAt: Date;
  updatedAt: Date;
}

/** The group, a subscription's group without a row (made before groups existed) included. */
async function loadGroup(r: Repositories, tenant: Tenant, id: Id): Promise<Group> {
  const row = await r.people.getGroup(id);
  if (row) return assertAccessible(row, tenant, 'group');
  const s = await r.subscriptions.get(id);
  return assertAccessible(s && subscriptionGroup(s), tenant, 'group');
}

/** The grantee records of these vendor identifiers, created when new (with `names` for new ones). */
async function ensureGrantees(
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
async function membersOf(r: Repositories, group: Group): Promise<GroupMember[]> {
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
async function moveLicenses(r: Repositories, tenant: Tenant, from: string, to: string | null, now: Date): Promise<void> {
  const held = (await r.licenses.list(tenant, { granteeId: from })).filter((l) => l.status !== 'CANCELED');
  if (held.length) await r.licenses.saveMany(held.map((l) => assignGrantee(l, to, now)));
}

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
    return this.deps.uow.run(async (r) => {
      if ((await r.people.findGrantees(tenant, [input.granteeId])).length)
        fail(ErrorCodes.CONFLICT, 'a grantee with this granteeId exists', [
          { property: 'granteeId', error: 'is taken by another grantee' },
        ]);
      return (await ensureGrantees(r, this.deps, tenant, [input])).get(input.granteeId) as Grantee;
    });
  }

  /** Renames the grantee; a new `granteeId` takes its licenses along (the same user under a new identifier). */
  async update(tenant: Tenant, id: Id, input: { granteeId: string; name?: string | null }): Promise<Grantee> {
    const now = this.deps.clock.now();
    return this.deps.uow.run(async (r) => {
      const current = assertAccessible(await r.people.getGrantee(id), tenant, 'grantee');
      if (input.granteeId !== current.granteeId) {
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
    const now = this.deps.clock.now();
    return this.deps.uow.run(async (r) => {
      let owner = await r.customers.findByValue(tenant, input.owner);
      if (!owner) {
        owner = {
          id: this.deps.ids.newId(),
          ...tenant,
          value: input.owner,
          emailAddress: null,
          paymentCustomerId: null,
          createdAt: now,
          updatedAt: now,
        };
        await r.customers.save(owner);
      }
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
      const members = new Map((await membersOf(r, group)).map((m) => [m.grantee.id, m.grantee]));
      for (const [i, g] of input.grantees.entries()) {
        const current = members.get(g.id) ?? invalid(`grantees[${i}].id`, 'is not a member of the group');
        if (g.granteeId !== current.granteeId) {
          if ((await r.people.findGrantees(tenant, [g.granteeId])).length)
            invalid(`grantees[${i}].granteeId`, 'is taken by another grantee');
          await moveLicenses(r, tenant, current.granteeId, g.granteeId, now);
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
      const named = changes.flatMap((c) =>
        c.type === 'add'
          ? [{ granteeId: c.granteeId, name: c.name }]
          : c.type === 'replace'
            ? [{ granteeId: c.newGranteeId, name: c.name }]
            : [],
      );
      const grantees = await ensureGrantees(r, this.deps, tenant, named);
      if (group.subscriptionId) {
        const changed = applyMembershipChanges(await r.licenses.listBySubscription(group.subscriptionId), changes, now);
        if (changed.length) await r.licenses.saveMany(changed);
        if (!(await r.people.getGroup(group.id))) await r.people.saveGroup(group);
        return;
      }
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
