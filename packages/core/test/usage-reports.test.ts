/* `usage.recorded` at most once a window per balance (docs/usage.md#webhooks): the domain rule, and
   the usage sweep that tells what waited when no write comes. */
import { reportUsage, UsageService, type Balance, type Repositories, type UnitOfWork } from '../src';
import { aBalance as balanceFixture, anOrganisation, aTenant, FixedClock, InMemoryUnitOfWork, RandomIds } from '../src/testing';
import { OutboxUnitOfWork } from '../src/usecases/webhooks/outbox';

const T = new Date('2026-03-01T00:00:00.000Z');
const at = (seconds: number) => new Date(T.getTime() + seconds * 1000);
const aBalance = (over: Partial<Balance> = {}): Balance => balanceFixture({ periodStart: T, createdAt: T, updatedAt: T, ...over });

describe('reportUsage', () => {
  it('reports a balance that never reported at once, and one whose last report is a window old', () => {
    const b = aBalance();
    expect(reportUsage(b, 5n, 1, at(0), 60_000)).toEqual({ quantity: 5n, operations: 1 });
    expect(b).toMatchObject({ unreported: 0n, unreportedOps: 0, reportedAt: at(0), reportDueAt: null });
    expect(reportUsage(b, 2n, 1, at(60), 60_000)).toEqual({ quantity: 2n, operations: 1 });
    expect(b.reportedAt).toEqual(at(60));
  });

  it('keeps usage within the window waiting, due a window after the last report, and tells it all once due', () => {
    const b = aBalance({ reportedAt: at(0) });
    expect(reportUsage(b, 3n, 2, at(10), 60_000)).toBeNull();
    expect(reportUsage(b, 4n, 1, at(59), 60_000)).toBeNull();
    expect(b).toMatchObject({ unreported: 7n, unreportedOps: 3, reportedAt: at(0), reportDueAt: at(60) });
    expect(reportUsage(b, 1n, 1, at(60), 60_000)).toEqual({ quantity: 8n, operations: 4 });
    expect(b).toMatchObject({ unreported: 0n, unreportedOps: 0, reportedAt: at(60), reportDueAt: null });
  });

  it('keeps the due time set by the writer that started the wait (an instance with another window)', () => {
    const b = aBalance({ reportedAt: at(0), unreported: 1n, unreportedOps: 1, reportDueAt: at(30) });
    // This writer's window is 60 s, but the wait started under 30 s: due at 30 s.
    expect(reportUsage(b, 1n, 1, at(31), 60_000)).toEqual({ quantity: 2n, operations: 2 });
  });

  it('a write that used nothing reports only what is due; a closed balance tells what waits at once; window 0 tells every write', () => {
    const waiting = aBalance({ reportedAt: at(0), unreported: 4n, unreportedOps: 2, reportDueAt: at(60) });
    expect(reportUsage(waiting, 0n, 0, at(30), 60_000)).toBeNull();
    expect(reportUsage(waiting, 0n, 0, at(61), 60_000)).toEqual({ quantity: 4n, operations: 2 });
    expect(reportUsage(aBalance({ reportedAt: at(0) }), 0n, 0, at(61), 60_000)).toBeNull();
    const closing = aBalance({ reportedAt: at(0), unreported: 4n, unreportedOps: 2, reportDueAt: at(60), closedAt: at(10) });
    expect(reportUsage(closing, 0n, 0, at(10), 60_000)).toEqual({ quantity: 4n, operations: 2 });
    const busy = aBalance({ reportedAt: at(0) });
    expect(reportUsage(busy, 1n, 1, at(1), 0)).toEqual({ quantity: 1n, operations: 1 });
    expect(reportUsage(busy, 1n, 1, at(1), 0)).toEqual({ quantity: 1n, operations: 1 });
  });
});

/** A unit of work whose balance lock fails for one owner (a broken balance). */
class BrokenFor implements UnitOfWork {
  constructor(
    private readonly inner: UnitOfWork,
    private readonly owner: string,
  ) {}
  private wrap(r: Repositories): Repositories {
    return {
      ...r,
      usage: {
        ...r.usage,
        lockBalances: async (items, now) => {
          if (items.some((i) => i.fresh.owner === this.owner)) throw new Error(`the balance of ${this.owner} is broken`);
          return r.usage.lockBalances(items, now);
        },
      },
    };
  }
  run<T>(work: (r: Repositories) => Promise<T>): Promise<T> {
    return this.inner.run((r) => work(this.wrap(r)));
  }
  read<T>(work: (r: Repositories) => Promise<T>): Promise<T> {
    return this.inner.read((r) => work(this.wrap(r)));
  }
}

/** A memory database with one organisation and its meter `tokens`, and usage services over it (a window of 60 s). */
async function sweepWorld() {
  const memory = new InMemoryUnitOfWork();
  const org = anOrganisation();
  await memory.run((r) => r.organisations.save(org));
  const clock = new FixedClock(T);
  const ids = new RandomIds();
  const logged: unknown[] = [];
  const logger = {
    error: (message: string, fields?: Record<string, unknown>) => logged.push({ message, ...fields }),
    info: () => undefined,
  };
  /** A usage service over `uow` (the memory database, or a wrapper of it). */
  const serviceOn = (uow: UnitOfWork) =>
    new UsageService({
      uow: new OutboxUnitOfWork(uow, { clock, ids, events: { wake: () => undefined }, usageEventWindowMs: 60_000 }),
      clock,
      ids,
      logger,
    });
  const usage = serviceOn(memory);
  const tenant = aTenant(org);
  await usage.createMeter(tenant, { slug: 'tokens', name: 'Tokens' });
  return { memory, tenant, clock, logged, serviceOn, usage };
}

it('the sweep tells what waited on every balance but a broken one, logs that one, and still forgets old keys', async () => {
  const { memory, tenant, clock, logged, serviceOn, usage } = await sweepWorld();
  const owners = ['good-1', 'broken', 'good-2'];
  for (const owner of owners) await usage.record(tenant, { owner, meterSlug: 'tokens', quantity: 1 }); // told at once
  await usage.record(tenant, { owner: 'good-1', meterSlug: 'tokens', quantity: 1 }, 'old-key');
  clock.set(at(30));
  for (const owner of owners) await usage.record(tenant, { owner, meterSlug: 'tokens', quantity: 2 }); // waits
  clock.set(at(25 * 3600));
  await expect(serviceOn(new BrokenFor(memory, 'broken')).sweep()).resolves.toBe(3);
  const told = (await memory.read((r) => r.outbox.page(tenant, { limit: 50, types: ['usage.recorded'] }))).items.map(
    (e) => (e.payload as { data: { owner: string; quantity: number } }).data,
  );
  expect(owners.map((o) => told.filter((d) => d.owner === o).map((d) => d.quantity))).toEqual([[1, 3], [1], [1, 2]]);
  expect(logged).toEqual([expect.objectContaining({ message: 'usage sweep: a balance failed', error: expect.stringContaining('broken') })]);
  // The key's 24 hours are over and it was forgotten: the same key with another body counts anew (no 409).
  await expect(usage.record(tenant, { owner: 'good-1', meterSlug: 'tokens', quantity: 5 }, 'old-key')).resolves.toMatchObject({
    used: '9',
  });
});

it('the sweep does not open again a due balance whose period closed after it was found (it settles only what exists)', async () => {
  const { memory, tenant, clock, serviceOn, usage } = await sweepWorld();
  await usage.record(tenant, { owner: 'leaving', meterSlug: 'tokens', quantity: 1 });
  clock.set(at(30));
  await usage.record(tenant, { owner: 'leaving', meterSlug: 'tokens', quantity: 1 }); // waits
  clock.set(at(61));
  const found = await memory.read((r) => r.usage.balancesWithDueReports(clock.now(), 10));
  expect(found.map((b) => b.owner)).toEqual(['leaving']);
  // Its period closes with no next one (a cancellation) between the sweep's read and its lock.
  const [open] = await memory.read((r) => r.usage.openBalances(tenant, 'leaving'));
  await memory.run((r) => r.usage.write({ balance: { ...open, closedAt: clock.now() }, grants: [], holds: [], entries: [], keys: [] }));
  const stale: UnitOfWork = {
    run: (work) => memory.run(work),
    read: (work) => memory.read((r) => work({ ...r, usage: { ...r.usage, balancesWithDueReports: async () => found } })),
  };
  const sweeping = serviceOn(stale);
  await sweeping.sweep();
  expect(await memory.read((r) => r.usage.openBalances(tenant, 'leaving'))).toEqual([]);
});
