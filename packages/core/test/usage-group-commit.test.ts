import { AsyncLocalStorage } from 'node:async_hooks';
import { DomainError, ErrorCodes, exactNumber, MAX_COUNTER, UsageService, type Repositories, type UnitOfWork } from '../src';
import { expectLedgerMatches, InMemoryUnitOfWork, RandomIds, usageWorld } from '../src/testing';
import { GroupCommit } from '../src/usecases/usage/group-commit';

type Write = Parameters<Repositories['usage']['write']>[0];

/**
 * A unit of work over the in-memory one whose usage writes pass through `onWrite` first (each
 * balance's write), and whose multi-balance writes are told to `onWriteMany` (one call a transaction).
 */
class TappedUnitOfWork implements UnitOfWork {
  constructor(
    private readonly inner: UnitOfWork,
    private readonly onWrite: (batch: Write) => void,
    private readonly onWriteMany: (batches: Write[]) => void = () => undefined,
    /** Awaited once a batch's locks are taken, before it decides (a lock that takes its time). */
    private readonly onLocked: () => Promise<void> = async () => undefined,
  ) {}
  run<T>(work: (r: Repositories) => Promise<T>): Promise<T> {
    return this.inner.run((r) => work(this.tap(r)));
  }
  read<T>(work: (r: Repositories) => Promise<T>): Promise<T> {
    return this.inner.read(work);
  }
  private tap(r: Repositories): Repositories {
    const usage = new Proxy(r.usage, {
      get: (target, name, receiver) => {
        if (name === 'write')
          return async (batch: Parameters<Repositories['usage']['write']>[0]) => {
            this.onWrite(batch);
            return target.write(batch);
          };
        if (name === 'lockBalances')
          return async (...args: Parameters<Repositories['usage']['lockBalances']>) => {
            const locked = await target.lockBalances(...args);
            await this.onLocked();
            return locked;
          };
        if (name === 'writeMany')
          return async (batches: Write[]) => {
            this.onWriteMany(batches);
            for (const b of batches) this.onWrite(b);
            return target.writeMany(batches);
          };
        const v = Reflect.get(target, name, receiver) as unknown;
        return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
      },
    });
    return new Proxy(r, { get: (target, name, receiver) => (name === 'usage' ? usage : Reflect.get(target, name, receiver)) });
  }
}

describe('group commit', () => {
  it('one operation failing its batch does not fail the others: each is decided alone and gets its own answer', async () => {
    const uow = new TappedUnitOfWork(new InMemoryUnitOfWork(), (batch) => {
      if (batch.entries.some((e) => e.quantity === 13n)) throw new Error('poisoned write');
    });
    const w = await usageWorld(uow);
    await w.usage.createMeter(w.tenant, { slug: 'calls', name: 'Calls' });
    const t = { owner: 'acme', meterSlug: 'calls' };
    // The first starts a transaction alone; the next four queue meanwhile and share the next batch.
    const answers = await Promise.allSettled([1, 2, 13, 4, 5].map((quantity) => w.usage.record(w.tenant, { ...t, quantity })));
    expect(answers.map((a) => a.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled', 'fulfilled']);
    expect((answers[2] as PromiseRejectedResult).reason).toEqual(new Error('poisoned write'));
    const [b] = await w.usage.balances(w.tenant, 'acme', 'calls');
    expect(b.balance.used).toBe(12n);
    await expectLedgerMatches(w, 'acme');
  });

  it('a batch tried again after a CONFLICT decides its new grant afresh: a draw on it is not counted twice', async () => {
    let conflicts = 1;
    const uow = new TappedUnitOfWork(new InMemoryUnitOfWork(), (batch) => {
      if (conflicts > 0 && batch.entries.some((e) => e.kind === 'grant')) {
        conflicts--;
        throw new DomainError(ErrorCodes.CONFLICT, 'a racing writer took a key');
      }
    });
    const w = await usageWorld(uow);
    await w.usage.createMeter(w.tenant, { slug: 'calls', name: 'Calls' });
    const t = { owner: 'acme', meterSlug: 'calls' };
    // The first starts a transaction alone; the grant and the consume queue meanwhile and share the next batch.
    const [, granted, consumed] = await Promise.all([
      w.usage.record(w.tenant, { ...t, quantity: 1 }),
      w.usage.grant(w.tenant, { ...t, amount: 100 }),
      w.usage.consume(w.tenant, { ...t, quantity: 30 }),
    ]);
    expect(conflicts).toBe(0);
    expect(granted.allowed && consumed.allowed).toBe(true);
    const [b] = await w.usage.balances(w.tenant, 'acme', 'calls');
    expect(b.balance).toMatchObject({ granted: 100n, used: 31n });
    const grants = await w.uow.run(async (r) => (await r.usage.lockBalance(b.balance, [], w.clock.now())).grants);
    // The record (1) came before the grant: overage. The consume drew 30, once.
    expect(grants.map((g) => [g.amount, g.drawn])).toEqual([[100n, 30n]]);
    await expectLedgerMatches(w, 'acme');
  });

  it('a database outage fails the whole batch without trying its operations again one by one', async () => {
    let writes = 0;
    let down = false;
    const uow = new TappedUnitOfWork(new InMemoryUnitOfWork(), () => {
      writes++;
      if (down) throw new DomainError(ErrorCodes.DATABASE_UNAVAILABLE, 'the database is unavailable');
    });
    const w = await usageWorld(uow);
    await w.usage.createMeter(w.tenant, { slug: 'calls', name: 'Calls' });
    await w.usage.record(w.tenant, { owner: 'acme', meterSlug: 'calls', quantity: 1 });
    const first = w.usage.record(w.tenant, { owner: 'acme', meterSlug: 'calls', quantity: 1 });
    down = true;
    writes = 0;
    const rest = [2, 3, 4].map((quantity) => w.usage.record(w.tenant, { owner: 'acme', meterSlug: 'calls', quantity }));
    const settled = await Promise.allSettled([first, ...rest]);
    expect(settled.map((s) => s.status)).toEqual(['rejected', 'rejected', 'rejected', 'rejected']);
    // One failed batch (the first, which the three joined while it took its locks) or two, never
    // one more transaction per operation.
    expect(writes).toBeLessThanOrEqual(2);
  });

  it("runs the shared transaction outside every caller's async context", async () => {
    const als = new AsyncLocalStorage<string>();
    const seen: (string | undefined)[] = [];
    const uow = new TappedUnitOfWork(new InMemoryUnitOfWork(), () => seen.push(als.getStore()));
    const w = await usageWorld(uow);
    await w.usage.createMeter(w.tenant, { slug: 'calls', name: 'Calls' });
    const after: (string | undefined)[] = [];
    await Promise.all(
      ['request-a', 'request-b', 'request-c'].map((id) =>
        als.run(id, async () => {
          await w.usage.record(w.tenant, { owner: 'acme', meterSlug: 'calls', quantity: 1 });
          after.push(als.getStore());
        }),
      ),
    );
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.every((s) => s === undefined)).toBe(true);
    // Each caller goes on in its own context once answered.
    expect(after.sort()).toEqual(['request-a', 'request-b', 'request-c']);
  });

  it('operations on different balances share transactions, each balance exact', async () => {
    const transactions: number[] = [];
    const uow = new TappedUnitOfWork(
      new InMemoryUnitOfWork(),
      () => undefined,
      (batches) => transactions.push(batches.length),
    );
    const w = await usageWorld(uow);
    await w.usage.createMeter(w.tenant, { slug: 'calls', name: 'Calls' });
    const owners = Array.from({ length: 40 }, (_, i) => `owner-${i}`);
    await Promise.all(owners.map((owner) => w.usage.grant(w.tenant, { owner, meterSlug: 'calls', amount: 10 })));
    transactions.length = 0;
    // Three consumes of 4 per owner, all at once: two are allowed (8 of 10), the third is denied.
    const answers = await Promise.all(
      [0, 1, 2].flatMap(() => owners.map((owner) => w.usage.consume(w.tenant, { owner, meterSlug: 'calls', quantity: 4 }))),
    );
    expect(answers.filter((a) => a.allowed)).toHaveLength(80);
    // Far fewer transactions than operations: balances that queued together were written together.
    expect(transactions.length).toBeLessThan(40);
    expect(Math.max(...transactions)).toBeGreaterThan(1);
    for (const owner of owners) {
      const [b] = await w.usage.balances(w.tenant, owner, 'calls');
      expect(b.balance.used).toBe(8n);
    }
    expect(await w.usage.verify()).toEqual([]);
  });
});

describe('group commit, transactions at once', () => {
  /**
   * A group commit over a unit of work counting the transactions begun. Once gated, batches wait at
   * the gate once their locks are taken (`atLocks`), or only the first one does, before it begins
   * (the in-memory database runs its transactions one after another, so a batch stuck inside one
   * would hold up the others there, whatever the group commit did).
   */
  async function gated(stallMs: number, where: 'atLocks' | 'firstBeforeBegin') {
    const held: { gate?: Promise<void> } = {};
    const count = { started: 0 };
    const tapped = new TappedUnitOfWork(
      new InMemoryUnitOfWork(),
      () => undefined,
      () => undefined,
      () => (where === 'atLocks' && held.gate) || Promise.resolve(),
    );
    const uow: UnitOfWork = {
      run: async (work) => {
        if (++count.started === 1 && where === 'firstBeforeBegin' && held.gate) await held.gate;
        return tapped.run(work);
      },
      read: (work) => tapped.read(work),
    };
    const w = await usageWorld(uow);
    await w.usage.createMeter(w.tenant, { slug: 'calls', name: 'Calls' });
    const meter = await w.usage.meter(w.tenant, 'calls');
    const group = new GroupCommit({ uow, clock: w.clock, ids: new RandomIds() }, true, undefined, stallMs);
    const record = (owner: string) => group.submit({ tenant: w.tenant, owner, meter }, { kind: 'record', quantity: 1n }, undefined, '');
    const owners = (n: number, from = 0) => Array.from({ length: n }, (_, i) => `owner-${from + i}`);
    await Promise.all(owners(200).map(record));
    let open!: () => void;
    held.gate = new Promise<void>((resolve) => (open = resolve));
    count.started = 0;
    return { w, record, owners, count, open };
  }
  const settle = async () => {
    for (let i = 0; i < 10; i++) await new Promise((r) => setImmediate(r));
  };

  it('runs one transaction while less than a whole batch waits, and another as soon as a whole batch (64 balances) waits', async () => {
    const { w, record, owners, count, open } = await gated(60_000, 'atLocks');
    // A batch holds its locks: 63 more balances queue behind it, less than a whole batch.
    const first = record('owner-0');
    await settle();
    const waiting = owners(63, 1).map(record);
    await settle();
    expect(count.started).toBe(1);
    // The 64th waiting balance makes a whole batch: a second transaction starts at once.
    const more = [record('owner-64'), ...owners(10, 65).map(record)];
    await settle();
    expect(count.started).toBe(2);
    open();
    await Promise.all([first, ...waiting, ...more]);
    const [b] = await w.usage.balances(w.tenant, 'owner-64', 'calls');
    expect(b.balance.used).toBe(2n);
    expect(await w.usage.verify()).toEqual([]);
  });

  it('a stuck transaction does not hold up other balances: what waited STALL_MS behind it gets a transaction of its own', async () => {
    const { w, record, count, open } = await gated(30, 'firstBeforeBegin');
    // The first batch never finishes (its balance locked elsewhere, say) until the end of the test.
    let firstDone = false;
    const first = record('owner-0').then(() => (firstDone = true));
    await settle();
    const started = performance.now();
    // Another balance, a few operations: answered while the first batch is still stuck.
    await Promise.all([record('owner-1'), record('owner-2'), record('owner-1')]);
    expect(performance.now() - started).toBeGreaterThanOrEqual(25);
    expect(firstDone).toBe(false);
    expect(count.started).toBe(2);
    open();
    await first;
    const [b] = await w.usage.balances(w.tenant, 'owner-1', 'calls');
    expect(b.balance.used).toBe(3n);
    expect(await w.usage.verify()).toEqual([]);
  });
});

describe('group commit, a batch waiting for its locks', () => {
  it('takes what queued on its balances meanwhile, decided after its own in arrival order, in the same transaction', async () => {
    let gated = false;
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const transactions: Write[][] = [];
    const uow = new TappedUnitOfWork(
      new InMemoryUnitOfWork(),
      () => undefined,
      (batches) => transactions.push(batches),
      async () => {
        if (gated) await gate;
      },
    );
    const w = await usageWorld(uow);
    await w.usage.createMeter(w.tenant, { slug: 'calls', name: 'Calls' });
    await w.usage.grant(w.tenant, { owner: 'acme', meterSlug: 'calls', amount: 10 });
    transactions.length = 0;
    gated = true;
    const consume = (quantity: number) => w.usage.consume(w.tenant, { owner: 'acme', meterSlug: 'calls', quantity });
    const first = consume(4);
    await new Promise((resolve) => setTimeout(resolve, 20));
    // The first batch holds its lock and waits: these queue behind it.
    const later = [4, 4, 1].map(consume);
    await new Promise((resolve) => setTimeout(resolve, 20));
    open();
    const answers = await Promise.all([first, ...later]);
    // 4 and 4 taken (8 of 10), the next 4 denied (2 left), then 1 taken: arrival order.
    expect(answers.map((a) => a.allowed)).toEqual([true, true, false, true]);
    expect(transactions).toHaveLength(1);
    expect(transactions[0].flatMap((b) => b.entries.map((e) => e.quantity))).toEqual([4n, 4n, 1n]);
    await expectLedgerMatches(w, 'acme');
  });

  it('leaves a commit or release that queued meanwhile, and what queued behind it, to the next batch', async () => {
    let gated = false;
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const transactions: Write[][] = [];
    const uow = new TappedUnitOfWork(
      new InMemoryUnitOfWork(),
      () => undefined,
      (batches) => transactions.push(batches),
      async () => {
        if (gated) await gate;
      },
    );
    const w = await usageWorld(uow);
    await w.usage.createMeter(w.tenant, { slug: 'calls', name: 'Calls' });
    await w.usage.grant(w.tenant, { owner: 'acme', meterSlug: 'calls', amount: 10 });
    const hold = await w.usage.reserve(w.tenant, { owner: 'acme', meterSlug: 'calls', quantity: 5, ttlSeconds: 60 });
    const target = { tenant: w.tenant, owner: 'acme', meter: await w.usage.meter(w.tenant, 'calls') };
    // The group commit itself (the use case's commit reads the hold first, which the in-memory
    // database would only answer after the gated transaction).
    const group = new GroupCommit({ uow, clock: w.clock, ids: new RandomIds() });
    transactions.length = 0;
    gated = true;
    const first = group.submit(target, { kind: 'consume', quantity: 1n }, undefined, '');
    await new Promise((resolve) => setTimeout(resolve, 20));
    const commit = group.submit(target, { kind: 'commit', holdId: hold.holdId as string, quantity: 2n }, undefined, '');
    const after = group.submit(target, { kind: 'consume', quantity: 6n }, undefined, '');
    await new Promise((resolve) => setTimeout(resolve, 20));
    open();
    const answers = await Promise.all([first, commit, after]);
    // 1 taken, the hold commits 2 (3 return), then 6 of the 7 left taken: arrival order.
    expect(answers.map((a) => a.allowed)).toEqual([true, true, true]);
    expect(transactions).toHaveLength(2);
    expect(transactions[0].flatMap((b) => b.entries.map((e) => e.kind))).toEqual(['consume']);
    await expectLedgerMatches(w, 'acme');
    const [b] = await w.usage.balances(w.tenant, 'acme', 'calls');
    expect({ used: b.balance.used, reserved: b.balance.reserved }).toEqual({ used: 9n, reserved: 0n });
  });
});

describe('without group commit (the benchmark baseline)', () => {
  it('writes each operation in a transaction of its own, still exact', async () => {
    let writes = 0;
    const uow = new TappedUnitOfWork(new InMemoryUnitOfWork(), () => writes++);
    const w = await usageWorld(uow);
    const usage = new UsageService({ uow, clock: w.clock, ids: new RandomIds(), limits: { usageGroupCommit: false } });
    await usage.createMeter(w.tenant, { slug: 'calls', name: 'Calls' });
    await usage.grant(w.tenant, { owner: 'acme', meterSlug: 'calls', amount: 100 });
    writes = 0;
    const answers = await Promise.all(
      Array.from({ length: 30 }, () => usage.consume(w.tenant, { owner: 'acme', meterSlug: 'calls', quantity: 7 })),
    );
    expect(answers.filter((a) => a.allowed)).toHaveLength(14);
    expect(writes).toBe(14); // one transaction per allowed operation (a denial writes nothing)
    expect(await usage.verify()).toEqual([]);
  });
});

describe('quantities as JSON numbers', () => {
  it('are exact up to the largest counter and refused, not rounded, past 2^53 - 1', () => {
    expect(exactNumber(MAX_COUNTER)).toBe(1e15);
    expect(exactNumber('9007199254740991')).toBe(Number.MAX_SAFE_INTEGER);
    expect(() => exactNumber(2n ** 53n + 1n)).toThrow(RangeError);
    expect(() => exactNumber('-9007199254740993')).toThrow(RangeError);
  });
});
