import type { PaymentProvider } from '@tollgate/core';
import { buyPlan, createTestCore, sampleCatalog, type TestCore } from '@tollgate/core/testing';
import { Client } from 'pg';
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

it("a renewal locks a subscription's balances in the group commit's order (by balance id): a batch holding two of its meters does not deadlock with it", async () => {
  const core: TestCore = createTestCore({ uow: db.uow });
  (core.payments as PaymentProvider).renewedBySweep = () => ({});
  const org = await core.apiKeys.ensureOrganisation('two-meters');
  const file = sampleCatalog('two-meters');
  file.products?.[0].plans?.push({
    key: 'llm',
    pricingType: 'paid',
    prices: { USD: 10 },
    usage: [
      { meter: 'input_tokens', allowance: 1000, unitPrices: { USD: 0.01 } },
      { meter: 'output_tokens', allowance: 1000, unitPrices: { USD: 0.02 } },
    ],
  });
  const keys = (await core.importer.apply(file)).keys;
  const tenant = { organisationId: org.id, isTest: false };
  // A subscription whose balance ids run the other way from its meter ids (ids are random: buy until one does).
  let s;
  let low = '';
  let high = '';
  let bought = 0;
  for (let i = 0; i < 40 && !high; i++, bought++) {
    ({ subscription: s } = await buyPlan(core, keys['plans.notes.llm'], 1, `buyer-${i}`, 'fake'));
    const [x, y] = (await core.usage.balances(tenant, s.id)).sort((p, q) => (p.meter.id < q.meter.id ? -1 : 1));
    if (x.balance.id > y.balance.id) [low, high] = [y.balance.id, x.balance.id];
  }
  expect(high).not.toBe('');
  // A group-commit batch of this owner's two meters has locked the lower id and goes on to the higher.
  const batch = new Client({ connectionString: db.url });
  await batch.connect();
  try {
    await batch.query('begin');
    await batch.query('select id from usage_balances where id = $1 for update', [low]);
    core.clock.set(new Date(s!.currentPeriodEnd.getTime() + 1000));
    const renewal = core.sweeps.renewals();
    // The renewal is waiting now (on the lower id: it locks in the same order, holding none of the two).
    await new Promise((resolve) => setTimeout(resolve, 400));
    const next = await batch.query('select id from usage_balances where id = $1 for update', [high]).then(
      () => 'locked',
      (e: { code?: string }) => e.code,
    );
    await batch.query('commit');
    expect(next).toBe('locked');
    // Every subscription bought renews. Locking by meter, the renewal held the higher id and waited
    // on the lower: PostgreSQL found the cycle and aborted it (that subscription passed over).
    expect(await renewal).toBe(bought);
  } finally {
    await batch.end();
  }
  expect(await core.usage.verify()).toEqual([]);
});

it('holds committed on two instances while the renewal hands them to the next period: each commit lands once, in one period', async () => {
  const a: TestCore = createTestCore({ uow: db.uow });
  const b: TestCore = createTestCore({ uow: db.uow });
  for (const core of [a, b]) (core.payments as PaymentProvider).renewedBySweep = () => ({});
  const org = await a.apiKeys.ensureOrganisation('holds-close');
  const file = sampleCatalog('holds-close');
  file.products?.[0].plans?.push({
    key: 'api',
    pricingType: 'paid',
    prices: { USD: 10 },
    usage: [{ meter: 'calls', allowance: 100000, unitPrices: { USD: 0.01 } }],
  });
  const keys = (await a.importer.apply(file)).keys;
  const tenant = { organisationId: org.id, isTest: false };
  const { subscription: s } = await buyPlan(a, keys['plans.notes.api'], 1, 'holder', 'fake');
  const t = { owner: s.id, meterSlug: 'calls' };
  // 120 completions hold 5 each, reserved an hour before the period ends.
  a.clock.set(new Date(s.currentPeriodEnd.getTime() - 3_600_000));
  const holds = await Promise.all(Array.from({ length: 120 }, () => a.usage.reserve(tenant, { ...t, quantity: 5, ttlSeconds: 86_400 })));
  const after = new Date(s.currentPeriodEnd.getTime() + 1000);
  a.clock.set(after);
  b.clock.set(after);
  // Each commits 3 of its 5 on either instance while both run the renewal.
  const commits = holds.map((h, i) => (i % 2 ? a : b).usage.commit(tenant, h.holdId as string, { quantity: 3 }));
  const sweeps = [a.sweeps.renewals(), b.sweeps.renewals()];
  const answers = await Promise.all(commits);
  expect((await Promise.all(sweeps)).reduce((n, x) => n + x, 0)).toBe(1);
  expect(answers.every((x) => x.allowed)).toBe(true);
  const closes = await db.uow.read((r) => r.usage.pageCloses(tenant, { limit: 10, owner: s.id }));
  expect(closes.items).toHaveLength(1);
  const [open] = await a.usage.balances(tenant, s.id, 'calls');
  // 360 units committed: before the close in its final usage, after it in the new period; nothing still held.
  expect(closes.items[0].finalUsage + open.balance.used).toBe(360n);
  expect(open.balance.reserved).toBe(0n);
  expect(await a.usage.verify()).toEqual([]);
});

it('a plan move racing consumers and hold commits on two instances: every unit lands once, in the old plan’s close or the new plan’s period', async () => {
  const a: TestCore = createTestCore({ uow: db.uow });
  const b: TestCore = createTestCore({ uow: db.uow });
  const org = await a.apiKeys.ensureOrganisation('move-race');
  const file = sampleCatalog('move-race');
  // Two plans that meter `calls` at other prices without being usage-based: a plan change moves the subscription.
  for (const [key, price] of [
    ['calls_a', 0.01],
    ['calls_b', 0.02],
  ] as const)
    file.products?.[0].plans?.push({
      key,
      pricingType: 'paid',
      usageBased: false,
      prices: { USD: 10 },
      usage: [{ meter: 'calls', allowance: 100000, unitPrices: { USD: price } }],
    });
  const keys = (await a.importer.apply(file)).keys;
  const tenant = { organisationId: org.id, isTest: false };
  const { subscription: s } = await buyPlan(a, keys['plans.notes.calls_a'], 1, 'mover', 'fake');
  const t = { owner: s.id, meterSlug: 'calls' };
  const holds = await Promise.all(Array.from({ length: 60 }, () => a.usage.reserve(tenant, { ...t, quantity: 5, ttlSeconds: 3600 })));
  // Streams on either instance: 20 of 15 consumes of 3 and 6 of 10 hold commits of 3, one after
  // the other in each stream; instance a moves the plan once a fifth of them are answered.
  let answered = 0;
  const stream = async <T>(ops: (() => Promise<T>)[]) => {
    const out: T[] = [];
    for (const op of ops) {
      out.push(await op());
      answered += 1;
    }
    return out;
  };
  const consumes = Array.from({ length: 20 }, (_, i) =>
    stream(Array.from({ length: 15 }, () => () => (i % 2 ? a : b).usage.consume(tenant, { ...t, quantity: 3 }))),
  );
  const commits = Array.from({ length: 6 }, (_, i) =>
    stream(holds.slice(i * 10, i * 10 + 10).map((h) => () => (i % 2 ? b : a).usage.commit(tenant, h.holdId as string, { quantity: 3 }))),
  );
  while (answered < 72) await new Promise((resolve) => setImmediate(resolve));
  const moved = await a.subscriptions.changePlan(tenant, s.id, keys['plans.notes.calls_b'], 'none');
  const answers = (await Promise.all([...consumes, ...commits])).flat();
  expect(moved.kind).toBe('moved');
  expect(answers).toHaveLength(360);
  expect(answers.every((x) => x.allowed)).toBe(true);
  const closes = await db.uow.read((r) => r.usage.pageCloses(tenant, { limit: 10, owner: s.id }));
  expect(closes.items).toHaveLength(1);
  const [open] = await a.usage.balances(tenant, s.id, 'calls');
  // 900 consumed and 180 committed: before the move in the old plan's close, after it on the new plan's balance.
  expect(closes.items[0].finalUsage + open.balance.used).toBe(1080n);
  expect(open.balance).toMatchObject({ reserved: 0n, granted: 100000n });
  expect(await a.usage.verify()).toEqual([]);
});

it('a move locks every balance it closes or starts on first, in the group commit’s order: a batch holding a balance open on a meter only the target meters does not deadlock with it', async () => {
  const core: TestCore = createTestCore({ uow: db.uow });
  const org = await core.apiKeys.ensureOrganisation('move-locks');
  const file = sampleCatalog('move-locks');
  file.products?.[0].plans?.push(
    {
      key: 'calls_only',
      pricingType: 'paid',
      usageBased: false,
      prices: { USD: 10 },
      usage: [{ meter: 'calls', unitPrices: { USD: 0.01 } }],
    },
    {
      key: 'calls_extra',
      pricingType: 'paid',
      usageBased: false,
      prices: { USD: 10 },
      usage: [
        { meter: 'calls', unitPrices: { USD: 0.02 } },
        { meter: 'extra', maxUsage: 500, unitPrices: { USD: 0.05 } },
      ],
    },
  );
  const keys = (await core.importer.apply(file)).keys;
  const tenant = { organisationId: org.id, isTest: false };
  // A subscription whose balance on `extra` (recorded by hand: no plan of it meters `extra` yet)
  // has a lower id than its balance on `calls` (ids are random: buy until one does).
  let s;
  let stray = '';
  let calls = '';
  for (let i = 0; i < 40 && !stray; i++) {
    ({ subscription: s } = await buyPlan(core, keys['plans.notes.calls_only'], 1, `mover-${i}`, 'fake'));
    await core.usage.record(tenant, { owner: s.id, meterSlug: 'extra', quantity: 4 });
    const byMeter = new Map((await core.usage.balances(tenant, s.id)).map((b) => [b.meter.slug, b.balance.id]));
    if (byMeter.get('extra')! < byMeter.get('calls')!) [stray, calls] = [byMeter.get('extra')!, byMeter.get('calls')!];
  }
  expect(stray).not.toBe('');
  // A group-commit batch of this owner has locked the stray balance and goes on to the other.
  const batch = new Client({ connectionString: db.url });
  await batch.connect();
  try {
    await batch.query('begin');
    await batch.query('select id from usage_balances where id = $1 for update', [stray]);
    const move = core.subscriptions.changePlan(tenant, s!.id, keys['plans.notes.calls_extra'], 'none');
    // The move waits now, on the stray (it locks both in id order, holding neither).
    await new Promise((resolve) => setTimeout(resolve, 400));
    const next = await batch.query('select id from usage_balances where id = $1 for update', [calls]).then(
      () => 'locked',
      (e: { code?: string }) => e.code,
    );
    await batch.query('commit');
    // Closing `calls` first and then taking the stray over, the move held `calls` while it waited:
    // PostgreSQL found the cycle and aborted one of the two.
    expect(next).toBe('locked');
    expect((await move).kind).toBe('moved');
  } finally {
    await batch.end();
  }
  // The stray balance is the target's period now: its cap.
  expect((await core.usage.balances(tenant, s!.id, 'extra'))[0].balance).toMatchObject({ used: 4n, cap: 500n });
  expect(await core.usage.verify()).toEqual([]);
});
