import { sql, type Kysely } from 'kysely';

/**
 * Aggregated Stripe meter events (#19): the relay no longer sends one event per ledger entry (about
 * 160 a second, where usage is recorded at thousands a second and Stripe takes 1 000). A planning
 * pass sums the entries after the cursor of each balance (customer, meter, period) into one row of
 * `usage_meter_sends`, in the transaction that moves the cursor past them; sending passes send those
 * rows (the row's id is the event's identifier) and delete each in the transaction after Stripe took
 * it. `value` is the sum in the meter's units as exact decimal text (numeric without a scale).
 * A refusal for good now names the send: `usage_meter_event_failures.entry_id` becomes `send_id`
 * (rows kept from before name their entry, which was the identifier then), `entry_created_at`
 * becomes the event's `event_at`, `entries` says how many ledger entries the value summed, and
 * `value` loses its scale of 0, which rounded a decimal meter's value.
 */
/* eslint-disable @typescript-eslint/no-explicit-any */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create table usage_meter_sends (
    id uuid not null,
    provider text not null,
    organisation_id uuid not null,
    is_test boolean not null,
    owner text not null,
    meter_slug text not null,
    customer_id text not null,
    value numeric not null check (value > 0),
    event_at timestamptz not null,
    first_entry_at timestamptz not null,
    entries integer not null check (entries > 0),
    created_at timestamptz not null,
    primary key (provider, id)
  )`.execute(db);
  await sql`create index usage_meter_sends_first on usage_meter_sends (provider, first_entry_at, id)`.execute(db);
  await sql`alter table usage_meter_event_failures rename column entry_id to send_id`.execute(db);
  await sql`alter table usage_meter_event_failures rename column entry_created_at to event_at`.execute(db);
  await sql`alter table usage_meter_event_failures add column entries integer not null default 1`.execute(db);
  await sql`alter table usage_meter_event_failures alter column value type numeric`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table usage_meter_event_failures alter column value type numeric(20, 0)`.execute(db);
  await sql`alter table usage_meter_event_failures drop column if exists entries`.execute(db);
  await sql`alter table usage_meter_event_failures rename column event_at to entry_created_at`.execute(db);
  await sql`alter table usage_meter_event_failures rename column send_id to entry_id`.execute(db);
  await sql`drop table if exists usage_meter_sends`.execute(db);
}
