/* A number of seats asked for while the worker commits the change before it, on a PostgreSQL
   server (each statement of a transaction sees what was committed when it began). */
import type { Repositories, UnitOfWork } from '@tollgate/core';
import { buyPlan, createTestCore, seedSample, type TestCore } from '@tollgate/core/testing';
import { createTestDatabase, type TestDatabase } from '../src';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase('postgres');
});
afterAll(() => db?.drop());

/** The database's unit of work; `beforeHasOpen` runs (once) just before a transaction asks whether a change waits. */
class Hooked implements UnitOfWork {
  beforeHasOpen: (() => Promise<void>) | undefined;
  constructor(private readonly inner: UnitOfWork) {}
  read<T>(work: (r: Repositories) => Promise<T>): Promise<T> {
    return this.inner.read(work);
  }
  run<T>(work: (r: Repositories) => Promise<T>): Promise<T> {
    return this.inner.run((r) => {
      const events = r.events;
      const hooked = {
        ...events,
        hasOpen: async (id: string) => {
          const hook = this.beforeHasOpen;
          this.beforeHasOpen = undefined;
          await hook?.();
          return events.hasOpen(id);
        },
      };
      return work(new Proxy(r, { get: (t, k) => (k === 'events' ? hooked : Reflect.get(t, k)) }));
    });
  }
}

it('is not dropped as "held" when the change before it commits while it is being decided', async () => {
  const uow = new Hooked(db.uow);
  const core: TestCore = createTestCore({ uow });
  const { tenant, keys } = await seedSample(core, 'seat-quantity');
  const { subscription: s } = await buyPlan(core, keys['plans.notes.team'], 5, 'alice');
  await core.seats.requestQuantity(tenant, s.id, 7, 'none');
  // The worker applies 5 -> 7 (quantity and event done in one commit) while 5 is being asked for.
  uow.beforeHasOpen = async () => {
    expect(await core.worker.processNext()).toBe(true);
  };
  expect(await core.seats.requestQuantity(tenant, s.id, 5, 'none')).not.toBeNull();
  while (await core.worker.processNext());
  expect((await core.subscriptions.get(tenant, s.id)).subscription.quantity).toBe(5);
});
