/* Revocation that cannot be lost, and the check through a database outage (issue #24, points 1 and 3):
   the lines behind the change feed, shown with a feed that loses changes and a database that stops
   answering. */
import { randomUUID } from 'node:crypto';
import { DomainError, ErrorCodes, type Repositories, type UnitOfWork } from '../src';
import { createTestCore, InMemoryUnitOfWork, seedSample, type MemoryChangeFeed, type TestCore } from '../src/testing';

/** A database that can stop answering, and whose reads can be held half-way (after reading, before returning). */
class FaultyUnitOfWork implements UnitOfWork {
  down = false;
  hold: Promise<void> | undefined;
  constructor(readonly inner: InMemoryUnitOfWork) {}
  private unavailable(): never {
    throw new DomainError(ErrorCodes.DATABASE_UNAVAILABLE, 'the database is unavailable');
  }
  async run<T>(work: (r: Repositories) => Promise<T>): Promise<T> {
    if (this.down) this.unavailable();
    return this.inner.run(work);
  }
  async read<T>(work: (r: Repositories) => Promise<T>): Promise<T> {
    if (this.down) this.unavailable();
    const result = await this.inner.read(work);
    await this.hold;
    return result;
  }
}

async function until(ok: () => Promise<boolean>, what: string, ms = 5_000): Promise<void> {
  for (const end = Date.now() + ms; !(await ok());) {
    if (Date.now() > end) throw new Error(`${what} not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

const refused = (core: TestCore, key: string) =>
  core.apiKeys.authenticate(key).then(
    () => false,
    (e: DomainError) => e.code === ErrorCodes.UNAUTHENTICATED,
  );

describe('revocation', () => {
  let a: TestCore;
  let b: TestCore;
  let faulty: FaultyUnitOfWork;
  let org: string;
  beforeEach(async () => {
    const shared = new InMemoryUnitOfWork();
    faulty = new FaultyUnitOfWork(shared);
    a = createTestCore({ uow: shared });
    b = createTestCore({ uow: faulty, changes: shared.changeFeed() });
    await a.listen();
    await b.listen();
    org = `org-${randomUUID().slice(0, 8)}`;
    await a.apiKeys.ensureOrganisation(org);
  });
  afterEach(async () => {
    await a.stopListening();
    await b.stopListening();
  });

  it('does not keep a key whose lookup raced its revocation', async () => {
    const { plaintext, record } = await a.apiKeys.create({ organisation: org, scopes: ['*'], isTest: false });
    let release!: () => void;
    faulty.hold = new Promise((r) => (release = r));
    // B reads the key (not yet revoked) and is held before it can keep it; the revocation commits
    // and is heard meanwhile.
    const lookup = b.apiKeys.authenticate(plaintext);
    await new Promise((r) => setTimeout(r, 5));
    await a.apiKeys.revoke(record.id);
    release();
    faulty.hold = undefined;
    // The request that started before the revocation may pass; none after it.
    await lookup;
    expect(await refused(b, plaintext)).toBe(true);
  });

  it('makes no key for a key revoked after its request was authenticated (the creator is read again in the transaction)', async () => {
    const { plaintext, record } = await a.apiKeys.create({ organisation: org, scopes: ['*'], isTest: false });
    const creator = await b.apiKeys.authenticate(plaintext);
    const tenant = { organisationId: creator.organisationId, isTest: false };
    // Authenticated, then revoked before its create runs (another instance, or a concurrent request).
    await a.apiKeys.revoke(record.id);
    const made = await b.apiKeys.createFor(tenant, creator, { name: 'child' }).then(
      () => 'created',
      (e: DomainError) => e.code,
    );
    expect(made).toBe(ErrorCodes.UNAUTHENTICATED);
    expect((await a.apiKeys.list(org)).map((k) => k.name)).toEqual([record.name]);
    // A live key still makes one.
    const live = await a.apiKeys.create({ organisation: org, scopes: ['*'], isTest: false });
    await expect(b.apiKeys.createFor(tenant, await b.apiKeys.authenticate(live.plaintext), { name: 'child' })).resolves.toMatchObject({
      record: { name: 'child', scopes: ['*'] },
    });
  });

  it('re-validates cached keys against the database: a revocation whose notification was lost is refused within the interval', async () => {
    const { plaintext, record } = await a.apiKeys.create({ organisation: org, scopes: ['*'], isTest: false });
    const other = await a.apiKeys.create({ organisation: org, scopes: ['*'], isTest: true });
    await b.apiKeys.authenticate(plaintext);
    await b.apiKeys.authenticate(other.plaintext);
    (b.changes as MemoryChangeFeed).losing = true;
    await a.apiKeys.revoke(record.id);
    // The feed lost it: B alone cannot know, yet its periodic re-validation (every 500 ms) repairs it.
    await until(() => refused(b, plaintext), 'the revoked key refused by B');
    expect(await b.apiKeys.revalidate()).toBe(0);
    expect((await b.apiKeys.authenticate(other.plaintext)).id).toBe(other.record.id);
  });
});

describe('a database outage', () => {
  let a: TestCore;
  let b: TestCore;
  let faulty: FaultyUnitOfWork;
  let feed: MemoryChangeFeed;
  let keys: Record<string, string>;
  let tenant: { organisationId: string; isTest: boolean };
  let plaintext: string;
  let orgName: string;
  beforeEach(async () => {
    const shared = new InMemoryUnitOfWork();
    faulty = new FaultyUnitOfWork(shared);
    a = createTestCore({ uow: shared });
    feed = shared.changeFeed();
    b = createTestCore({ uow: faulty, changes: feed });
    await a.listen();
    await b.listen();
    const org = `org-${randomUUID().slice(0, 8)}`;
    orgName = org;
    ({ tenant, keys } = await seedSample(a, org));
    plaintext = (await a.apiKeys.create({ organisation: org, scopes: ['*'], isTest: false })).plaintext;
    await a.licenses.createAdHoc(tenant, [{ planUuid: keys['plans.notes.free'], member: 'm@example.com', granteeId: 'ann' }]);
  });
  afterEach(async () => {
    await a.stopListening();
    await b.stopListening();
  });

  const check = (granteeIds: string[], marks: string[] = []) =>
    b.checks.check(
      tenant,
      { productId: keys['products.notes'], granteeIds, graceDays: 0, encoding: 'der' },
      { fromMemory: () => marks.push('memory') },
    );

  it('answers checks it holds from memory within the grace (marked), refuses what it does not hold, then 503 after the grace', async () => {
    await b.apiKeys.authenticate(plaintext);
    const before = await check(['ann']);
    expect(before?.capabilities).toEqual(['edit']);
    // The database stops answering; the feed's connection goes with it.
    faulty.down = true;
    feed.drop();
    const marks: string[] = [];
    const during = await check(['ann'], marks);
    expect(during?.capabilities).toEqual(['edit']);
    expect(during?.signature).toBe(before?.signature);
    expect(marks).toEqual(['memory']);
    expect(b.checkCache.stats().fromMemory).toBe(1);
    expect((await b.apiKeys.authenticate(plaintext)).organisationId).toBe(tenant.organisationId);
    // Not held: the outage error, never a guess.
    await expect(check(['bob'])).rejects.toMatchObject({ code: ErrorCodes.DATABASE_UNAVAILABLE });
    // Writes cannot commit.
    await expect(
      b.licenses.createAdHoc(tenant, [{ planUuid: keys['plans.notes.free'], member: 'm@example.com', granteeId: 'cat' }]),
    ).rejects.toMatchObject({ code: ErrorCodes.DATABASE_UNAVAILABLE });
    // Past the grace (60 s after the feed was last heard): 503 for the check and the key too.
    b.clock.set(new Date(b.clock.now().getTime() + 61_000));
    await expect(check(['ann'])).rejects.toMatchObject({ code: ErrorCodes.DATABASE_UNAVAILABLE });
    await expect(b.apiKeys.authenticate(plaintext)).rejects.toMatchObject({ code: ErrorCodes.DATABASE_UNAVAILABLE });
    // Back: exact again, from the database, and what was held is dropped (it may have changed).
    faulty.down = false;
    feed.restore();
    expect(b.checkCache.stats()).toMatchObject({ live: true, entries: 0 });
    expect((await check(['ann']))?.capabilities).toEqual(['edit']);
  });

  it('does not honour a license revoked while the feed was lost and the database still answered', async () => {
    const before = await check(['ann']);
    expect(before?.capabilities).toEqual(['edit']);
    const ann = (await a.licenses.list(tenant, {})).filter((l) => l.granteeId === 'ann');
    // The feed is lost while the database still answers: B reads it (and caches nothing).
    feed.drop();
    b.clock.set(new Date(b.clock.now().getTime() + 10_000));
    await a.licenses.cancel(
      tenant,
      ann.map((l) => l.id),
    );
    expect(await check(['ann'])).toBeNull();
    // Later the database stops answering: the old snapshot (from before the cancel) must not answer.
    b.clock.set(new Date(b.clock.now().getTime() + 10_000));
    faulty.down = true;
    await expect(check(['ann'])).rejects.toMatchObject({ code: ErrorCodes.DATABASE_UNAVAILABLE });
  });

  it('forgets a key the database says is revoked, so no later outage lets it back in', async () => {
    const { plaintext: revokedKey, record } = await a.apiKeys.create({ organisation: orgName, scopes: ['*'], isTest: false });
    await b.apiKeys.authenticate(revokedKey);
    feed.drop();
    await a.apiKeys.revoke(record.id);
    // Untrusted, B asks the database, which says revoked.
    expect(await refused(b, revokedKey)).toBe(true);
    faulty.down = true;
    await expect(b.apiKeys.authenticate(revokedKey)).rejects.toMatchObject({ code: ErrorCodes.DATABASE_UNAVAILABLE });
  });

  it('never answers from memory when the feed was never heard (a start during the outage)', async () => {
    const cold = createTestCore({ uow: faulty });
    faulty.down = true;
    await expect(
      cold.checks.check(tenant, { productId: keys['products.notes'], granteeIds: ['ann'], graceDays: 0, encoding: 'der' }),
    ).rejects.toMatchObject({ code: ErrorCodes.DATABASE_UNAVAILABLE });
  });
});
