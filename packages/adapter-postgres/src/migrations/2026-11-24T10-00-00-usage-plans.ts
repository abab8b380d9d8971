import { sql, type Kysely } from 'kysely';

/**
 * Usage plans and period close (#19). A metered line item carries its usage terms (allowance per
 * period, cap, minimum, rollover) as one JSON value: they are read and written with the line item,
 * never queried apart. A closed period leaves one final usage record, unique per (owner, meter,
 * period end): the key that makes a close happen once even when two sweeps race for it.
 */
/* eslint-disable @typescript-eslint/no-explicit-any */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table line_items add column usage_terms jsonb`.execute(db);
  await sql`create table usage_closes (
    id uuid primary key,
    organisation_id uuid not null references organisations (id),
    is_test boolean not null,
    owner text not null,
    meter_id uuid not null references meters (id),
    balance_id uuid not null references usage_balances (id),
    subscription_id uuid,
    period_start timestamptz not null,
    period_end timestamptz not null,
    final_usage numeric(20, 0) not null,
    billed_units numeric(20, 0) not null,
    currency text,
    amount_minor numeric(20, 0) not null,
    created_at timestamptz not null,
    unique (organisation_id, is_test, owner, meter_id, period_end)
  )`.execute(db);
  await sql`create index usage_closes_records on usage_closes (organisation_id, is_test, created_at, id)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table if exists usage_closes`.execute(db);
  await sql`alter table line_items drop column if exists usage_terms`.execute(db);
}
