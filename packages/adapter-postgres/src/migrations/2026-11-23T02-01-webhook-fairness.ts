import { sql, type Kysely } from 'kysely';

/**
 * Fair webhook delivery: each claim takes the organisation served longest ago, then its endpoint
 * served longest ago (turns from one sequence, so ties cannot happen), and counts live leases per
 * endpoint and per organisation so one tenant cannot hold every delivery slot.
 */
/* eslint-disable @typescript-eslint/no-explicit-any */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create sequence webhook_turns_seq`.execute(db);
  await db.schema
    .alterTable('webhook_endpoints')
    .addColumn('served_turn', 'bigint', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema
    .createTable('webhook_turns')
    .addColumn('organisation_id', 'uuid', (c) => c.primaryKey())
    .addColumn('served_turn', 'bigint', (c) => c.notNull())
    .execute();
  // Live leases per endpoint and per organisation (the claim's concurrency caps).
  await sql`create index webhook_deliveries_leased on webhook_deliveries (organisation_id, endpoint_id, locked_until) where status = 'pending' and locked_until is not null`.execute(
    db,
  );
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index if exists webhook_deliveries_leased`.execute(db);
  await db.schema.dropTable('webhook_turns').ifExists().execute();
  await db.schema.alterTable('webhook_endpoints').dropColumn('served_turn').execute();
  await sql`drop sequence if exists webhook_turns_seq`.execute(db);
}
