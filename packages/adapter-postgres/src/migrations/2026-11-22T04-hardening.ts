import { sql, type Kysely } from 'kysely';

/* eslint-disable @typescript-eslint/no-explicit-any */
export async function up(db: Kysely<any>): Promise<void> {
  // Event failures keep a stable code beside their safe message.
  await db.schema.alterTable('events').addColumn('error_code', 'text').execute();
  // A worker's lease on the event it applies (the provider is called outside any transaction).
  await db.schema.alterTable('events').addColumn('locked_until', 'timestamptz').execute();
  // The claim's "no earlier unfinished event of this subscription" probe.
  await sql`create index events_open_by_subscription on events (subscription_id, seq) where status in ('queued', 'pending')`.execute(db);
  // An idempotency key is claimed before its request runs (status null while in flight).
  await db.schema
    .alterTable('idempotency_keys')
    .alterColumn('status', (c) => c.dropNotNull())
    .execute();
  // Keyset pages of a tenant's licenses (streamed lists), whatever the status filter.
  await sql`create index licenses_page on licenses (organisation_id, is_test, created_at, id)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index if exists licenses_page`.execute(db);
  await db.deleteFrom('idempotency_keys').where('status', 'is', null).execute();
  await db.schema
    .alterTable('idempotency_keys')
    .alterColumn('status', (c) => c.setNotNull())
    .execute();
  await sql`drop index if exists events_open_by_subscription`.execute(db);
  await db.schema.alterTable('events').dropColumn('locked_until').dropColumn('error_code').execute();
}
