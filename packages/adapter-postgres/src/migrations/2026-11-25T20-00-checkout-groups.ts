import type { Kysely } from 'kysely';

/* eslint-disable @typescript-eslint/no-explicit-any */
/**
 * A checkout (and a cart item) may be bought for a group: the seats of the subscription it makes go
 * to the group's members when it is paid. The group is kept by id, without a foreign key (a
 * subscription's group has no row of its own when it was made before groups existed); a deleted
 * group leaves the purchase buying for nobody (every seat starts free).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('checkout_sessions').addColumn('group_id', 'uuid').execute();
  await db.schema.alterTable('cart_items').addColumn('group_id', 'uuid').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('cart_items').dropColumn('group_id').execute();
  await db.schema.alterTable('checkout_sessions').dropColumn('group_id').execute();
}
