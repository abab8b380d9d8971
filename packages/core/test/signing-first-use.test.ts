import {
  DomainError,
  ErrorCodes,
  SigningKeys,
  type Repositories,
  type SigningAlgorithm,
  type SigningKey,
  type Tenant,
  type UnitOfWork,
} from '../src';
import { FakeCipher, FakeScheme, FixedClock, InMemoryUnitOfWork, RandomIds } from '../src/testing';
import { JoinedUnitOfWork } from '../src/usecases/joined-unit-of-work';

// An organisation's signing key is made on first use. Several instances on one database (and
// several requests on one instance) may find none at once: each made a key of its own, answers got
// signed with keys no route serves, and a vendor's verifier could never check them. One is made.

/**
 * The signing keys and organisation locks of a database whose transactions run at once, as
 * PostgreSQL's do at READ COMMITTED (the in-memory unit of work runs them one at a time, which
 * hides the race): each query is a round trip, a transaction's writes are seen by others once it
 * commits, and `organisations.getForUpdate` holds the organisation's row lock until it ends.
 */
class ConcurrentUnitOfWork implements UnitOfWork {
  committed: SigningKey[] = [];
  transactions = 0;
  /** The next transactions fail with this, after their first round trip (the database went away). */
  failing: Error | undefined;
  private readonly locks = new Map<string, Promise<void>>();

  /** `saveRoundTrips`: how long a save takes (a slow insert). */
  constructor(private readonly saveRoundTrips = 1) {}

  read<T>(work: (r: Repositories) => Promise<T>): Promise<T> {
    return this.run(work);
  }

  async run<T>(work: (r: Repositories) => Promise<T>): Promise<T> {
    this.transactions++;
    const written: SigningKey[] = [];
    const held: (() => void)[] = [];
    const roundTrip = () => new Promise((resolve) => setImmediate(resolve));
    const repos = {
      signingKeys: {
        listActive: async (tenant: Tenant, algorithm: SigningAlgorithm) => {
          await roundTrip();
          return [...this.committed, ...written]
            .filter((k) => k.organisationId === tenant.organisationId && k.isTest === tenant.isTest && k.algorithm === algorithm)
            .filter((k) => !k.retiredAt)
            .sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime() || (a.id < b.id ? 1 : -1));
        },
        save: async (k: SigningKey) => {
          for (let i = 0; i < this.saveRoundTrips; i++) await roundTrip();
          written.push(k);
        },
      },
      organisations: {
        getForUpdate: async (id: string) => {
          await roundTrip();
          while (this.locks.has(id)) await this.locks.get(id);
          let release = () => undefined as void;
          this.locks.set(id, new Promise<void>((resolve) => (release = resolve)));
          held.push(() => {
            this.locks.delete(id);
            release();
          });
          return { id, name: id, createdAt: new Date(0) };
        },
      },
    } as unknown as Repositories;
    try {
      if (this.failing) {
        await roundTrip();
        throw this.failing;
      }
      const result = await work(repos);
      this.committed.push(...written);
      return result;
    } finally {
      for (const release of held) release();
    }
  }
}

const scheme = new FakeScheme();
const instance = (uow: UnitOfWork, clock = new FixedClock()) =>
  new SigningKeys({ uow, clock, ids: new RandomIds(), scheme, cipher: new FakeCipher() });
const live: Tenant = { organisationId: 'org-1', isTest: false };
const test: Tenant = { organisationId: 'org-1', isTest: true };

describe('signing keys made on first use', () => {
  it("two instances' concurrent first requests, in both modes at once, make one key per mode, and every answer verifies with it", async () => {
    const uow = new ConcurrentUnitOfWork();
    const instances = [instance(uow), instance(uow)];
    const asked = [live, test].flatMap((tenant) =>
      instances.flatMap((signing) => [
        signing.sign(tenant, 'caps').then((signed) => ({ tenant, signed })),
        signing.sign(tenant, 'caps').then((signed) => ({ tenant, signed })),
        signing.publicKey(tenant).then((served) => ({ tenant, served })),
      ]),
    );
    const answers = await Promise.all(asked);
    for (const tenant of [live, test]) {
      const keys = uow.committed.filter((k) => k.isTest === tenant.isTest);
      expect(keys.map((k) => k.id)).toHaveLength(1);
      const [key] = keys;
      for (const a of answers.filter((x) => x.tenant === tenant)) {
        if ('served' in a) expect(a.served.id).toBe(key.id);
        else {
          expect(a.signed.publicHash).toBe(scheme.publicHash(key));
          expect(scheme.verify({ secret: instances[0].reveal(key) }, 'caps', a.signed.signature)).toBe(true);
        }
      }
      // What each instance serves afterwards is that key.
      for (const signing of instances) expect((await signing.publicKey(tenant)).id).toBe(key.id);
    }
  });

  it("one instance's concurrent first requests share one load: one transaction, one key", async () => {
    const uow = new ConcurrentUnitOfWork();
    const signing = instance(uow);
    signing.setLive(true);
    const signed = await Promise.all(Array.from({ length: 6 }, () => signing.sign(live, 'caps')));
    expect(uow.transactions).toBe(1);
    expect(uow.committed).toHaveLength(1);
    expect(new Set(signed.map((s) => s.publicHash))).toEqual(new Set([scheme.publicHash(uow.committed[0])]));
    // Held, and signed from memory with that key.
    expect(signing.signHeld(live, 'caps')?.publicHash).toBe(scheme.publicHash(uow.committed[0]));
  });

  it('a rotation racing the first use is the current key once it returns', async () => {
    // Slow inserts; the reading instance's clock a little ahead of the rotating one's.
    const uow = new ConcurrentUnitOfWork(5);
    const rotating = instance(uow, new FixedClock(new Date('2026-01-15T12:00:00.000Z')));
    const reading = instance(uow, new FixedClock(new Date('2026-01-15T12:00:00.005Z')));
    const [rotated, signed] = await Promise.all([rotating.rotate(live), reading.sign(live, 'caps')]);
    for (const signing of [rotating, reading]) {
      expect((await signing.current(live)).id).toBe(rotated.id);
      expect((await signing.publicKey(live)).id).toBe(rotated.id);
    }
    // The check signed meanwhile verifies with a key still active (the rotation's, or the one it replaced).
    const active = await reading.active(live);
    expect(active[0].id).toBe(rotated.id);
    expect(active.map((k) => scheme.publicHash(k))).toContain(signed.publicHash);
  });

  it('a load that failed is not joined after: the next request starts a transaction of its own and signs', async () => {
    const uow = new ConcurrentUnitOfWork();
    const signing = instance(uow);
    signing.setLive(true);
    const outage = new DomainError(ErrorCodes.DATABASE_UNAVAILABLE, 'the database is unavailable; nothing was changed, retry later');
    uow.failing = outage;
    const failed = await Promise.allSettled([signing.sign(live, 'caps'), signing.sign(live, 'caps')]);
    expect(failed.map((f) => (f.status === 'rejected' ? f.reason : f.value))).toEqual([outage, outage]);
    expect(uow.transactions).toBe(1);
    // The database is back: the next request reads (and makes) the key, and is held.
    uow.failing = undefined;
    const signed = await signing.sign(live, 'caps');
    expect(uow.transactions).toBe(2);
    expect(uow.committed).toHaveLength(1);
    expect(signed.publicHash).toBe(scheme.publicHash(uow.committed[0]));
    expect(signing.signHeld(live, 'caps')?.publicHash).toBe(signed.publicHash);
  });

  it("a load begun before a forget of its organisation is not joined; one begun before another organisation's is", async () => {
    const uow = new ConcurrentUnitOfWork();
    const signing = instance(uow);
    signing.setLive(true);
    // (A load begins its transaction before the call returns.)
    const first = signing.sign(live, 'caps');
    expect(uow.transactions).toBe(1);
    // The organisation's keys changed meanwhile (a rotation elsewhere): the load under way may carry
    // the replaced key, so the next request reads in a transaction of its own.
    signing.forget(live.organisationId);
    const second = signing.sign(live, 'caps');
    expect(uow.transactions).toBe(2);
    const signed = await Promise.all([first, second]);
    expect(uow.committed).toHaveLength(1);
    expect(signed.map((x) => x.publicHash)).toEqual([scheme.publicHash(uow.committed[0]), scheme.publicHash(uow.committed[0])]);

    // Another organisation's first use (the change feed reports each new key, a forget of its
    // organisation) leaves this organisation's load under way joinable: one transaction.
    const other: Tenant = { organisationId: 'org-2', isTest: false };
    const before = uow.transactions;
    const loads = [signing.sign(other, 'caps')];
    signing.forget(live.organisationId);
    signing.forget('org-3');
    loads.push(signing.sign(other, 'caps'), signing.sign(other, 'caps'));
    expect(uow.transactions - before).toBe(1);
    await Promise.all(loads);
    expect(uow.committed.filter((k) => k.organisationId === 'org-2')).toHaveLength(1);
  });

  it("refuses to sign inside an idempotent request's transaction: nothing is made there, held or used after", async () => {
    const uow = new JoinedUnitOfWork(new InMemoryUnitOfWork());
    const signing = instance(uow);
    signing.setLive(true);
    const refusal = "a signing key cannot be used inside an idempotent request's transaction: sign before or after it";
    await uow.runShared(async () => {
      await expect(signing.sign(live, 'caps')).rejects.toThrow(refusal);
      await expect(signing.sign(live, 'caps', { fromMemory: true })).rejects.toThrow(refusal);
      await expect(signing.current(live)).rejects.toThrow(refusal);
      await expect(signing.publicKey(live)).rejects.toThrow(refusal);
      await expect(signing.rotate(live)).rejects.toThrow(refusal);
    });
    expect(await signing.active(live)).toEqual([]);
    expect(signing.signHeld(live, 'caps')).toBeUndefined();
    // Outside it, signing makes the key and signs with the one served.
    const signed = await signing.sign(live, 'caps');
    const served = await signing.current(live);
    expect(signed.publicHash).toBe(scheme.publicHash(served));
    // Held now, the key is still refused inside one (the answer does not depend on the cache).
    await uow.runShared(async () => {
      await expect(signing.sign(live, 'caps', { fromMemory: true })).rejects.toThrow(refusal);
      await expect(signing.current(live)).rejects.toThrow(refusal);
    });
  });
});
