import { sql, type Kysely } from 'kysely';

/**
 * A subscription's line items with ids of their own (issue #20, the catalog's subscription-plan
 * line items): one row per line item of the plan a subscription holds, kept in step with its
 * `line_item_ids` by the subscription repository's save. Rows for every subscription so far.
 */
/* eslint-disable @typescript-eslint/no-explicit-any */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('subscription_line_items')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('organisation_id', 'uuid', (c) => c.notNull().references('organisations.id'))
    .addColumn('is_test', 'boolean', (c) => c.notNull())
    .addColumn('subscription_id', 'uuid', (c) => c.notNull().references('subscriptions.id').onDelete('cascade'))
    .addColumn('line_item_id', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
    .addUniqueConstraint('subscription_line_items_pair', ['subscription_id', 'line_item_id'])
    .execute();
  await sql`
    insert into subscription_line_items (organisation_id, is_test, subscription_id, line_item_id, created_at, updated_at)
    select s.organisation_id, s.is_test, s.id, li.value #>> '{}', s.created_at, s.updated_at
    from subscriptions s, jsonb_array_elements(s.line_item_ids) li
    on conflict do nothing
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('subscription_line_items').execute();
}
