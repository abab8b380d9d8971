import { randomBytes, randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { Tenant } from '@tollgate/core';
import { createTestCore, FakeCipher, FakeScheme } from '@tollgate/core/testing';
import { createTestDatabase, type TestDatabase } from '../src';
import * as perMode from '../src/migrations/2026-11-29T10-00-signing-keys-per-mode';

const kinds: ('pglite' | 'postgres')[] = process.env.TEST_DATABASE_URL ? ['pglite', 'postgres'] : ['pglite'];

/** Polls until `ok()` (a bound on waiting, not a speed assertion). */
async function until(ok: () => Promise<boolean>, what: string, ms = 10_000): Promise<void> {
  for (const end = Date.now() + ms; !(await ok());) {
    if (Date.now() > end) throw new Error(`${what} not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe.each(kinds)('%s: signing keys per mode (migration 2026-11-29T10-00)', (kind) => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase(kind);
  });
  afterAll(async () => {
    await db?.drop();
  });

  /**
   * The signing key the PREVIOUS version (before 2026-11-29T10-00) uses for an organisation: the
   * SQL its repository's `listActive` sent, word for word (no mode), newest first.
   */
  const previousVersionKeys = async (organisationId: string, algorithm: string) =>
    (
      await sql<{
        id: string;
      }>`select * from "signing_keys" where "organisation_id" = ${organisationId} and "algorithm" = ${algorithm} and "retired_at" is null order by "created_at" desc, "id" desc`.execute(
        db.db,
      )
    ).rows.map((r) => r.id);

  /** A key as the previous version stored it (no mode), under the schema before this migration. */
  async function keyStoredBefore(organisationId: string): Promise<{ id: string; secret: Buffer }> {
    await perMode.down(db.db);
    const secret = randomBytes(32);
    const id = randomUUID();
    // Older than anything the test core's clock (2026-01-15) makes.
    await sql`insert into signing_keys (id, organisation_id, algorithm, public_key, secret_ciphertext, created_at)
      values (${id}, ${organisationId}, 'hmac-sha256', '', ${new FakeCipher().seal(secret)}, '2025-06-01T00:00:00Z')`.execute(db.db);
    await perMode.up(db.db);
    return { id, secret };
  }

  async function organisation(name: string): Promise<{ live: Tenant; test: Tenant }> {
    const org = await createTestCore({ uow: db.uow }).apiKeys.ensureOrganisation(`${name}-${kind}`);
    return { live: { organisationId: org.id, isTest: false }, test: { organisationId: org.id, isTest: true } };
  }

  it('keeps every key stored before it as the LIVE key; the test key is made on first use, in a table of its own', async () => {
    const core = createTestCore({ uow: db.uow });
    const { live, test } = await organisation('keys-per-mode');
    const stored = await keyStoredBefore(live.organisationId);

    // Live apps keep verifying with the key they hold.
    expect((await core.signing.current(live)).id).toBe(stored.id);
    const signed = await core.signing.sign(live, 'edit,export');
    expect(new FakeScheme().verify({ secret: stored.secret }, 'edit,export', signed.signature)).toBe(true);
    // Test mode gets a key of its own: its signatures do not verify with the stored (live) key.
    const testKey = await core.signing.current(test);
    expect(testKey).toMatchObject({ organisationId: live.organisationId, isTest: true });
    expect(testKey.id).not.toBe(stored.id);
    const testSigned = await core.signing.sign(test, 'edit,export');
    expect(new FakeScheme().verify({ secret: stored.secret }, 'edit,export', testSigned.signature)).toBe(false);
    // Read back, each key keeps its mode; signing_keys holds only the live key.
    expect(await core.signing.active(live)).toEqual([expect.objectContaining({ id: stored.id, isTest: false })]);
    expect(await core.signing.active(test)).toEqual([expect.objectContaining({ id: testKey.id, isTest: true })]);
    const liveRows = await sql<{ id: string }>`select id from signing_keys where organisation_id = ${live.organisationId}`.execute(db.db);
    expect(liveRows.rows.map((r) => r.id)).toEqual([stored.id]);
    const testRows = await sql<{ id: string }>`select id from test_signing_keys where organisation_id = ${live.organisationId}`.execute(
      db.db,
    );
    expect(testRows.rows.map((r) => r.id)).toEqual([testKey.id]);
  });

  it('never shows a test key to an instance of the previous version (a rolling upgrade): it keeps the live key', async () => {
    const core = createTestCore({ uow: db.uow });
    const { live, test } = await organisation('keys-rolling');
    const stored = await keyStoredBefore(live.organisationId);
    const algorithm = (await core.signing.current(live)).algorithm;
    expect(await previousVersionKeys(live.organisationId, algorithm)).toEqual([stored.id]);

    // A new instance makes the organisation's test key, newer than the live one, then rotates it.
    const testKey = await core.signing.current(test);
    expect(testKey.createdAt.getTime()).toBeGreaterThan((await core.signing.current(live)).createdAt.getTime());
    const rotated = await core.signing.rotate(test);
    expect((await core.signing.active(test)).map((k) => k.id)).toEqual([rotated.id, testKey.id]);

    // The previous version's query still finds the live key first (and only it): it signs live
    // checks with it and serves it as the live public key.
    expect(await previousVersionKeys(live.organisationId, algorithm)).toEqual([stored.id]);
    expect((await core.signing.current(live)).id).toBe(stored.id);
  });

  it('goes down and up again: down drops the test keys, the live key stays the live key', async () => {
    const core = createTestCore({ uow: db.uow });
    const { live, test } = await organisation('keys-round-trip');
    const stored = await keyStoredBefore(live.organisationId);
    const testKey = await core.signing.current(test);

    await perMode.down(db.db);
    const tables = await sql<{ n: number }>`select count(*)::int as n from information_schema.tables
      where table_schema = 'public' and table_name = 'test_signing_keys'`.execute(db.db);
    expect(tables.rows[0].n).toBe(0);
    const left = await sql<{ id: string }>`select id from signing_keys where organisation_id = ${live.organisationId}`.execute(db.db);
    expect(left.rows.map((r) => r.id)).toEqual([stored.id]);

    await perMode.up(db.db);
    expect((await core.signing.current(live)).id).toBe(stored.id);
    // The test key went with its table: a new one is made on first use.
    const again = await core.signing.current(test);
    expect(again.isTest).toBe(true);
    expect([stored.id, testKey.id]).not.toContain(again.id);
    expect((await core.signing.active(live)).map((k) => k.id)).toEqual([stored.id]);
  });

  it("tells every instance through the change feed that an organisation's test key was rotated", async () => {
    const a = createTestCore({ uow: db.uow });
    const b = createTestCore({ uow: db.uow, changes: db.changeFeed() });
    await b.listen();
    try {
      const { test } = await organisation('keys-feed');
      // B holds the test key (twice asked: the second answer comes from its memory).
      const held = await b.signing.current(test);
      expect((await b.signing.current(test)).id).toBe(held.id);
      const rotated = await a.signing.rotate(test);
      await until(async () => (await b.signing.current(test)).id === rotated.id, "B's test key rotated");
    } finally {
      await b.stopListening();
    }
  });
});
