import { sql, type Kysely } from 'kysely';

/**
 * Signing keys belong to an organisation AND a mode (security audit). One key per organisation
 * signed test-mode and live-mode answers alike, and neither signed text names the mode, so a
 * test-mode API key (shared with CI and developers) could make a test subscription, ask a check
 * and get a signature the vendor's live app accepted. Now a test-mode request is signed with the
 * organisation's test key and a live one with its live key.
 *
 * Every key stored so far becomes a LIVE key (`default false`): live apps keep verifying with the
 * public key they hold. Test keys are created on first use, as keys always were. The default also
 * keeps an instance of the previous version (a rolling upgrade) writing live keys. The lookup index
 * gains the mode.
 *
 * Down deletes the test keys first: without the column they would mix with the live ones, and the
 * newest (perhaps a test key) would sign live answers.
 */
/* eslint-disable @typescript-eslint/no-explicit-any */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table signing_keys add column is_test boolean not null default false`.execute(db);
  await sql`drop index signing_keys_organisation`.execute(db);
  await sql`create index signing_keys_tenant on signing_keys (organisation_id, is_test, algorithm, created_at)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`delete from signing_keys where is_test`.execute(db);
  await sql`drop index signing_keys_tenant`.execute(db);
  await sql`create index signing_keys_organisation on signing_keys (organisation_id, algorithm, created_at)`.execute(db);
  await sql`alter table signing_keys drop column is_test`.execute(db);
}
