import { sql, type Kysely } from 'kysely';

/* eslint-disable @typescript-eslint/no-explicit-any */
/** The catalog's receipts are a tenant's completed checkout sessions, read a page at a time in (created_at, id) order. */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create index checkout_sessions_receipts on checkout_sessions (organisation_id, is_test, created_at, id) where status = 'completed'`.execute(
    db,
  );
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index if exists checkout_sessions_receipts`.execute(db);
}
