import { sql, type Kysely } from 'kysely';

/* eslint-disable @typescript-eslint/no-explicit-any */
/**
 * A plan's interval is held by the open checkout sessions of the last day
 * (`checkoutSessions.hasOpenForPlan`, read on every catalog write of a plan's pricing). Sessions are
 * never deleted and one is made per checkout link asked for, so without an index that read scans
 * the whole table; open ones are few and recent, so a partial index on their age keeps it to them.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create index if not exists checkout_sessions_open_recent on checkout_sessions (created_at) where status = 'open'`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index if exists checkout_sessions_open_recent`.execute(db);
}
