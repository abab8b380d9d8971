import { sql, type Kysely } from 'kysely';

/* eslint-disable @typescript-eslint/no-explicit-any */
/**
 * The plans a subscription holds beyond its first (the catalog API's subscription plans added with
 * `PUT /api/subscriptions/:id/items`). The first plan stays on the subscription's row (its
 * subscription plan keeps the subscription's id, as published ids were before), so no row moves;
 * each added plan has its own id, seats and line items. Removed with its subscription.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('subscription_plans')
    .addColumn('id', 'uuid', (c) => c.primaryKey())
    .addColumn('subscription_id', 'uuid', (c) => c.notNull().references('subscriptions.id').onDelete('cascade'))
    .addColumn('plan_id', 'uuid', (c) => c.notNull().references('plans.id'))
    .addColumn('quantity', 'integer', (c) => c.notNull())
    .addColumn('line_item_ids', 'jsonb', (c) => c.notNull())
    .addColumn('position', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
    .addUniqueConstraint('subscription_plans_once', ['subscription_id', 'plan_id'])
    .execute();
  await sql`create index subscription_plans_plan on subscription_plans (plan_id)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('subscription_plans').ifExists().execute();
}
