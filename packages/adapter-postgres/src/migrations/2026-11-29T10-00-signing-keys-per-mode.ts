import { sql, type Kysely } from 'kysely';

/**
 * Signing keys belong to an organisation AND a mode (security audit). One key per organisation
 * signed test-mode and live-mode answers alike, and neither signed text names the mode, so a
 * test-mode API key (shared with CI and developers) could make a test subscription, ask a check
 * and get a signature the vendor's live app accepted. Now a test-mode request is signed with the
 * organisation's test key and a live one with its live key.
 *
 * Test keys live in a table of their own, `test_signing_keys` (the columns, keys, index and
 * change-feed trigger of `signing_keys`); `signing_keys` keeps only live keys, exactly as the
 * previous version reads it. Every key stored so far is therefore a LIVE key: live apps keep
 * verifying with the public key they hold. And an instance of the previous version (a rolling
 * upgrade, or code rolled back without `down`) never sees a test key: its query (organisation,
 * algorithm, not retired, newest first) has no mode, and a test key in `signing_keys`, newer than
 * the live one, would have become its key for LIVE checks and the live public key it serves. It
 * keeps signing live with the live key; test-mode requests it signs still use the live key until
 * it is replaced. Test keys are created on first use, as keys always were. The trigger notifies
 * `s|<organisation>` as for `signing_keys`, so every instance forgets a rotated test key.
 *
 * Down drops the test keys' table: the live keys were never touched.
 */
/* eslint-disable @typescript-eslint/no-explicit-any */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('test_signing_keys')
    .addColumn('id', 'uuid', (c) => c.primaryKey())
    .addColumn('organisation_id', 'uuid', (c) => c.notNull().references('organisations.id'))
    .addColumn('algorithm', 'text', (c) => c.notNull())
    .addColumn('public_key', 'text', (c) => c.notNull())
    .addColumn('secret_ciphertext', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addColumn('retired_at', 'timestamptz')
    .execute();
  await db.schema
    .createIndex('test_signing_keys_organisation')
    .on('test_signing_keys')
    .columns(['organisation_id', 'algorithm', 'created_at'])
    .execute();
  // tollgate_notify_key (migration 2026-11-22T05) sends `s|<organisation>` for any table but api_keys.
  await sql`create trigger test_signing_keys_cache after insert or update or delete on test_signing_keys for each row execute function tollgate_notify_key()`.execute(
    db,
  );
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('test_signing_keys').ifExists().execute();
}
