import { sql, type Kysely } from 'kysely';
import { up as lockFunctionUp } from './2026-11-25T10-00-usage-lock';
import { up as writeFunctionsUp } from './2026-11-26T10-00-usage-write-functions';

/* eslint-disable @typescript-eslint/no-explicit-any */
/**
 * `usage.recorded` at most once a window per balance (`USAGE_EVENT_WINDOW_SECONDS`, docs/usage.md).
 *
 * Before, every group-commit batch that used units wrote a `usage.recorded` event: with many
 * customers each using a little, an outbox row (and a delivery per subscribed endpoint) per
 * operation, the outbox growing as fast as the ledger. Now what a balance uses within a window of
 * its last report waits on the balance row, which every write updates anyway:
 * - `unreported`, `unreported_ops`: the units and operations not yet told;
 * - `reported_at`: when the balance last told its usage;
 * - `report_due_at`: when what waits is to be told at the latest (null: nothing waits). The sweep
 *   finds due balances by `usage_balances_report_due`; only a write that starts or ends a wait
 *   changes that column, so the writes between stay HOT updates (no index entry).
 *
 * `usage_lock_balances` returns the new columns (replaced: a function's result type cannot be altered
 * in place; the previous version reads it with `select *` and ignores them). `usage_write_batch`
 * gains four balance arguments as a new overload: the previous one stays, so instances of the
 * previous version keep writing during a rolling upgrade (docs/deploy.md). They write events per
 * batch as before and leave the new columns alone, so no unit is told twice. A later migration
 * drops the old overload.
 *
 * The partial index is built without CONCURRENTLY (migrations run in a transaction): it holds up
 * writes to usage_balances while it reads the table once, and holds no entries yet.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table usage_balances add column unreported numeric(20, 0) not null default 0,
    add column unreported_ops integer not null default 0, add column reported_at timestamptz,
    add column report_due_at timestamptz`.execute(db);
  await sql`create index usage_balances_report_due on usage_balances (report_due_at) where report_due_at is not null`.execute(db);

  await sql`drop function usage_lock_balances(uuid[], boolean[], text[], uuid[])`.execute(db);
  await sql`create function usage_lock_balances(p_org uuid[], p_test boolean[], p_owner text[], p_meter uuid[])
    returns table (id uuid, organisation_id uuid, is_test boolean, owner text, meter_id uuid, period_start timestamptz,
      period_end timestamptz, granted numeric, used numeric, reserved numeric, cap numeric, limited boolean,
      closed_at timestamptz, created_at timestamptz, updated_at timestamptz, unreported numeric, unreported_ops integer,
      reported_at timestamptz, report_due_at timestamptz, grants json)
    language plpgsql volatile as $$
    #variable_conflict use_column
    declare
      locked uuid[] := '{}';
      r record;
    begin
      for r in
        select b.id as bid from unnest(p_org, p_test, p_owner, p_meter) as k (o, t, w, m)
        join usage_balances b on b.organisation_id = k.o and b.is_test = k.t and b.owner = k.w and b.meter_id = k.m
          and b.closed_at is null
        order by b.id
        for update of b
      loop
        locked := locked || r.bid;
      end loop;
      return query
        select b.id, b.organisation_id, b.is_test, b.owner, b.meter_id, b.period_start, b.period_end, b.granted, b.used,
          b.reserved, b.cap, b.limited, b.closed_at, b.created_at, b.updated_at, b.unreported, b.unreported_ops, b.reported_at,
          b.report_due_at,
          case when b.limited then (
            select json_agg(json_build_object('id', g.id, 'balance_id', g.balance_id, 'amount', g.amount::text,
              'drawn', g.drawn::text, 'expired', g.expired::text, 'priority', g.priority, 'expires_at', g.expires_at,
              'source', g.source, 'created_at', g.created_at))
            from credit_grants g where g.balance_id = b.id and g.drawn + g.expired < g.amount) end
        from usage_balances b where b.id = any(locked);
    end $$`.execute(db);

  await sql`create function usage_write_batch(
      b_id uuid[], b_granted numeric[], b_used numeric[], b_reserved numeric[], b_cap numeric[], b_limited boolean[],
      b_closed_at timestamptz[], b_period_end timestamptz[], b_updated_at timestamptz[], b_unreported numeric[],
      b_unreported_ops integer[], b_reported_at timestamptz[], b_report_due_at timestamptz[],
      k_org uuid[], k_test boolean[], k_key text[], k_fingerprint text[], k_answer text[], k_created_at timestamptz[],
      g_id uuid[], g_balance uuid[], g_amount numeric[], g_drawn numeric[], g_expired numeric[], g_priority integer[],
      g_expires_at timestamptz[], g_source text[], g_created_at timestamptz[],
      h_id uuid[], h_balance uuid[], h_org uuid[], h_test boolean[], h_quantity numeric[], h_status text[], h_committed numeric[],
      h_expires_at timestamptz[], h_created_at timestamptz[], h_settled_at timestamptz[],
      e_id uuid[], e_org uuid[], e_test boolean[], e_balance uuid[], e_owner text[], e_meter uuid[], e_kind text[],
      e_quantity numeric[], e_granted numeric[], e_used numeric[], e_reserved numeric[], e_hold uuid[], e_grant uuid[],
      e_key text[], e_created_at timestamptz[],
      o_id uuid[], o_org uuid[], o_test boolean[], o_type text[], o_key uuid[], o_payloads json, o_created_at timestamptz[])
    returns setof webhook_endpoints language plpgsql volatile as $$
    begin
      update usage_balances as b set granted = v.granted, used = v.used, reserved = v.reserved, cap = v.cap,
        limited = v.limited, closed_at = v.closed_at, period_end = v.period_end, updated_at = v.updated_at,
        unreported = v.unreported, unreported_ops = v.unreported_ops, reported_at = v.reported_at, report_due_at = v.report_due_at
      from unnest(b_id, b_granted, b_used, b_reserved, b_cap, b_limited, b_closed_at, b_period_end, b_updated_at, b_unreported,
          b_unreported_ops, b_reported_at, b_report_due_at)
        as v (id, granted, used, reserved, cap, limited, closed_at, period_end, updated_at, unreported, unreported_ops, reported_at,
          report_due_at)
      where b.id = v.id;
      if cardinality(k_key) > 0 then
        insert into usage_keys (organisation_id, is_test, key, fingerprint, answer, created_at)
        select v.o, v.t, v.k, v.f, v.a::jsonb, v.c
        from unnest(k_org, k_test, k_key, k_fingerprint, k_answer, k_created_at) as v (o, t, k, f, a, c);
      end if;
      if cardinality(g_id) > 0 then
        insert into credit_grants (id, balance_id, amount, drawn, expired, priority, expires_at, source, created_at)
        select * from unnest(g_id, g_balance, g_amount, g_drawn, g_expired, g_priority, g_expires_at, g_source, g_created_at)
        on conflict (id) do update set drawn = excluded.drawn, expired = excluded.expired;
      end if;
      if cardinality(h_id) > 0 then
        insert into usage_holds (id, balance_id, organisation_id, is_test, quantity, status, committed, expires_at, created_at, settled_at)
        select * from unnest(h_id, h_balance, h_org, h_test, h_quantity, h_status, h_committed, h_expires_at, h_created_at, h_settled_at)
        on conflict (id) do update set status = excluded.status, committed = excluded.committed, settled_at = excluded.settled_at;
      end if;
      if cardinality(e_id) > 0 then
        insert into usage_ledger (id, organisation_id, is_test, balance_id, owner, meter_id, kind, quantity, granted_delta,
          used_delta, reserved_delta, hold_id, grant_id, idempotency_key, created_at)
        select * from unnest(e_id, e_org, e_test, e_balance, e_owner, e_meter, e_kind, e_quantity, e_granted, e_used, e_reserved,
          e_hold, e_grant, e_key, e_created_at);
      end if;
      if cardinality(o_id) > 0 then
        return query select * from outbox_append(o_id, o_org, o_test, o_type, o_key, o_payloads, o_created_at);
      end if;
    end $$`.execute(db);
}

/** usage_write_batch of migration 2026-11-26T10-00, or (`reports`) of this one: its argument types name it. */
async function dropWriteBatch(db: Kysely<any>, reports = false): Promise<void> {
  const balance = reports
    ? 'uuid[], numeric[], numeric[], numeric[], numeric[], boolean[], timestamptz[], timestamptz[], timestamptz[], numeric[], integer[], timestamptz[], timestamptz[]'
    : 'uuid[], numeric[], numeric[], numeric[], numeric[], boolean[], timestamptz[], timestamptz[], timestamptz[]';
  await sql
    .raw(
      `drop function if exists usage_write_batch(${balance}, uuid[], boolean[], text[], text[], text[], timestamptz[], uuid[], uuid[],
    numeric[], numeric[], numeric[], integer[], timestamptz[], text[], timestamptz[], uuid[], uuid[], uuid[], boolean[], numeric[], text[],
    numeric[], timestamptz[], timestamptz[], timestamptz[], uuid[], uuid[], boolean[], uuid[], text[], uuid[], text[], numeric[], numeric[],
    numeric[], numeric[], uuid[], uuid[], text[], timestamptz[], uuid[], uuid[], boolean[], text[], uuid[], json, timestamptz[])`,
    )
    .execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  // Back to the functions of 2026-11-25T10-00 and 2026-11-26T10-00, then the columns go.
  await dropWriteBatch(db, true);
  await dropWriteBatch(db);
  await sql`drop function if exists usage_lock_balances(uuid[], boolean[], text[], uuid[])`.execute(db);
  await lockFunctionUp(db);
  await sql`drop function if exists outbox_append(uuid[], uuid[], boolean[], text[], uuid[], json, timestamptz[])`.execute(db);
  await writeFunctionsUp(db);
  await sql`drop index if exists usage_balances_report_due`.execute(db);
  await sql`alter table usage_balances drop column unreported, drop column unreported_ops, drop column reported_at,
    drop column report_due_at`.execute(db);
}
