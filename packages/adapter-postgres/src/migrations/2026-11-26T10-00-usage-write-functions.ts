import { sql, type Kysely } from 'kysely';

/* eslint-disable @typescript-eslint/no-explicit-any */
/**
 * The group commit's write and the outbox's append as functions (docs/scaling.md).
 *
 * Sent as statements of their own, both were a large text (a data-modifying CTE per table) that
 * PostgreSQL parsed, analysed and planned on every batch: a quarter of its CPU on the spread consume
 * bench, where a batch holds a dozen operations. A PL/pgSQL function keeps the plans of its
 * statements for the session, so a batch costs one small call statement and the execution.
 *
 * The rows travel as before, a column an array (`unnest`): planned once for any batch (a generic
 * plan), an array parameter is estimated at a few rows, so the balances are updated through their
 * primary key. (JSON rows, `json_to_recordset`, are estimated at 100 whatever they hold, and the
 * generic plan of the update scanned every balance.) Quantities are numeric (exact), sent as text.
 * The events' payloads, JSON themselves, travel as one JSON array (`json_array_elements`, zipped
 * with the other columns by `rows from`), not as text elements of an array escaped one by one.
 *
 * `outbox_append` appends events in the given order and returns the enabled webhook endpoints of
 * their tenants, in creation order. `usage_write_batch` updates the batch's balances (locked
 * already, by `usage_lock_balances`), inserts its idempotency keys (a key taken meanwhile by
 * another writer raises the unique violation the caller retries on), upserts its grants and holds,
 * appends its ledger rows, and appends the batch's events (`outbox_append`, returning what it
 * returns): the events of a batch go with its write, one round trip less. An empty array writes
 * nothing to its table.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create function outbox_append(p_id uuid[], p_org uuid[], p_test boolean[], p_type text[], p_key uuid[], p_payloads json,
      p_created_at timestamptz[])
    returns setof webhook_endpoints language plpgsql volatile as $$
    begin
      insert into outbox_events (id, organisation_id, is_test, type, ordering_key, payload, created_at)
      select v.id, v.o, v.t, v.type, v.k, v.payload::jsonb, v.c
      from rows from (unnest(p_id), unnest(p_org), unnest(p_test), unnest(p_type), unnest(p_key), json_array_elements(p_payloads),
        unnest(p_created_at)) with ordinality as v (id, o, t, type, k, payload, c, n)
      order by v.n;
      return query
        select w.* from webhook_endpoints w
        join (select distinct o, t from unnest(p_org, p_test) as x (o, t)) as x on w.organisation_id = x.o and w.is_test = x.t
        where w.disabled_at is null
        order by w.created_at, w.id;
    end $$`.execute(db);
  await sql`create function usage_write_batch(
      b_id uuid[], b_granted numeric[], b_used numeric[], b_reserved numeric[], b_cap numeric[], b_limited boolean[],
      b_closed_at timestamptz[], b_period_end timestamptz[], b_updated_at timestamptz[],
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
        limited = v.limited, closed_at = v.closed_at, period_end = v.period_end, updated_at = v.updated_at
      from unnest(b_id, b_granted, b_used, b_reserved, b_cap, b_limited, b_closed_at, b_period_end, b_updated_at)
        as v (id, granted, used, reserved, cap, limited, closed_at, period_end, updated_at)
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

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop function if exists usage_write_batch(uuid[], numeric[], numeric[], numeric[], numeric[], boolean[], timestamptz[],
    timestamptz[], timestamptz[], uuid[], boolean[], text[], text[], text[], timestamptz[], uuid[], uuid[], numeric[], numeric[],
    numeric[], integer[], timestamptz[], text[], timestamptz[], uuid[], uuid[], uuid[], boolean[], numeric[], text[], numeric[],
    timestamptz[], timestamptz[], timestamptz[], uuid[], uuid[], boolean[], uuid[], text[], uuid[], text[], numeric[], numeric[],
    numeric[], numeric[], uuid[], uuid[], text[], timestamptz[], uuid[], uuid[], boolean[], text[], uuid[], json, timestamptz[])`.execute(
    db,
  );
  await sql`drop function if exists outbox_append(uuid[], uuid[], boolean[], text[], uuid[], json, timestamptz[])`.execute(db);
}
