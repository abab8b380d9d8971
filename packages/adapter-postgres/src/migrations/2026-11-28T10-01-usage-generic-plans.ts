import { sql, type Kysely } from 'kysely';

/* eslint-disable @typescript-eslint/no-explicit-any */
/**
 * The group commit's functions plan their statements once.
 *
 * PL/pgSQL caches each statement's plan, but under the default `plan_cache_mode = auto` it plans a
 * statement with the call's parameter values (a custom plan) five times, then keeps a generic plan
 * only if that looks no dearer. Our statements take arrays (`unnest` of one argument per column)
 * whose length the generic plan cannot know, so PostgreSQL kept planning custom plans on every
 * call: measured with `perf` on the bench's hot consume, planning (`GetCachedPlan`) was about a
 * fifth of PostgreSQL's CPU.
 *
 * The statements in these functions go by primary key or a unique index (`b.id = v.id`,
 * `id = any(...)`, the open balance's four columns), by a grant's balance (the partial index
 * `credit_grants_live`), or insert from `unnest`; `outbox_append`'s endpoint read goes by the
 * tenant's index. So the generic plan (which guesses 10 array elements) is the plan the custom one
 * finds anyway: nested loops over index scans (a reviewer read every generic plan with EXPLAIN).
 * `force_generic_plan` on the functions themselves leaves every other statement of the session on
 * the default. Every overload of each function is altered, including the previous
 * `usage_write_batch` that instances of the previous version call during a rolling upgrade.
 *
 * A later migration that recreates one of these functions (`create or replace` too) drops the
 * setting: give the new definition `set plan_cache_mode = force_generic_plan`.
 * `usage-lock.server.test.ts` fails for an overload without it.
 */
const FUNCTIONS = ['usage_lock_balances', 'usage_write_batch', 'outbox_append'];

async function setEach(db: Kysely<any>, clause: string): Promise<void> {
  await sql`do $$ declare f regprocedure; begin
      for f in select p.oid::regprocedure from pg_proc p join pg_namespace n on n.oid = p.pronamespace
        where n.nspname = current_schema() and p.proname = any(${sql.lit(`{${FUNCTIONS.join(',')}}`)}::text[]) loop
        execute format('alter function %s ${sql.raw(clause)}', f);
      end loop;
    end $$`.execute(db);
}

export async function up(db: Kysely<any>): Promise<void> {
  await setEach(db, 'set plan_cache_mode = force_generic_plan');
}

export async function down(db: Kysely<any>): Promise<void> {
  await setEach(db, 'reset plan_cache_mode');
}
