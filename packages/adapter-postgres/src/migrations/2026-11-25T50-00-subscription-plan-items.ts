import type { Kysely } from 'kysely';

/* eslint-disable @typescript-eslint/no-explicit-any */
/**
 * An added plan's item at the payment provider (Stripe's subscription item id), so the provider's
 * re-sync tells a subscription's items apart by plan and a removal deletes the right item. Null:
 * not known (a sandbox subscription, or a cart's plan whose item was never matched).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('subscription_plans').addColumn('payment_item_id', 'text').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('subscription_plans').dropColumn('payment_item_id').execute();
}
