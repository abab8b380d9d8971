import {
  CHECK_GRANTEES_MAX,
  EntitlementCache,
  GRANTEE_ID_MAX_LENGTH,
  KEPT_ANSWER_MAX_WEIGHT,
  KEPT_ANSWERS_MAX_WEIGHT,
  SNAPSHOT_KEY_CHARS,
  WeightedLru,
} from '../src';
import { createTestCore, seedSample, type TestCore } from '../src/testing';

// The resource audit: the check kept every question asked (the snapshot LRU, 200 000 entries, keyed
// `product|grantee`) and every answer asked twice (2 000, with its rendering) whatever their size: 15 KB
// grantee ids, or a 400 000-character capability name (1.2 MB an answer), ran the server out of heap.

describe('WeightedLru', () => {
  it('holds at most its weight as well as its entries, and refuses an entry weighing more than half of it', () => {
    const lru = new WeightedLru<string, number>(1_000, 100, (key) => key.length);
    for (let i = 0; i < 100; i++) lru.set(`${i}`.padStart(10, '0'), i);
    expect(lru.weight).toBeLessThanOrEqual(100);
    expect(lru.size).toBeLessThanOrEqual(10);
    expect(lru.get('0000000099')).toBe(99);
    expect(lru.set('x'.repeat(51), 1)).toBe(false);
    expect(lru.peek('x'.repeat(51))).toBeUndefined();
    lru.delete('0000000099');
    expect([...lru.keys()].reduce((n, k) => n + k.length, 0)).toBe(lru.weight);
    lru.clear();
    expect(lru.weight).toBe(0);
  });
});

describe('the entitlement cache is bounded in key characters', () => {
  it('full of the longest grantee ids it holds a fraction of its capacity', () => {
    const cache = new EntitlementCache(10_000);
    cache.setLive(true, 0);
    const product = '00000000-0000-4000-8000-000000000000';
    for (let i = 0; i < 10_000; i++) {
      const grantee = `${i}-`.padEnd(GRANTEE_ID_MAX_LENGTH, 'x');
      cache.storeSnapshots(cache.mark(), product, new Map([[grantee, []]]));
    }
    const keyChars = product.length + 1 + GRANTEE_ID_MAX_LENGTH;
    expect(cache.stats().entries).toBeLessThanOrEqual(Math.floor((10_000 * SNAPSHOT_KEY_CHARS) / keyChars));
    // Short ids: its capacity, as before.
    const short = new EntitlementCache(1_000);
    short.setLive(true, 0);
    for (let i = 0; i < 999; i++) short.storeSnapshots(short.mark(), product, new Map([[`user-${i}@example.com`, []]]));
    expect(short.stats().entries).toBe(999);
  });
});

describe('the capability check', () => {
  let core: TestCore;
  let tenant: { organisationId: string; isTest: boolean };
  let keys: Record<string, string>;
  beforeAll(async () => {
    core = createTestCore();
    await core.listen();
    ({ tenant, keys } = await seedSample(core, 'check-bounds'));
    await core.checkout.completePurchase({
      planId: keys['plans.notes.team'],
      member: 'buyer@example.com',
      email: null,
      granteeId: 'ann',
      quantity: 2,
      currency: 'USD',
      paymentProvider: 'fake',
      paymentSubscriptionId: null,
      paymentCustomerId: null,
    });
  });
  const check = (granteeIds: string[]) =>
    core.checks.check(tenant, { productId: keys['products.notes'], granteeIds, graceDays: 0, encoding: 'der' });

  it('refuses more grantees, or a longer grantee id, than it may be asked (400 naming granteeIds)', async () => {
    const many = Array.from({ length: CHECK_GRANTEES_MAX + 1 }, (_, i) => `g${i}`);
    await expect(check(many)).rejects.toMatchObject({ code: 'VALIDATION_FAILED', details: [{ property: 'granteeIds' }] });
    await expect(check(['x'.repeat(GRANTEE_ID_MAX_LENGTH + 1)])).rejects.toMatchObject({
      code: 'VALIDATION_FAILED',
      details: [{ property: 'granteeIds' }],
    });
    await expect(check(many.slice(0, CHECK_GRANTEES_MAX))).resolves.toBeNull();
    await expect(check(['x'.repeat(GRANTEE_ID_MAX_LENGTH)])).resolves.toBeNull();
  });

  it('keeps an ordinary answer, but not one heavier than KEPT_ANSWER_MAX_WEIGHT', async () => {
    expect(KEPT_ANSWERS_MAX_WEIGHT).toBeGreaterThanOrEqual(2_000 * 1_000);
    const asked = [];
    for (let i = 0; i < 3; i++) asked.push(await check(['ann']));
    expect(asked[0]?.capabilities).toEqual(['edit', 'export']);
    // Asked again with everything in memory: the kept answer, the very object.
    expect(asked[2]).toBe(asked[1]);

    const product = await core.uow.read((r) => r.products.get(keys['products.notes']));
    const edit = product!.capabilities.find((c) => c.name === 'edit')!;
    const long = 'e'.repeat(KEPT_ANSWER_MAX_WEIGHT);
    await core.entitlementAdmin.rename(tenant, edit.id, long);
    const heavy = [];
    for (let i = 0; i < 3; i++) heavy.push(await check(['ann']));
    expect(heavy[2]?.capabilities).toEqual([long, 'export'].sort());
    // Computed again each time: not kept.
    expect(heavy[2]).not.toBe(heavy[1]);
  });
});
