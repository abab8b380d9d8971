import { sql, type Kysely } from 'kysely';

/* eslint-disable @typescript-eslint/no-explicit-any */
/**
 * Ad hoc evaluation licenses end by a sweep (`Sweeps.endedEvaluations`): it asks for those whose end
 * has come, earliest first (`LicenseRepository.listEndedEvaluations`). Only EVALUATION licenses are
 * in this index (a few of the licenses, and none once swept: the sweep writes them CANCELED), so the
 * pass that finds nothing to do is one probe, however many licenses there are. `id` orders ends that
 * tie, so the sweep's order is the index's and the `limit` needs no sort.
 *
 * Evaluations that had ended before the upgrade end here, quietly: the sweep would otherwise send a
 * `license.cancelled` webhook, stamped now, for every evaluation that ever ended (500 a pass, a pass
 * a second). Same predicate and same columns as the sweep (`status`, `cancel_at_period_end`,
 * `updated_at`; the end is kept), and no outbox event. The license trigger still NOTIFYs each
 * distinct product and grantee (`l|product|grantee`, once a transaction each, sent at commit): other
 * instances reload those grantees as for any bulk license write (docs/deploy.md).
 *
 * The index is built without CONCURRENTLY (kysely's migrator runs the pending migrations in one
 * transaction): that holds up every write to `licenses` while it reads the table once, until the
 * migrations commit. With a large `licenses` table, build it beforehand with
 * `create index concurrently if not exists licenses_evaluation_end on licenses (end_time, id) where
 * status = 'EVALUATION'` (docs/deploy.md): a valid index of that name is then kept and no lock is
 * taken (`create index if not exists` would still lock the table). One left invalid by a failed
 * concurrent build is refused by name, rather than kept unused (every sweep pass would then read the
 * whole table).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`update licenses set status = 'CANCELED', cancel_at_period_end = false, updated_at = now()
    where status = 'EVALUATION' and subscription_id is null and end_time <= now()`.execute(db);
  const { rows } = await sql<{ valid: boolean }>`select i.indisvalid as valid from pg_index i
    where i.indexrelid = to_regclass('licenses_evaluation_end')`.execute(db);
  if (rows.length === 0) {
    await sql`create index if not exists licenses_evaluation_end on licenses (end_time, id) where status = 'EVALUATION'`.execute(db);
  } else if (!rows[0].valid) {
    throw new Error(
      'the index licenses_evaluation_end exists but is invalid (a CREATE INDEX CONCURRENTLY that failed or is still running): ' +
        'drop it (drop index concurrently licenses_evaluation_end) and build it again, or let this migration build it',
    );
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  // The evaluations ended by `up` stay CANCELED: they had ended, and the sweep of a later version would end them anyway.
  await sql`drop index if exists licenses_evaluation_end`.execute(db);
}
