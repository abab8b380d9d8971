import { sql, type Kysely } from 'kysely';

/**
 * Invalidations for the per-instance caches (DESIGN section 11): every change to what the check,
 * authentication or signing reads sends a NOTIFY on `tollgate_cache` from inside its transaction,
 * which PostgreSQL delivers to every listening instance only when the transaction commits. Triggers,
 * so that no write path (nor a manual SQL fix) can forget one.
 */
/* eslint-disable @typescript-eslint/no-explicit-any */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create or replace function tollgate_notify_license() returns trigger language plpgsql as $$
    begin
      if tg_op in ('UPDATE', 'DELETE') and old.grantee_id is not null then
        perform pg_notify('tollgate_cache', 'l|' || old.product_id || '|' || old.grantee_id);
      end if;
      if tg_op in ('INSERT', 'UPDATE') and new.grantee_id is not null then
        perform pg_notify('tollgate_cache', 'l|' || new.product_id || '|' || new.grantee_id);
      end if;
      return null;
    end $$`.execute(db);
  await sql`
    create or replace function tollgate_notify_product() returns trigger language plpgsql as $$
    declare
      product uuid;
    begin
      if tg_table_name = 'products' then
        product := coalesce(new.id, old.id);
      elsif tg_table_name = 'plan_capabilities' then
        select p.product_id into product from plans p where p.id = coalesce(new.plan_id, old.plan_id);
      else
        product := coalesce(new.product_id, old.product_id);
      end if;
      if product is not null then
        perform pg_notify('tollgate_cache', 'p|' || product);
      end if;
      return null;
    end $$`.execute(db);
  await sql`
    create or replace function tollgate_notify_key() returns trigger language plpgsql as $$
    begin
      if tg_table_name = 'api_keys' then
        perform pg_notify('tollgate_cache', 'k|' || old.key_hash);
      else
        perform pg_notify('tollgate_cache', 's|' || coalesce(new.organisation_id, old.organisation_id));
      end if;
      return null;
    end $$`.execute(db);
  await sql`create trigger licenses_cache after insert or update or delete on licenses for each row execute function tollgate_notify_license()`.execute(
    db,
  );
  for (const table of ['products', 'plans', 'plan_capabilities', 'capabilities']) {
    await sql`create trigger ${sql.raw(`${table}_cache`)} after insert or update or delete on ${sql.table(table)} for each row execute function tollgate_notify_product()`.execute(
      db,
    );
  }
  await sql`create trigger api_keys_cache after update or delete on api_keys for each row execute function tollgate_notify_key()`.execute(
    db,
  );
  await sql`create trigger signing_keys_cache after insert or update or delete on signing_keys for each row execute function tollgate_notify_key()`.execute(
    db,
  );
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['licenses', 'products', 'plans', 'plan_capabilities', 'capabilities', 'api_keys', 'signing_keys']) {
    await sql`drop trigger if exists ${sql.raw(`${table}_cache`)} on ${sql.table(table)}`.execute(db);
  }
  await sql`drop function if exists tollgate_notify_license()`.execute(db);
  await sql`drop function if exists tollgate_notify_product()`.execute(db);
  await sql`drop function if exists tollgate_notify_key()`.execute(db);
}
