import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ProviderSnapshot, Subscription } from '@tollgate/core';
import { buyPlan, createTestCore, seedSample, type TestCore } from '@tollgate/core/testing';
import { createTestDatabase, type TestDatabase } from '../src';

// The provider's re-sync on a PostgreSQL server (collected only with TEST_DATABASE_URL): two
// "instances" (cores with their own services on one database) apply webhooks of one subscription
// at once, each fetching the provider's state with a latency of its own, as Stripe's concurrent
// deliveries do. Whatever the interleaving, what is applied last is the provider's latest state.
let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase('postgres', { poolSize: 20 });
});
afterAll(async () => {
  await db?.drop();
});

it('concurrent deliveries on two instances leave the latest fetched state, never an older one', async () => {
  const a: TestCore = createTestCore({ uow: db.uow });
  const b: TestCore = createTestCore({ uow: db.uow });
  const { tenant, keys } = await seedSample(a, `org-${randomUUID()}`);
  const { subscription } = await buyPlan(a, keys['plans.notes.team'], 2, 'alice');
  const s: Subscription = { ...subscription, paymentSubscriptionId: 'sub_pg_race' };
  await db.uow.run((r) => r.subscriptions.save(s));

  // The provider's seat count moves on while the deliveries run; a fetch reads it when it starts
  // and answers after a latency of 0 to 40 ms (a fetch that started earlier may answer later).
  let seats = 2;
  const fetchSeats = async (): Promise<ProviderSnapshot> => {
    const quantity = seats;
    await sleep(Math.floor(Math.random() * 40));
    return {
      status: 'ACTIVE',
      currentPeriodStart: s.currentPeriodStart,
      currentPeriodEnd: s.currentPeriodEnd,
      cancelAtPeriodEnd: false,
      canceledAt: null,
      quantity,
    };
  };
  const deliveries: Promise<unknown>[] = [];
  const refused: TestCore[] = [];
  for (let i = 0; i < 24; i++) {
    seats++;
    const core = i % 2 ? a : b;
    deliveries.push(core.providerSync.syncFetched('sub_pg_race', fetchSeats).catch(() => refused.push(core)));
    await sleep(5);
  }
  await Promise.all(deliveries);
  // A delivery refused after its attempts (a 503) is sent again by the provider later.
  for (const core of refused) await core.providerSync.syncFetched('sub_pg_race', fetchSeats);
  const held = await a.subscriptions.get(tenant, s.id);
  expect(held.subscription.quantity).toBe(seats);
  const live = (await a.licenses.list(tenant, {})).filter((l) => l.subscriptionId === s.id && l.status !== 'CANCELED');
  expect(live).toHaveLength(seats);
});
