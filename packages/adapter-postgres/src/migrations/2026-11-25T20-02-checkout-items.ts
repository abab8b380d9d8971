import { sql, type Kysely } from 'kysely';

/* eslint-disable @typescript-eslint/no-explicit-any */
/**
 * A checkout of several plans (a cart's): the plans beside the session's own, each with its seats
 * and who gets them, added to the one subscription the paid checkout makes. Empty for every
 * checkout before it.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('checkout_sessions')
    .addColumn('extra_items', 'jsonb', (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('checkout_sessions').dropColumn('extra_items').execute();
}
