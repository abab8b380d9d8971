import type { Grantee, Group, Membership, PeopleRepository, Tenant } from '@tollgate/core';
import type { Selectable } from 'kysely';
import type { DB } from '../schema';
import { findOrInsert, keysetPage, tenantOf, upsert, type Db } from './db';

const toGrantee = (r: Selectable<DB['grantees']>): Grantee => ({
  id: r.id,
  organisationId: r.organisation_id,
  isTest: r.is_test,
  granteeId: r.grantee_id,
  name: r.name,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});
const toGroup = (r: Selectable<DB['groups']>): Group => ({
  id: r.id,
  organisationId: r.organisation_id,
  isTest: r.is_test,
  customerId: r.customer_id,
  subscriptionId: r.subscription_id,
  name: r.name,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});
const toMembership = (r: Selectable<DB['group_memberships']>): Membership => ({
  id: r.id,
  organisationId: r.organisation_id,
  isTest: r.is_test,
  groupId: r.group_id,
  granteeRef: r.grantee_ref,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

const granteeRow = (g: Grantee) => ({
  id: g.id,
  organisation_id: g.organisationId,
  is_test: g.isTest,
  grantee_id: g.granteeId,
  name: g.name,
  created_at: g.createdAt,
  updated_at: g.updatedAt,
});

export function peopleRepository(db: Db): PeopleRepository {
  const findGrantees = async (t: Tenant, ids: string[]) =>
    ids.length
      ? (
          await db
            .selectFrom('grantees')
            .selectAll()
            .where((eb) => eb.and(tenantOf(t)))
            .where('grantee_id', 'in', ids)
            .execute()
        ).map(toGrantee)
      : [];
  return {
    getGrantee: async (id) => {
      const r = await db.selectFrom('grantees').selectAll().where('id', '=', id).executeTakeFirst();
      return r && toGrantee(r);
    },
    findGrantees,
    pageGrantees: async (t, q) => {
      const page = await keysetPage(
        () => {
          let b = db
            .selectFrom('grantees as gr')
            .selectAll('gr')
            .where((eb) => eb.and({ 'gr.organisation_id': t.organisationId, 'gr.is_test': t.isTest }));
          if (q.granteeIds) b = b.where('gr.grantee_id', 'in', q.granteeIds.length ? q.granteeIds : ['']);
          if (q.groupId) {
            const groupId = q.groupId;
            b = b.where((eb) =>
              eb.exists(
                eb
                  .selectFrom('group_memberships as gm')
                  .select('gm.id')
                  .whereRef('gm.grantee_ref', '=', 'gr.id')
                  .where('gm.group_id', '=', groupId),
              ),
            );
          }
          return b;
        },
        'gr',
        q,
      );
      return { ...page, items: page.items.map(toGrantee) };
    },
    findOrCreateGrantee: (g) =>
      findOrInsert(
        'grantee',
        async () => (await findGrantees(g, [g.granteeId]))[0],
        async () => {
          const inserted = await db
            .insertInto('grantees')
            .values(granteeRow(g))
            .onConflict((oc) => oc.columns(['organisation_id', 'is_test', 'grantee_id']).doNothing())
            .returningAll()
            .executeTakeFirst();
          return inserted && toGrantee(inserted);
        },
      ),
    saveGrantee: (g) => upsert(db, 'grantees', [granteeRow(g)]),
    deleteGrantee: async (id) => void (await db.deleteFrom('grantees').where('id', '=', id).execute()),
    getGroup: async (id) => {
      const r = await db.selectFrom('groups').selectAll().where('id', '=', id).executeTakeFirst();
      return r && toGroup(r);
    },
    pageGroups: async (t, q) => {
      const page = await keysetPage(
        () => {
          let b = db
            .selectFrom('groups as gp')
            .selectAll('gp')
            .where((eb) => eb.and({ 'gp.organisation_id': t.organisationId, 'gp.is_test': t.isTest }));
          if (q.customerId) b = b.where('gp.customer_id', '=', q.customerId);
          return b;
        },
        'gp',
        q,
      );
      return { ...page, items: page.items.map(toGroup) };
    },
    saveGroup: (g) =>
      upsert(db, 'groups', [
        {
          id: g.id,
          organisation_id: g.organisationId,
          is_test: g.isTest,
          customer_id: g.customerId,
          subscription_id: g.subscriptionId,
          name: g.name,
          created_at: g.createdAt,
          updated_at: g.updatedAt,
        },
      ]),
    deleteGroup: async (id) => void (await db.deleteFrom('groups').where('id', '=', id).execute()),
    members: async (groupId) =>
      (
        await db.selectFrom('group_memberships').selectAll().where('group_id', '=', groupId).orderBy('created_at').orderBy('id').execute()
      ).map(toMembership),
    membershipsOf: async (ref) =>
      (
        await db.selectFrom('group_memberships').selectAll().where('grantee_ref', '=', ref).orderBy('created_at').orderBy('id').execute()
      ).map(toMembership),
    addMember: async (m) =>
      void (await db
        .insertInto('group_memberships')
        .values({
          id: m.id,
          organisation_id: m.organisationId,
          is_test: m.isTest,
          group_id: m.groupId,
          grantee_ref: m.granteeRef,
          created_at: m.createdAt,
          updated_at: m.updatedAt,
        })
        .onConflict((oc) => oc.columns(['group_id', 'grantee_ref']).doNothing())
        .execute()),
    removeMember: async (groupId, ref) =>
      void (await db.deleteFrom('group_memberships').where('group_id', '=', groupId).where('grantee_ref', '=', ref).execute()),
  };
}
