import type { PaymentProvider } from '@tollgate/core';
import { buyPlan, createTestCore, sampleCatalog, type TestCore } from '@tollgate/core/testing';
import { createTestDatabase, type TestDatabase } from '../src';

// Period close racing consumption on a PostgreSQL server (collected only with TEST_DATABASE_URL):
// two "instances" (cores with their own group commit) consume while both run the renewal sweep;
// the period closes once and every unit lands in exactly one period.
let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase('postgres', { poolSize: 20 });
});
afterAll(async () => {
  await db?.drop();
});

it('the renewal sweep racing consumers on two instances closes once; every unit is in exactly one period', async () => {
  const a: TestCore = createTestCore({ uow: db.uow });
  const b: TestCore = createTestCore({ uow: db.uow });
  // The fake provider lets the sweep renew, as the sandbox does.
  for (const core of [a, b]) (core.payments as PaymentProvider).renewedBySweep = () => ({});
  const org = await a.apiKeys.ensureOrganisation('race-close');
  const file = sampleCatalog('race-close');
  file.products?.[0].plans?.push({
    key: 'api',
    pricingType: 'paid',
    prices: { USD: 10 },
    usage: [{ meter: 'calls', allowance: 100000, rollover: 'all', unitPrices: { USD: 0.01 } }],
  });
  const keys = (await a.importer.apply(file)).keys;
  const tenant = { organisationId: org.id, isTest: false };
  const { subscription: s } = await buyPlan(a, keys['plans.notes.api'], 1, 'racer', 'fake');
  const after = new Date(s.currentPeriodEnd.getTime() + 1000);
  a.clock.set(after);
  b.clock.set(after);

  const consumers = Array.from({ length: 300 }, (_, i) =>
    (i % 2 ? a : b).usage.consume(tenant, { owner: s.id, meterSlug: 'calls', quantity: 3 }),
  );
  const sweeps = [a.sweeps.renewals(), b.sweeps.renewals(), a.sweeps.renewals()];
  const answers = await Promise.all(consumers);
  const renewed = (await Promise.all(sweeps)).reduce((n, x) => n + x, 0);
  expect(renewed).toBe(1);
  expect(answers.every((x) => x.allowed)).toBe(true);

  const closes = await db.uow.read((r) => r.usage.pageCloses(tenant, { limit: 10, owner: s.id }));
  expect(closes.items).toHaveLength(1);
  const [open] = await a.usage.balances(tenant, s.id, 'calls');
  // 900 units: some before the close (final), the rest after (the new period), none twice or lost.
  expect(closes.items[0].finalUsage + open.balance.used).toBe(900n);
  // All the old period left unused rolled over.
  expect(open.balance.granted).toBe(100000n + (100000n - closes.items[0].finalUsage));
  expect(await a.usage.verify()).toEqual([]);
});
