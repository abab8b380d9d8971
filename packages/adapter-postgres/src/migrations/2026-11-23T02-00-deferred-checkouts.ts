import { sql, type Kysely } from 'kysely';

/**
 * A deferred checkout link (`/checkout/start/<token>`) creates one checkout session, reused while
 * it lasts: the row is keyed by the link's digest, and locking it serialises concurrent follows of
 * one link.
 */
/* eslint-disable @typescript-eslint/no-explicit-any */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('deferred_checkouts')
    .addColumn('link_key', 'text', (c) => c.primaryKey())
    .addColumn('session_id', 'uuid', (c) => c.references('checkout_sessions.id').onDelete('cascade'))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await sql`create index deferred_checkouts_created on deferred_checkouts (created_at)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('deferred_checkouts').ifExists().execute();
}
