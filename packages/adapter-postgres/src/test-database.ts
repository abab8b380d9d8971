import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { migrateToLatest, openDatabase, type DatabaseHandle } from './database';
import { PostgresUnitOfWork } from './unit-of-work';

export interface TestDatabase extends DatabaseHandle {
  uow: PostgresUnitOfWork;
  /** The server URL of this database (server kind only). */
  url?: string;
  /** Closes the connections and, on a server, drops the database. */
  drop(): Promise<void>;
}

/**
 * A fresh, migrated database for one test file: embedded PGlite in memory, or a new database on the
 * server of `TEST_DATABASE_URL`, dropped again by `drop()`. Never reuses leftovers.
 */
export async function createTestDatabase(kind: 'pglite' | 'postgres', options: { poolSize?: number } = {}): Promise<TestDatabase> {
  if (kind === 'pglite') {
    const handle = openDatabase();
    await migrateToLatest(handle.db);
    return { ...handle, uow: new PostgresUnitOfWork(handle.db), drop: () => handle.close() };
  }
  const serverUrl = process.env.TEST_DATABASE_URL;
  if (!serverUrl) throw new Error('TEST_DATABASE_URL is not set');
  const name = `tollgate_test_${randomUUID().replace(/-/g, '').slice(0, 16)}`;
  const admin = new Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  const handle = openDatabase({ url: url.toString(), poolSize: options.poolSize });
  await migrateToLatest(handle.db);
  return {
    ...handle,
    url: url.toString(),
    uow: new PostgresUnitOfWork(handle.db),
    drop: async () => {
      await handle.close();
      const c = new Client({ connectionString: serverUrl });
      await c.connect();
      // A backend whose client just said goodbye can linger for a moment: force ends it.
      await c.query(`drop database if exists ${name} with (force)`);
      await c.end();
    },
  };
}
