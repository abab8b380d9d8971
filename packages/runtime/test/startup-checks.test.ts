import { createTestDatabase, type TestDatabase } from '@tollgate/adapter-postgres';
import { ConfigError } from '../src/config';
import { createRuntime } from '../src/container';
import { startFailure } from '../src/start-failure';
import { testConfig } from '../src/testing';

// An instance that would start "ready" and then fail every check is refused at start, with one
// line naming the variable (the ops audit, twelfth session).
let db: TestDatabase;
const silent = { info: () => undefined, error: () => undefined };

beforeAll(async () => {
  db = await createTestDatabase('pglite');
  const first = await createRuntime(testConfig(), { database: db, logger: silent });
  const org = await first.core.apiKeys.ensureOrganisation('startup-checks');
  // A signing key sealed with the first secret.
  await first.core.signing.publicKey({ organisationId: org.id, isTest: false });
  await first.core.stopListening();
});
afterAll(() => db?.drop());

async function refusal(config: Parameters<typeof testConfig>[0]): Promise<unknown> {
  return createRuntime(testConfig(config), { database: db, logger: silent }).then(
    async (runtime) => {
      await runtime.core.stopListening();
      return undefined;
    },
    (e: unknown) => e,
  );
}

describe('start-up checks', () => {
  it('opens nothing on a database not migrated yet (`tollgate migrate` on a new database starts)', async () => {
    const fresh = await createTestDatabase('pglite');
    try {
      await fresh.db.schema.dropTable('signing_keys').cascade().execute();
      const runtime = await createRuntime(testConfig({ masterSecret: 'any secret at all, nothing is sealed yet' }), {
        database: fresh,
        logger: silent,
        skipMigrations: true,
      });
      await runtime.core.stopListening();
    } finally {
      await fresh.drop();
    }
  });

  it('leaves the replica unasked when told (the CLI reads nothing there)', async () => {
    const runtime = await createRuntime(testConfig({ databaseReadUrl: 'postgres://postgres@127.0.0.1:1/nowhere' }), {
      database: db,
      logger: silent,
      skipReplicaCheck: true,
    });
    const readiness = await runtime.readiness();
    // Shown, but every instance shares the replica: not a reason to be taken out of service.
    expect(readiness.checks.replica).toMatchObject({ ok: false, detail: expect.stringContaining('DATABASE_READ_URL') });
    await runtime.core.stopListening();
  });

  it('refuses a TOLLGATE_SECRET that does not open the stored signing keys, in one line naming it', async () => {
    const e = await refusal({ masterSecret: 'another secret, not the one the keys were sealed with' });
    expect(e).toBeInstanceOf(ConfigError);
    const line = startFailure(e);
    expect(line.split('\n')).toHaveLength(1);
    expect(line).toMatch(/^configuration error: TOLLGATE_SECRET does not open the signing keys/);
  });

  it('starts with the secret the keys were sealed with', async () => {
    expect(await refusal({})).toBeUndefined();
  });

  it('refuses a DATABASE_READ_URL that does not answer, in one line naming it', async () => {
    const e = await refusal({ databaseReadUrl: 'postgres://postgres@127.0.0.1:1/nowhere' });
    expect(e).toBeInstanceOf(ConfigError);
    const line = startFailure(e);
    expect(line.split('\n')).toHaveLength(1);
    expect(line).toMatch(/^configuration error: DATABASE_READ_URL: the read replica does not answer: .*connection refused/);
  });
});
