import { sql, type Kysely } from 'kysely';

/**
 * Usage, meters and credits (DESIGN section 14). Quantities are numeric(20,0): whole units, exact,
 * read as text and held as bigint. The ledger is append-only and partitioned by month of
 * `created_at` (a default partition catches what no month holds yet; the usage sweep creates
 * months ahead and drops expired ones). Idempotency keys live beside it, unique per organisation
 * and mode: a partitioned table's unique index would have to include the month.
 */
/* eslint-disable @typescript-eslint/no-explicit-any */
export async function up(db: Kysely<any>): Promise<void> {
  // The catalog's meters gain an owner: a usage meter is the meter a metered line item names.
  await sql`alter table meters add column organisation_id uuid references organisations (id), add column is_test boolean not null default false, add column unit_label text`.execute(
    db,
  );
  await sql`create unique index meters_tenant_slug on meters (organisation_id, is_test, slug) where organisation_id is not null`.execute(
    db,
  );
  await sql`create index meters_tenant on meters (organisation_id, is_test, created_at, id) where organisation_id is not null`.execute(db);

  await sql`create table usage_balances (
    id uuid primary key,
    organisation_id uuid not null references organisations (id),
    is_test boolean not null,
    owner text not null,
    meter_id uuid not null references meters (id),
    period_start timestamptz not null,
    period_end timestamptz,
    granted numeric(20, 0) not null,
    used numeric(20, 0) not null,
    reserved numeric(20, 0) not null,
    cap numeric(20, 0),
    limited boolean not null,
    closed_at timestamptz,
    created_at timestamptz not null,
    updated_at timestamptz not null,
    check (granted >= 0 and used >= 0 and reserved >= 0)
  )`.execute(db);
  // One open balance per (owner, meter): concurrent first uses on two instances meet here.
  await sql`create unique index usage_balances_open on usage_balances (organisation_id, is_test, owner, meter_id) where closed_at is null`.execute(
    db,
  );

  await sql`create table credit_grants (
    id uuid primary key,
    balance_id uuid not null references usage_balances (id),
    amount numeric(20, 0) not null,
    drawn numeric(20, 0) not null,
    expired numeric(20, 0) not null,
    priority integer not null,
    expires_at timestamptz,
    source text not null,
    created_at timestamptz not null,
    check (amount > 0 and drawn >= 0 and expired >= 0 and drawn + expired <= amount)
  )`.execute(db);
  await sql`create index credit_grants_live on credit_grants (balance_id) where drawn + expired < amount`.execute(db);

  await sql`create table usage_holds (
    id uuid primary key,
    balance_id uuid not null references usage_balances (id),
    organisation_id uuid not null references organisations (id),
    is_test boolean not null,
    quantity numeric(20, 0) not null,
    status text not null,
    committed numeric(20, 0),
    expires_at timestamptz not null,
    created_at timestamptz not null,
    settled_at timestamptz
  )`.execute(db);
  await sql`create index usage_holds_due on usage_holds (expires_at) where status = 'held'`.execute(db);
  await sql`create index usage_holds_open on usage_holds (balance_id) where status = 'held'`.execute(db);

  await sql`create table usage_ledger (
    id uuid not null,
    organisation_id uuid not null,
    is_test boolean not null,
    balance_id uuid not null,
    owner text not null,
    meter_id uuid not null,
    kind text not null,
    quantity numeric(20, 0) not null,
    granted_delta numeric(21, 0) not null,
    used_delta numeric(21, 0) not null,
    reserved_delta numeric(21, 0) not null,
    hold_id uuid,
    grant_id uuid,
    idempotency_key text,
    created_at timestamptz not null,
    primary key (id, created_at)
  ) partition by range (created_at)`.execute(db);
  await sql`create table usage_ledger_default partition of usage_ledger default`.execute(db);
  await sql`create index usage_ledger_balance on usage_ledger (balance_id)`.execute(db);
  await sql`create index usage_ledger_records on usage_ledger (organisation_id, is_test, created_at, id) where kind in ('record', 'consume', 'commit')`.execute(
    db,
  );

  await sql`create table usage_keys (
    organisation_id uuid not null references organisations (id),
    is_test boolean not null,
    key text not null,
    fingerprint text not null,
    answer jsonb not null,
    created_at timestamptz not null,
    primary key (organisation_id, is_test, key)
  )`.execute(db);
  await sql`create index usage_keys_created on usage_keys (created_at)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const t of ['usage_keys', 'usage_ledger', 'usage_holds', 'credit_grants', 'usage_balances'])
    await sql`drop table if exists ${sql.table(t)}`.execute(db);
  await sql`drop index if exists meters_tenant_slug`.execute(db);
  await sql`drop index if exists meters_tenant`.execute(db);
  await sql`alter table meters drop column if exists organisation_id, drop column if exists is_test, drop column if exists unit_label`.execute(
    db,
  );
}
