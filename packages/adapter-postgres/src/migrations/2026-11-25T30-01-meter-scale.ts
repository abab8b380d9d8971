import { sql, type Kysely } from 'kysely';

/**
 * Decimal meters (#19): a usage meter's `scale` is how many decimal places its quantities may have
 * (0: whole units, the default; at most 6). Counters, grants, holds and the ledger keep integers in
 * the meter's smallest step (units x 10^scale), so nothing else changes in the tables.
 */
/* eslint-disable @typescript-eslint/no-explicit-any */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table meters add column scale smallint not null default 0 check (scale between 0 and 6)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table meters drop column if exists scale`.execute(db);
}
