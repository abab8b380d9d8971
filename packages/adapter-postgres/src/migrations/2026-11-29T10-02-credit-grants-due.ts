import { sql, type Kysely } from 'kysely';

/* eslint-disable @typescript-eslint/no-explicit-any */
/**
 * Credit lapses at its expiry even when nothing else touches its balance: the usage sweep asks for
 * balances with live grants past their expiry (`UsageRepository.balancesWithDueGrants`) and settles
 * them as it settles due holds, so balance reads and the signed entitlements stop showing expired
 * credit. Grants without an expiry (most, and every grant of the benchmark) are not in the index;
 * a draw leaves `expires_at` and, until it empties the grant, `live` as they are, so it stays a HOT
 * update.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create index if not exists credit_grants_due on credit_grants (expires_at) where live and expires_at is not null`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index if exists credit_grants_due`.execute(db);
}
