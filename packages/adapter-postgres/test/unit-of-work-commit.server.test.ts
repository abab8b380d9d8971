/* A transaction whose COMMIT is never answered may have landed: the client is told so, never that
   nothing changed. A transaction cut before its COMMIT changed nothing, and says so. Needs
   TEST_DATABASE_URL; the cut comes from a proxy this test controls, at the exact statement. */
import { sql } from 'kysely';
import { ErrorCodes, isDomainError } from '@tollgate/core';
import { anOrganisation } from '@tollgate/core/testing';
import { FaultProxy, PostgresUnitOfWork, createTestDatabase, openDatabase, type DatabaseHandle, type TestDatabase } from '../src';

const describeServer = process.env.TEST_DATABASE_URL ? describe : describe.skip;

describeServer('a unit of work cut off around its COMMIT', () => {
  let db: TestDatabase;
  let proxy: FaultProxy;
  let proxied: DatabaseHandle;
  let uow: PostgresUnitOfWork;

  beforeAll(async () => {
    db = await createTestDatabase('postgres');
    const target = new URL(db.url as string);
    proxy = await FaultProxy.start({ host: target.hostname, port: Number(target.port || 5432) });
    proxied = openDatabase({ url: proxy.url(db.url as string), poolSize: 2 });
    uow = new PostgresUnitOfWork(proxied.db);
  });
  afterAll(async () => {
    await proxied?.close();
    await proxy?.close();
    await db?.drop();
  });

  /** Saves `org` in a unit of work through the proxy (then runs `after` in it): what it threw, and whether the row is there. */
  const save = async (org = anOrganisation(), after?: () => Promise<void>) => {
    const failure = await uow
      .run(async (r) => {
        await r.organisations.save(org);
        await after?.();
      })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    const landed = (await db.uow.read((r) => r.organisations.get(org.id))) !== undefined;
    return { failure, landed };
  };
  /** The same, cut where `cutAt` says. */
  const saveCut = async (cutAt: { query: RegExp; when: 'before' | 'after' }) => {
    proxy.faults.cutAt = cutAt;
    const outcome = await save();
    expect(proxy.faults.cutAt).toBeUndefined(); // the cut happened
    return outcome;
  };

  it('answers a COMMIT that landed unacknowledged as in doubt (may have been applied), not "nothing was changed"', async () => {
    const { failure, landed } = await saveCut({ query: /\bcommit\b/i, when: 'after' });
    expect(landed).toBe(true);
    expect(isDomainError(failure) && failure.code).toBe(ErrorCodes.DATABASE_UNAVAILABLE);
    expect((failure as Error).message).toMatch(/may have been applied/);
    expect((failure as Error).message).not.toMatch(/nothing was changed/);
  });

  it('answers a COMMIT that never reached the server as in doubt too (the client cannot tell which)', async () => {
    const { failure, landed } = await saveCut({ query: /\bcommit\b/i, when: 'before' });
    expect(landed).toBe(false);
    expect((failure as Error).message).toMatch(/may have been applied/);
  });

  it('answers a transaction cut before its COMMIT as unavailable with nothing changed', async () => {
    const { failure, landed } = await saveCut({ query: /insert into "organisations"/i, when: 'before' });
    expect(landed).toBe(false);
    expect(isDomainError(failure) && failure.code).toBe(ErrorCodes.DATABASE_UNAVAILABLE);
    expect((failure as Error).message).toMatch(/nothing was changed/);
  });

  it('answers a COMMIT on a connection that died before it was sent as nothing changed (pg never sent it)', async () => {
    const { failure, landed } = await save(anOrganisation(), async () => {
      proxy.cut();
      await new Promise((r) => setTimeout(r, 100)); // the client hears the close
    });
    expect(landed).toBe(false);
    expect(isDomainError(failure) && failure.code).toBe(ErrorCodes.DATABASE_UNAVAILABLE);
    expect((failure as Error).message).toMatch(/nothing was changed/);
  });

  it('answers a COMMIT PostgreSQL refuses (a deferred constraint) with its own error, not as in doubt', async () => {
    await sql`create function refuse_at_commit() returns trigger language plpgsql as $$
      begin raise exception 'refused at commit' using errcode = '23505'; end $$`.execute(db.db);
    await sql`create constraint trigger refuse_at_commit after insert on organisations deferrable initially deferred
      for each row when (new.name like 'refuse-%') execute function refuse_at_commit()`.execute(db.db);
    const { failure, landed } = await save(anOrganisation({ name: 'refuse-me' }));
    expect(landed).toBe(false);
    expect(isDomainError(failure) && failure.code).toBe(ErrorCodes.CONFLICT);
  });

  it('works again afterwards (the pool replaced the cut connections)', async () => {
    const org = anOrganisation();
    await uow.run((r) => r.organisations.save(org));
    expect(await db.uow.read((r) => r.organisations.get(org.id))).toBeDefined();
  });
});
