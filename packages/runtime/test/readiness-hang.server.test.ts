/* Readiness against a database that hangs (a stalled network, a frozen server): the ping gives up
   within READINESS_PING_MS, so /readyz (capped at 2 s) names the database and the hung connection is
   closed. Needs TEST_DATABASE_URL. */
import { sql } from 'kysely';
import { FaultProxy, createTestDatabase, type TestDatabase } from '@tollgate/adapter-postgres';
import { createRuntime, type Runtime } from '../src';
import { testConfig } from '../src/testing';

const describeServer = process.env.TEST_DATABASE_URL ? describe : describe.skip;
jest.setTimeout(60_000);

describeServer('readiness on a hung database', () => {
  let db: TestDatabase;
  let proxy: FaultProxy;
  let runtime: Runtime;
  beforeAll(async () => {
    db = await createTestDatabase('postgres');
    const target = new URL(db.url as string);
    proxy = await FaultProxy.start({ host: target.hostname, port: Number(target.port || 5432) });
    runtime = await createRuntime(testConfig({ databaseUrl: proxy.url(db.url as string) }), {
      logger: { info: () => undefined, error: () => undefined },
    });
  });
  afterAll(async () => {
    proxy.faults.stalled = false;
    await runtime?.close().catch(() => undefined);
    await proxy?.close();
    await db?.drop();
  });

  it('names the database within the ping cap while the server does not answer', async () => {
    expect((await runtime.readiness()).checks.database).toEqual({ ok: true });
    proxy.faults.stalled = true;
    const started = Date.now();
    const r = await runtime.readiness();
    expect(Date.now() - started).toBeLessThan(1_900);
    expect(r.ready).toBe(false);
    expect(r.checks.database).toEqual({ ok: false, detail: expect.stringMatching(/does not answer: no answer within 1500 ms/) });
  });
});

describeServer('readiness with a hung read replica', () => {
  let db: TestDatabase;
  let proxy: FaultProxy;
  let runtime: Runtime;
  beforeAll(async () => {
    db = await createTestDatabase('postgres');
    const target = new URL(db.url as string);
    proxy = await FaultProxy.start({ host: target.hostname, port: Number(target.port || 5432) });
    runtime = await createRuntime(testConfig({ databaseUrl: db.url as string, databaseReadUrl: proxy.url(db.url as string) }), {
      logger: { info: () => undefined, error: () => undefined },
    });
  });
  afterAll(async () => {
    proxy.faults.stalled = false;
    await runtime?.close().catch(() => undefined);
    await proxy?.close();
    await db?.drop();
  });

  it('pings the replica beside the primary checks: a hung replica and a slow primary still answer ready within /readyz', async () => {
    expect((await runtime.readiness()).checks.replica).toEqual({ ok: true });
    proxy.faults.stalled = true;
    // The primary's migrations read waits 700 ms on a lock: slow, not down.
    const held = db.db.transaction().execute(async (tx) => {
      await sql`LOCK TABLE kysely_migration IN ACCESS EXCLUSIVE MODE`.execute(tx);
      await new Promise((r) => setTimeout(r, 700));
    });
    await new Promise((r) => setTimeout(r, 50));
    const started = Date.now();
    const r = await runtime.readiness();
    await held;
    // Within /readyz's 2 s (READINESS_DEADLINE_MS), which answers 503 otherwise.
    expect(Date.now() - started).toBeLessThan(1_900);
    expect(r.ready).toBe(true);
    expect(r.checks.database).toEqual({ ok: true });
    expect(r.checks.migrations).toEqual({ ok: true });
    expect(r.checks.replica).toEqual({ ok: false, detail: expect.stringMatching(/read replica .* no answer within 1500 ms/) });
  });
});
