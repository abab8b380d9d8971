import { sql, type Kysely } from 'kysely';

/**
 * Durable Stripe meter events (#19): the ledger is the outbox. Each ledger row gains `tx`, the id of
 * the transaction that wrote it (a column default: the usage write path names no new column and
 * runs no new statement), and a BRIN index on it (a few bytes per block range: cheap to keep on an
 * append-only table). The relay's cursor is a (transaction id, entry id) position per provider:
 * it reads only entries of transactions older than the oldest one still running
 * (`pg_snapshot_xmin`), so no entry can commit behind it later, whatever the clocks of the
 * instances say. Rows written before this migration have no `tx` and are never relayed (the
 * previous best-effort path sent them); the cursor starts at this migration's transaction.
 * Entries the provider refused for good are kept in `usage_meter_event_failures`.
 */
/* eslint-disable @typescript-eslint/no-explicit-any */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table usage_ledger add column tx bigint`.execute(db);
  await sql`alter table usage_ledger alter column tx set default (pg_current_xact_id()::text)::bigint`.execute(db);
  await sql`create index usage_ledger_tx on usage_ledger using brin (tx)`.execute(db);
  await sql`create table usage_meter_relay (
    name text primary key,
    tx bigint not null,
    entry_id uuid,
    attempts integer not null default 0,
    next_attempt_at timestamptz,
    last_error text,
    updated_at timestamptz
  )`.execute(db);
  await sql`insert into usage_meter_relay (name, tx) values ('stripe', (pg_current_xact_id()::text)::bigint)`.execute(db);
  await sql`create table usage_meter_event_failures (
    entry_id uuid not null,
    provider text not null,
    organisation_id uuid not null,
    is_test boolean not null,
    owner text not null,
    meter_slug text not null,
    customer_id text not null,
    value numeric(20, 0) not null,
    entry_created_at timestamptz not null,
    error text not null,
    failed_at timestamptz not null,
    primary key (provider, entry_id)
  )`.execute(db);
  await sql`create index usage_meter_event_failures_failed on usage_meter_event_failures (failed_at)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table if exists usage_meter_event_failures`.execute(db);
  await sql`drop table if exists usage_meter_relay`.execute(db);
  await sql`drop index if exists usage_ledger_tx`.execute(db);
  await sql`alter table usage_ledger drop column if exists tx`.execute(db);
}
