import { sql, type Kysely } from 'kysely';

/* eslint-disable @typescript-eslint/no-explicit-any */
/**
 * Whether anything sent to an endpoint succeeded since a moment (`WebhookRepository.succeededSince`,
 * asked when a delivery exhausts its retries, inside its recording transaction) is one probe of
 * this partial index of the successful attempts: over `webhook_attempts_endpoint` it read every
 * failed attempt of the window, thousands for an endpoint failing everything. Only successes are in
 * it, so a failing endpoint's attempts cost it nothing.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create index if not exists webhook_attempts_succeeded on webhook_attempts (endpoint_id, created_at) where response_status between 200 and 299`.execute(
    db,
  );
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index if exists webhook_attempts_succeeded`.execute(db);
}
