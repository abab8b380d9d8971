import { sql, type Kysely } from 'kysely';

/* eslint-disable @typescript-eslint/no-explicit-any */
/**
 * Carts (the published catalog API's): an owner's plans bought together, one interval and currency.
 * A deleted plan leaves the carts it was in (it can no longer be bought); an owner with carts is
 * not deleted (the foreign key refuses, 409).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('carts')
    .addColumn('id', 'uuid', (c) => c.primaryKey())
    .addColumn('organisation_id', 'uuid', (c) => c.notNull().references('organisations.id'))
    .addColumn('is_test', 'boolean', (c) => c.notNull())
    .addColumn('customer_id', 'uuid', (c) => c.notNull().references('customers.id'))
    .addColumn('currency', 'text')
    .addColumn('interval', 'text')
    .addColumn('interval_count', 'integer')
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
    .execute();
  await sql`create index carts_tenant on carts (organisation_id, is_test, created_at, id)`.execute(db);
  await db.schema
    .createTable('cart_items')
    .addColumn('id', 'uuid', (c) => c.primaryKey())
    .addColumn('cart_id', 'uuid', (c) => c.notNull().references('carts.id').onDelete('cascade'))
    .addColumn('plan_id', 'uuid', (c) => c.notNull().references('plans.id').onDelete('cascade'))
    .addColumn('grantee_id', 'text')
    .addColumn('metadata', 'jsonb')
    .addColumn('checkout_session_id', 'uuid', (c) => c.references('checkout_sessions.id').onDelete('set null'))
    .addColumn('position', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
    .execute();
  await sql`create index cart_items_cart on cart_items (cart_id, position)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('cart_items').ifExists().execute();
  await db.schema.dropTable('carts').ifExists().execute();
}
