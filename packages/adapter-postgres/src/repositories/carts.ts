import type { Cart, CartItem, CartRepository, CartStatus, Interval, LineItemQuantities } from '@tollgate/core';
import { sql, type Selectable } from 'kysely';
import type { DB } from '../schema';
import { groupBy, json, keysetPage, upsert, type Db } from './db';

const toItem = (r: Selectable<DB['cart_items']>): CartItem => ({
  id: r.id,
  planId: r.plan_id,
  granteeId: r.grantee_id,
  groupId: r.group_id,
  metadata: r.metadata as unknown as LineItemQuantities | null,
  checkoutSessionId: r.checkout_session_id,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

export function cartRepository(db: Db): CartRepository {
  /** The carts of these rows, each with its items in order. */
  const withItems = async (rows: Selectable<DB['carts']>[]): Promise<Cart[]> => {
    if (rows.length === 0) return [];
    const items = await db
      .selectFrom('cart_items')
      .selectAll()
      .where(
        'cart_id',
        'in',
        rows.map((r) => r.id),
      )
      .orderBy('position')
      .execute();
    const byCart = groupBy(items, (i) => i.cart_id);
    return rows.map((r) => ({
      id: r.id,
      organisationId: r.organisation_id,
      isTest: r.is_test,
      customerId: r.customer_id,
      currency: r.currency,
      interval: r.interval as Interval | null,
      intervalCount: r.interval_count,
      status: r.status as CartStatus,
      items: (byCart.get(r.id) ?? []).map(toItem),
      createdAt: r.created_at,
      updatedAt: r.updated_at,
    }));
  };
  const one = async (id: string, forUpdate: boolean) => {
    const q = db.selectFrom('carts').selectAll().where('id', '=', id);
    const r = await (forUpdate ? q.forUpdate() : q).executeTakeFirst();
    return r ? (await withItems([r]))[0] : undefined;
  };
  return {
    get: (id) => one(id, false),
    getForUpdate: (id) => one(id, true),
    save: async (c) => {
      await upsert(db, 'carts', [
        {
          id: c.id,
          organisation_id: c.organisationId,
          is_test: c.isTest,
          customer_id: c.customerId,
          currency: c.currency,
          interval: c.interval,
          interval_count: c.intervalCount,
          status: c.status,
          created_at: c.createdAt,
          updated_at: c.updatedAt,
        },
      ]);
      await db.deleteFrom('cart_items').where('cart_id', '=', c.id).execute();
      if (c.items.length)
        await db
          .insertInto('cart_items')
          .values(
            c.items.map((i, position) => ({
              id: i.id,
              cart_id: c.id,
              plan_id: i.planId,
              grantee_id: i.granteeId,
              group_id: i.groupId,
              metadata: i.metadata === null ? null : json(i.metadata),
              checkout_session_id: i.checkoutSessionId,
              position,
              created_at: i.createdAt,
              updated_at: i.updatedAt,
            })),
          )
          .execute();
    },
    cartOfItem: async (itemId) =>
      (await db.selectFrom('cart_items').select('cart_id').where('id', '=', itemId).executeTakeFirst())?.cart_id,
    page: async (t, q) => {
      const page = await keysetPage(
        () => {
          let base = db.selectFrom('carts').selectAll().where('organisation_id', '=', t.organisationId).where('is_test', '=', t.isTest);
          if (q.statuses) base = q.statuses.length ? base.where('status', 'in', q.statuses) : base.where(sql<boolean>`false`);
          if (q.customerIds) base = q.customerIds.length ? base.where('customer_id', 'in', q.customerIds) : base.where(sql<boolean>`false`);
          if (q.search) base = base.where(sql<boolean>`starts_with(id::text, lower(${q.search}))`);
          return base;
        },
        'carts',
        q,
      );
      return { ...page, items: await withItems(page.items) };
    },
  };
}
