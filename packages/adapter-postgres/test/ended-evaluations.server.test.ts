/* Two instances sweeping ended evaluation licenses at once, on a PostgreSQL server (collected only
   with TEST_DATABASE_URL): each license is ended once, with one `license.cancelled` event. The
   sweep locks each batch (id order) and checks each license again under its lock, so the second
   sweep waits for the first, then finds the licenses CANCELED and writes nothing. */
import type { License, Repositories, Tenant, UnitOfWork } from '@tollgate/core';
import { createTestCore, seedSample, type TestCore } from '@tollgate/core/testing';
import { createTestDatabase, type TestDatabase } from '../src';

const DAY = 86_400_000;
let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase('postgres', { poolSize: 6 });
});
afterAll(() => db?.drop());

/** The database's unit of work, running a hook (once) after a transaction locked licenses. */
class Hooked implements UnitOfWork {
  hook: ((locked: License[]) => Promise<void>) | undefined;
  constructor(private readonly inner: UnitOfWork) {}
  read<T>(work: (r: Repositories) => Promise<T>): Promise<T> {
    return this.inner.read(work);
  }
  run<T>(work: (r: Repositories) => Promise<T>): Promise<T> {
    return this.inner.run((r) =>
      work({
        ...r,
        licenses: {
          ...r.licenses,
          getManyForUpdate: async (ids: string[]) => {
            const locked = await r.licenses.getManyForUpdate(ids);
            const hook = this.hook;
            this.hook = undefined;
            await hook?.(locked);
            return locked;
          },
        },
      }),
    );
  }
}

async function evaluations(core: TestCore, tenant: Tenant, plan: string, n: number): Promise<License[]> {
  const made: License[] = [];
  for (let at = 0; at < n; at += 100) {
    const grantees = Array.from({ length: Math.min(100, n - at) }, (_, i) => `g${at + i}`);
    made.push(
      ...(
        await core.licenses.createAdHoc(
          tenant,
          grantees.map((granteeId) => ({ planUuid: plan, member: 'm@example.com', granteeId })),
        )
      ).licenses,
    );
  }
  return made;
}

const cancelledKeys = async (core: TestCore, tenant: Tenant) =>
  (await core.webhookEvents.list(tenant, { limit: 1000, types: ['license.cancelled'] })).items.map((e) => e.orderingKey);

it('a sweep that finds a batch locked waits, then writes none of it again: one event per license', async () => {
  const uow = new Hooked(db.uow);
  const a = createTestCore({ uow });
  const b = createTestCore({ uow: db.uow });
  const { tenant, keys } = await seedSample(a, 'ended-evaluations-wait');
  const made = await evaluations(a, tenant, keys['plans.notes.team'], 3);
  const later = new Date(a.clock.now().getTime() + 15 * DAY);
  a.clock.set(later);
  b.clock.set(later);
  let second: { settledEarly: boolean; ended: Promise<number> } | undefined;
  // Sweep a holds the licenses' locks: sweep b runs now, and must wait for a's commit.
  uow.hook = async (locked) => {
    expect(locked.map((l) => l.status)).toEqual(['EVALUATION', 'EVALUATION', 'EVALUATION']);
    let settled = false;
    const ended = b.sweeps.endedEvaluations();
    void ended.then(() => (settled = true));
    await new Promise((resolve) => setTimeout(resolve, 300));
    second = { settledEarly: settled, ended };
  };
  expect(await a.sweeps.endedEvaluations()).toBe(3);
  expect(second?.settledEarly).toBe(false);
  expect(await second?.ended).toBe(0);
  expect((await a.licenses.list(tenant, {})).map((l) => l.status)).toEqual(['CANCELED', 'CANCELED', 'CANCELED']);
  expect((await cancelledKeys(a, tenant)).sort()).toEqual(made.map((l) => l.id).sort());
});

it('two sweeps over many licenses at once end each once, without a deadlock', async () => {
  const a = createTestCore({ uow: db.uow });
  const b = createTestCore({ uow: db.uow });
  const { tenant, keys } = await seedSample(a, 'ended-evaluations-race');
  const made = await evaluations(a, tenant, keys['plans.notes.team'], 350);
  const later = new Date(a.clock.now().getTime() + 15 * DAY);
  a.clock.set(later);
  b.clock.set(later);
  const [x, y] = await Promise.all([a.sweeps.endedEvaluations(), b.sweeps.endedEvaluations()]);
  expect(x + y).toBe(350);
  const keysOf = await cancelledKeys(a, tenant);
  expect(keysOf).toHaveLength(350);
  expect(new Set(keysOf)).toEqual(new Set(made.map((l) => l.id)));
  expect(await a.licenses.count(tenant, { status: 'EVALUATION' })).toMatchObject({ count: 0 });
});
