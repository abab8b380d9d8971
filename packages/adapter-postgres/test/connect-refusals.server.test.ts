/* A server that refuses connections (the database closed to them, a role at its connection limit)
   is an outage to a request, never a 500; a readiness ping against a hung server gives up in time
   and does not keep the connection it hung on. Needs TEST_DATABASE_URL. */
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { Client } from 'pg';
import { ErrorCodes, isDomainError } from '@tollgate/core';
import {
  FaultProxy,
  PostgresUnitOfWork,
  createTestDatabase,
  openDatabase,
  pingDatabase,
  type DatabaseHandle,
  type TestDatabase,
} from '../src';

const describeServer = process.env.TEST_DATABASE_URL ? describe : describe.skip;

describeServer('connection refusals and hung pings on a PostgreSQL server', () => {
  let db: TestDatabase;
  const opened: DatabaseHandle[] = [];
  const admin = async (statement: string) => {
    const c = new Client({ connectionString: process.env.TEST_DATABASE_URL });
    await c.connect();
    try {
      await c.query(statement);
    } finally {
      await c.end();
    }
  };
  const open = (url: string) => {
    const handle = openDatabase({ url, poolSize: 2 });
    opened.push(handle);
    return handle;
  };
  /** What a read and a write through a fresh pool on `url` throw. */
  const failures = async (url: string) => {
    const uow = new PostgresUnitOfWork(open(url).db);
    const read = await uow.read((r) => r.organisations.get(randomUUID())).catch((e: unknown) => e);
    const write = await uow.run((r) => r.organisations.get(randomUUID())).catch((e: unknown) => e);
    return [read, write];
  };

  beforeAll(async () => {
    db = await createTestDatabase('postgres');
  });
  afterAll(async () => {
    for (const h of opened) await h.close().catch(() => undefined);
    await admin(`alter database ${new URL(db.url as string).pathname.slice(1)} allow_connections true`).catch(() => undefined);
    await db?.drop();
  });

  it('answers a database that does not accept connections (55000, ALLOW_CONNECTIONS false) as unavailable', async () => {
    const name = new URL(db.url as string).pathname.slice(1);
    await admin(`alter database ${name} allow_connections false`);
    try {
      for (const e of await failures(db.url as string)) {
        expect((e as { message?: string }).message).toMatch(/unavailable/);
        expect(isDomainError(e) && e.code).toBe(ErrorCodes.DATABASE_UNAVAILABLE);
      }
    } finally {
      await admin(`alter database ${name} allow_connections true`);
    }
  });

  it('answers a role at its connection limit (53300) as unavailable', async () => {
    const role = `tollgate_limited_${randomUUID().replace(/-/g, '').slice(0, 8)}`;
    await admin(`create role ${role} login connection limit 0`);
    try {
      const url = new URL(db.url as string);
      url.username = role;
      for (const e of await failures(url.toString())) expect(isDomainError(e) && e.code).toBe(ErrorCodes.DATABASE_UNAVAILABLE);
    } finally {
      for (const h of opened.splice(0)) await h.close().catch(() => undefined);
      await admin(`drop role ${role}`);
    }
  });

  it('answers a role that may not log in (28000, NOLOGIN: only the connect marking says outage) as unavailable', async () => {
    const role = `tollgate_nologin_${randomUUID().replace(/-/g, '').slice(0, 8)}`;
    await admin(`create role ${role} nologin`);
    try {
      const url = new URL(db.url as string);
      url.username = role;
      // The server's 28000 is no outage code: only the marking of connect failures makes it 503.
      for (const e of await failures(url.toString())) expect(isDomainError(e) && e.code).toBe(ErrorCodes.DATABASE_UNAVAILABLE);
    } finally {
      for (const h of opened.splice(0)) await h.close().catch(() => undefined);
      await admin(`drop role ${role}`);
    }
  });

  it('leaves a protocol violation on an open connection (08P01, a client bug) unmapped: a 500, not an outage', async () => {
    const handle = open(db.url as string);
    const uow = new PostgresUnitOfWork(handle.db);
    // More parameters than a Bind message can count: pg sends 0, the server answers 08P01.
    const tooMany = sql`select 1 where 0 in (${sql.join(Array.from({ length: 65_536 }, (_, i) => sql`${i}`))})`;
    for (const work of [uow.read.bind(uow), uow.run.bind(uow)]) {
      const e = await work(() => tooMany.execute(handle.db)).catch((x: unknown) => x);
      expect((e as { code?: string }).code).toBe('08P01');
      expect(isDomainError(e)).toBe(false);
    }
    // The connection was fine all along.
    await expect(uow.read((r) => r.organisations.get(randomUUID()))).resolves.toBeUndefined();
  });

  it('gives up a ping on a hung server within its timeout and drops the connection it hung on', async () => {
    const target = new URL(db.url as string);
    const proxy = await FaultProxy.start({ host: target.hostname, port: Number(target.port || 5432) });
    try {
      const handle = open(proxy.url(db.url as string));
      await pingDatabase(handle.db, { timeoutMs: 1_000 });
      expect(handle.poolStats?.()).toMatchObject({ total: 1, idle: 1 });
      proxy.faults.stalled = true;
      const started = Date.now();
      await expect(pingDatabase(handle.db, { timeoutMs: 300 })).rejects.toThrow(/within 300 ms|timeout/);
      expect(Date.now() - started).toBeLessThan(1_000);
      // The statement's own timeout ended the connection: it is not left checked out forever.
      await new Promise((r) => setTimeout(r, 100));
      expect(handle.poolStats?.()).toMatchObject({ total: 0, waiting: 0 });
    } finally {
      proxy.faults.stalled = false;
      await proxy.close();
    }
  });
});
