import { sql, type Kysely } from 'kysely';

/* eslint-disable @typescript-eslint/no-explicit-any */
/**
 * The group commit's lock in one round trip (docs/scaling.md): `usage_lock_balances` locks the open
 * balances of a batch (keys as parallel arrays) in the order of their ids, then reads them with the
 * live credit grants of the limited ones. The read is a statement of its own inside the function, so
 * under READ COMMITTED it takes a snapshot after the locks were granted: it sees what the previous
 * holder of a lock committed (its grants' draws, a grant it added), exactly as a second statement
 * sent by the client would, one round trip sooner. Only balances this call locked are returned (a
 * balance whose period closed while it waited is left out, and the caller creates the next one).
 * Grant quantities travel as text (exact), times as ISO strings.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create function usage_lock_balances(p_org uuid[], p_test boolean[], p_owner text[], p_meter uuid[])
    returns table (id uuid, organisation_id uuid, is_test boolean, owner text, meter_id uuid, period_start timestamptz,
      period_end timestamptz, granted numeric, used numeric, reserved numeric, cap numeric, limited boolean,
      closed_at timestamptz, created_at timestamptz, updated_at timestamptz, grants json)
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
          b.reserved, b.cap, b.limited, b.closed_at, b.created_at, b.updated_at,
          case when b.limited then (
            select json_agg(json_build_object('id', g.id, 'balance_id', g.balance_id, 'amount', g.amount::text,
              'drawn', g.drawn::text, 'expired', g.expired::text, 'priority', g.priority, 'expires_at', g.expires_at,
              'source', g.source, 'created_at', g.created_at))
            from credit_grants g where g.balance_id = b.id and g.drawn + g.expired < g.amount) end
        from usage_balances b where b.id = any(locked);
    end $$`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop function if exists usage_lock_balances(uuid[], boolean[], text[], uuid[])`.execute(db);
}
