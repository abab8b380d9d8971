import { randomBytes, randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { createTestCore, FakeCipher, FakeScheme } from '@tollgate/core/testing';
import { createTestDatabase, type TestDatabase } from '../src';
import * as perMode from '../src/migrations/2026-11-29T10-00-signing-keys-per-mode';

const kinds: ('pglite' | 'postgres')[] = process.env.TEST_DATABASE_URL ? ['pglite', 'postgres'] : ['pglite'];

describe.each(kinds)('%s: signing keys per mode (migration 2026-11-29T10-00)', (kind) => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase(kind);
  });
  afterAll(async () => {
    await db?.drop();
  });

  it('makes every key stored before it the LIVE key; the test key is made on first use; down keeps only the live keys', async () => {
    const core = createTestCore({ uow: db.uow });
    const org = await core.apiKeys.ensureOrganisation(`keys-per-mode-${kind}`);
    const live = { organisationId: org.id, isTest: false };
    const test = { organisationId: org.id, isTest: true };
    // A key as the previous version stored it (no mode), under the schema before this migration.
    await perMode.down(db.db);
    const secret = randomBytes(32);
    const stored = randomUUID();
    await sql`insert into signing_keys (id, organisation_id, algorithm, public_key, secret_ciphertext, created_at)
      values (${stored}, ${org.id}, 'hmac-sha256', '', ${new FakeCipher().seal(secret)}, now())`.execute(db.db);
    await perMode.up(db.db);

    // Live apps keep verifying with the key they hold.
    expect((await core.signing.current(live)).id).toBe(stored);
    const signed = await core.signing.sign(live, 'edit,export');
    expect(new FakeScheme().verify({ secret }, 'edit,export', signed.signature)).toBe(true);
    // Test mode gets a key of its own: its signatures do not verify with the stored (live) key.
    const testKey = await core.signing.current(test);
    expect(testKey).toMatchObject({ organisationId: org.id, isTest: true });
    expect(testKey.id).not.toBe(stored);
    const testSigned = await core.signing.sign(test, 'edit,export');
    expect(new FakeScheme().verify({ secret }, 'edit,export', testSigned.signature)).toBe(false);

    // Down: the test keys go (they would otherwise sign live answers), the live key stays.
    await perMode.down(db.db);
    const left = await sql<{ id: string }>`select id from signing_keys where organisation_id = ${org.id}`.execute(db.db);
    expect(left.rows.map((r) => r.id)).toEqual([stored]);
    await perMode.up(db.db);
  });
});
