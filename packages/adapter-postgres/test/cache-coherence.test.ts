import { Client } from 'pg';
import { createTestCore, describeCacheCoherenceContract } from '@tollgate/core/testing';
import { createTestDatabase, openDatabase, PostgresUnitOfWork } from '../src';

/** Polls until `ok()` (a bound on waiting, not a speed assertion). */
async function until(ok: () => boolean, what: string, ms = 10_000): Promise<void> {
  for (const end = Date.now() + ms; !ok();) {
    if (Date.now() > end) throw new Error(`${what} not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

// A change reaches the other instance's listener within DESIGN's 100 ms.
const settle = () => new Promise<void>((r) => setTimeout(r, 100));

describeCacheCoherenceContract('PGlite', async () => {
  const db = await createTestDatabase('pglite');
  const a = createTestCore({ uow: db.uow, changes: db.changeFeed() });
  const b = createTestCore({ uow: db.uow, changes: db.changeFeed() });
  await a.listen();
  await b.listen();
  return {
    a,
    b,
    dropB: () => b.stopListening(),
    restoreB: () => b.listen(),
    settle,
    close: async () => {
      await a.stopListening();
      await b.stopListening();
      await db.drop();
    },
  };
});

if (process.env.TEST_DATABASE_URL) {
  describeCacheCoherenceContract('PostgreSQL server', async () => {
    const db = await createTestDatabase('postgres');
    const second = openDatabase({ url: db.url, poolSize: 4 });
    const feedName = `tollgate-feed-b-${process.pid}-${Date.now()}`;
    const a = createTestCore({ uow: db.uow, changes: db.changeFeed({ applicationName: 'tollgate-feed-a' }) });
    const b = createTestCore({ uow: new PostgresUnitOfWork(second.db), changes: second.changeFeed({ applicationName: feedName }) });
    await a.listen();
    await b.listen();
    return {
      a,
      b,
      // The real thing: the server ends B's listening connection.
      dropB: async () => {
        const admin = new Client({ connectionString: db.url });
        await admin.connect();
        await admin.query('select pg_terminate_backend(pid) from pg_stat_activity where application_name = $1', [feedName]);
        await admin.end();
        await until(() => !b.checkCache.stats().live, "B's caches off");
      },
      // B reconnects by itself.
      restoreB: () => until(() => b.checkCache.stats().live, 'B listening again'),
      settle,
      close: async () => {
        await a.stopListening();
        await b.stopListening();
        await second.close();
        await db.drop();
      },
    };
  });
}
