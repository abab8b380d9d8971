import fc from 'fast-check';
import {
  capabilityCheck,
  DEFAULT_LIMITS,
  EntitlementCache,
  LICENSE_STATUSES,
  type CheckIndexRow,
  type CheckLicense,
  type LicenseStatus,
} from '../src';
import { createTestCore, InMemoryUnitOfWork, seedSample, type TestCore } from '../src/testing';

// The check's in-memory index (DESIGN section 11, issue 22): every granting license of every
// product, reduced per grantee, filled by one streaming read and kept by the change feed.
const PRODUCT = '00000000-0000-4000-8000-000000000001';
const OTHER = '00000000-0000-4000-8000-000000000002';
const PLANS = ['plan-a', 'plan-b', 'plan-c'];
const CAPS = new Map([
  ['plan-a', ['edit']],
  ['plan-b', ['edit', 'export']],
  ['plan-c', []],
]);
const DAY = 86_400_000;
const T0 = Date.UTC(2026, 0, 1);

/** What `scanForCheck` reads: granting licenses with a grantee, one row per product, grantee and plan (latest end, no end first). */
function scanned(ls: readonly CheckLicense[]): CheckIndexRow[] {
  const rows = new Map<string, CheckIndexRow>();
  for (const l of ls) {
    if (l.granteeId === null || !LICENSE_STATUSES[l.status].grantsAccess) continue;
    const key = `${l.productId}|${l.granteeId}|${l.planId}`;
    const endMs = l.endTime?.getTime() ?? null;
    const kept = rows.get(key);
    if (!kept) rows.set(key, { productId: l.productId, planId: l.planId, granteeId: l.granteeId, status: l.status, endMs });
    else if (kept.endMs !== null && (endMs === null || endMs > kept.endMs)) kept.endMs = endMs;
  }
  return [...rows.values()];
}

function filled(rows: CheckIndexRow[], max = 1_000_000, batch = 3): EntitlementCache {
  const cache = new EntitlementCache(100, max);
  cache.setLive(true, 0);
  const generation = cache.beginIndex() as number;
  for (let at = 0; at < rows.length; at += batch) if (!cache.addToIndex(generation, rows.slice(at, at + batch))) break;
  cache.completeIndex(generation);
  return cache;
}

const row = (granteeId: string, over: Partial<CheckIndexRow> = {}): CheckIndexRow => ({
  productId: PRODUCT,
  planId: 'plan-a',
  granteeId,
  status: 'ACTIVE',
  endMs: T0 + 10 * DAY,
  ...over,
});

describe('the check index', () => {
  const license = fc.record({
    productId: fc.constantFrom(PRODUCT, OTHER),
    planId: fc.constantFrom(...PLANS),
    granteeId: fc.constantFrom('ann', 'bob', 'cy', null),
    status: fc.constantFrom(...(Object.keys(LICENSE_STATUSES) as LicenseStatus[])),
    endTime: fc.option(
      fc.integer({ min: -20, max: 20 }).map((d) => new Date(T0 + d * DAY + (d % 3))),
      { nil: null },
    ),
  }) as fc.Arbitrary<CheckLicense>;

  it('answers every check as the full license list does, at every time and grace, and "nothing" for grantees it does not hold', () => {
    fc.assert(
      fc.property(
        fc.array(license, { maxLength: 30 }),
        fc.integer({ min: -25, max: 25 }),
        fc.integer({ min: 0, max: 5 }),
        fc.subarray(['ann', 'bob', 'cy', 'dee'], { minLength: 1 }),
        (ls, day, grace, granteeIds) => {
          const cache = filled(scanned(ls));
          const now = new Date(T0 + day * DAY + 1);
          for (const productId of [PRODUCT, OTHER]) {
            const fromIndex = granteeIds.flatMap((g) => {
              const s = cache.snapshot(productId, g);
              // A product with no granting license is not in the index: the LRU (here empty) answers.
              if (s === undefined) return ls.filter((l) => l.productId === productId && l.granteeId === g);
              return [...s];
            });
            const input = { productId, granteeIds, capabilitiesByPlan: CAPS, graceDays: grace, now };
            expect(capabilityCheck({ ...input, licenses: fromIndex })).toEqual(capabilityCheck({ ...input, licenses: ls }));
          }
        },
      ),
      { numRuns: 1500 },
    );
  });

  it('holds one license per grantee and plan, the one that ends last (no end beats any end)', () => {
    const cache = filled([
      row('ann', { endMs: T0 }),
      row('ann', { endMs: T0 + DAY }),
      row('ann', { planId: 'plan-b', endMs: null }),
      row('ann', { planId: 'plan-b', endMs: T0 + 5 * DAY }),
      row('bob', { endMs: T0 }),
      row('cy', { endMs: T0 + DAY }),
    ]);
    const ann = cache.snapshot(PRODUCT, 'ann') as readonly CheckLicense[];
    expect(ann.map((l) => [l.planId, l.endTime?.getTime() ?? null])).toEqual([
      ['plan-a', T0 + DAY],
      ['plan-b', null],
    ]);
    expect(cache.stats()).toMatchObject({ indexed: true, indexedLicenses: 4, entries: 3 });
    // One Date object per instant, shared between snapshots.
    expect(cache.snapshot(PRODUCT, 'cy')?.[0].endTime).toBe(ann[0].endTime);
    expect(cache.snapshot(PRODUCT, 'nobody')).toEqual([]);
    expect(cache.snapshot(PRODUCT, 'nobody')).toBe(cache.snapshot(PRODUCT, 'someone else'));
  });

  it('misses what changed while it was read, and keeps what a later load brings (unless something changed meanwhile)', () => {
    const cache = new EntitlementCache(100, 1000);
    cache.setLive(true, 0);
    const generation = cache.beginIndex() as number;
    cache.addToIndex(generation, [row('ann'), row('bob')]);
    // Heard while the read was under way: the read may be from before or after the change.
    cache.invalidate({ kind: 'license', productId: PRODUCT, granteeId: 'ann' });
    cache.invalidate({ kind: 'license', productId: PRODUCT, granteeId: 'cy' });
    cache.addToIndex(generation, [row('cy')]);
    expect(cache.completeIndex(generation)).toBe(true);
    expect(cache.snapshot(PRODUCT, 'ann')).toBeUndefined();
    expect(cache.snapshot(PRODUCT, 'cy')).toBeUndefined();
    expect(cache.snapshot(PRODUCT, 'bob')).toHaveLength(1);
    expect(cache.snapshot(PRODUCT, 'dee')).toEqual([]);

    // A change after: bob is unknown until loaded again.
    const before = cache.mark();
    cache.invalidate({ kind: 'license', productId: PRODUCT, granteeId: 'bob' });
    expect(cache.snapshot(PRODUCT, 'bob')).toBeUndefined();
    // A load that raced another change is not kept.
    cache.storeSnapshots(before, PRODUCT, new Map([['bob', []]]));
    expect(cache.snapshot(PRODUCT, 'bob')).toBeUndefined();
    const mark = cache.mark();
    const end = new Date(T0);
    cache.storeSnapshots(
      mark,
      PRODUCT,
      new Map([['bob', [{ productId: PRODUCT, planId: 'plan-b', granteeId: 'bob', status: 'ACTIVE', endTime: end }]]]),
    );
    cache.storeSnapshots(mark, PRODUCT, new Map([['ann', []]]));
    expect(cache.snapshot(PRODUCT, 'bob')).toEqual([
      { productId: PRODUCT, planId: 'plan-b', granteeId: 'bob', status: 'ACTIVE', endTime: end },
    ]);
    expect(cache.snapshot(PRODUCT, 'ann')).toEqual([]);
    expect(cache.stats()).toMatchObject({ indexed: true, indexedLicenses: 1 });
  });

  it('lets a product whose plans changed fall back to the LRU, and gives the index up past its bound', () => {
    const cache = filled([row('ann'), row('bob', { productId: OTHER })]);
    cache.invalidate({ kind: 'product', productId: PRODUCT });
    expect(cache.snapshot(PRODUCT, 'ann')).toBeUndefined();
    expect(cache.snapshot(PRODUCT, 'dee')).toBeUndefined();
    expect(cache.snapshot(OTHER, 'bob')).toHaveLength(1);

    const small = filled([row('ann'), row('bob'), row('cy')], 2);
    expect(small.stats()).toMatchObject({ indexed: false, indexedLicenses: 0 });
    expect(small.snapshot(PRODUCT, 'dee')).toBeUndefined();

    // Growing past the bound by loads: given up too.
    const grown = filled([row('ann'), row('bob')], 2);
    expect(grown.stats().indexed).toBe(true);
    grown.storeSnapshots(
      grown.mark(),
      PRODUCT,
      new Map([['cy', [{ productId: PRODUCT, planId: 'plan-a', granteeId: 'cy', status: 'ACTIVE', endTime: null }]]]),
    );
    expect(grown.stats().indexed).toBe(false);
    expect(grown.snapshot(PRODUCT, 'dee')).toBeUndefined();
  });

  it('is not used while the feed is not heard, answers only what it holds in an outage, and a fill cut by a gap is dropped', () => {
    const cache = filled([row('ann')]);
    cache.setLive(false, 1000);
    expect(cache.snapshot(PRODUCT, 'ann')).toBeUndefined();
    expect(cache.snapshot(PRODUCT, 'ann', true)).toHaveLength(1);
    // An absence is not held: no guess during an outage.
    expect(cache.snapshot(PRODUCT, 'dee', true)).toBeUndefined();

    cache.setLive(true, 2000);
    expect(cache.stats()).toMatchObject({ indexed: false, entries: 0 });
    const generation = cache.beginIndex() as number;
    cache.addToIndex(generation, [row('ann')]);
    cache.setLive(false, 3000);
    cache.setLive(true, 4000);
    expect(cache.addToIndex(generation, [row('bob')])).toBe(false);
    expect(cache.completeIndex(generation)).toBe(false);
    expect(cache.stats().indexed).toBe(false);
    expect(new EntitlementCache(100, 0).beginIndex()).toBeUndefined();
    // A read that failed: nothing kept, nothing noted any more.
    const failed = cache.beginIndex() as number;
    cache.addToIndex(failed, [row('ann')]);
    cache.abandonIndex(failed);
    expect(cache.addToIndex(failed, [row('bob')])).toBe(false);
    expect(cache.completeIndex(failed)).toBe(false);
    expect(cache.stats().indexed).toBe(false);
  });
});

describe('an instance with the index', () => {
  let a: TestCore;
  let b: TestCore;
  let uow: InMemoryUnitOfWork;
  let tenant: { organisationId: string; isTest: boolean };
  let keys: Record<string, string>;

  beforeAll(async () => {
    uow = new InMemoryUnitOfWork();
    a = createTestCore({ uow });
    await a.listen();
    ({ tenant, keys } = await seedSample(a, 'indexed'));
    await a.licenses.createAdHoc(
      tenant,
      ['ann', 'bob', 'cy'].map((g) => ({ planUuid: keys['plans.notes.free'], member: `${g}@example.com`, granteeId: g })),
    );
    b = createTestCore({ uow });
    await b.listen();
  });
  afterEach(() => jest.restoreAllMocks());

  const check = (core: TestCore, granteeIds: string[]) =>
    core.checks.check(tenant, { productId: keys['products.notes'], granteeIds, graceDays: 0, encoding: 'der' });

  it('is filled before listen resolves and answers grantees with and without licenses without reading licenses', async () => {
    expect(b.checkCache.stats()).toMatchObject({ indexed: true, indexedLicenses: 3 });
    const reads = jest.spyOn(uow, 'read');
    const first = await check(b, ['ann']);
    // The product's owner and the plan's capabilities are loaded once; licenses never.
    const afterFirst = reads.mock.calls.length;
    expect(await check(b, ['bob'])).toMatchObject({ capabilities: first?.capabilities });
    expect(await check(b, ['nobody'])).toBeNull();
    expect(await check(b, ['cy', 'someone'])).toMatchObject({ capabilities: first?.capabilities });
    expect(reads.mock.calls.length).toBe(afterFirst);
    reads.mockRestore();
  });

  it('sees a license created on another instance, and one taken away', async () => {
    expect(await check(b, ['dee'])).toBeNull();
    await a.licenses.createAdHoc(tenant, [{ planUuid: keys['plans.notes.free'], member: 'dee@example.com', granteeId: 'dee' }]);
    expect((await check(b, ['dee']))?.capabilities).toEqual((await check(a, ['dee']))?.capabilities);
    const ann = (await a.licenses.list(tenant, {})).find((l) => l.granteeId === 'ann');
    await a.licenses.batchUpdate(tenant, [{ uuid: ann?.id as string, granteeId: null }]);
    expect(await check(b, ['ann'])).toBeNull();
    expect(b.checkCache.stats().indexed).toBe(true);
  });

  it('never answers a kept answer to a question of more grantees that joins to the same text (an id holding a newline)', async () => {
    await a.licenses.createAdHoc(tenant, [{ planUuid: keys['plans.notes.free'], member: 'zed@example.com', granteeId: 'zed' }]);
    for (let i = 0; i < 5 && (await check(b, ['zed'])) === null; i++) await new Promise((r) => setImmediate(r));
    // ann (licensed) and "x\nzed" (nobody): ann's answer, kept for the same question.
    const kept = await check(b, ['ann', 'x\nzed']);
    expect(await check(b, ['ann', 'x\nzed'])).toBe(kept);
    // Three grantees whose ids join to the same text: answered anew, with zed's license in it.
    const three = await check(b, ['ann', 'x', 'zed']);
    expect(three).not.toBe(kept);
    expect(three).toEqual(await check(b, ['zed', 'ann']));
  });

  const turns = async (n: number) => {
    for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
  };

  it('loads a changed grantee again as soon as the feed names it, so the next check reads nothing', async () => {
    await check(b, ['eve']);
    await a.licenses.createAdHoc(tenant, [{ planUuid: keys['plans.notes.free'], member: 'eve@example.com', granteeId: 'eve' }]);
    await turns(3);
    const reads = jest.spyOn(uow, 'read');
    expect((await check(b, ['eve']))?.capabilities).toEqual((await check(a, ['eve']))?.capabilities);
    expect(reads.mock.calls.length).toBe(1); // A's check only
    reads.mockRestore();
  });

  it('answers a check asked while the feed reload of that grantee is under way from that reload (no read of its own)', async () => {
    await check(b, ['fay']);
    let release: () => void = () => undefined;
    const gate = new Promise<void>((r) => (release = r));
    const queried: string[][] = [];
    const read = uow.read.bind(uow);
    const spy = jest.spyOn(uow, 'read').mockImplementation((work) =>
      read((repos) =>
        work({
          ...repos,
          licenses: {
            ...repos.licenses,
            findForCheck: async (t, p, grantees) => {
              queried.push([...grantees]);
              const found = await repos.licenses.findForCheck(t, p, grantees);
              await gate;
              return found;
            },
          },
        }),
      ),
    );
    await a.licenses.createAdHoc(tenant, [{ planUuid: keys['plans.notes.free'], member: 'fay@example.com', granteeId: 'fay' }]);
    // The reload is started (and held at the gate) before the event loop turns again.
    await Promise.resolve();
    expect(queried).toEqual([['fay']]);
    const asked = check(b, ['fay']);
    await turns(3);
    expect(queried).toEqual([['fay']]);
    release();
    const answer = await asked;
    spy.mockRestore();
    expect(answer?.capabilities).toEqual((await check(a, ['fay']))?.capabilities);
    expect(answer?.capabilities.length).toBeGreaterThan(0);
  });

  it('loads the misses of one turn together: one query for every grantee, each answer as if alone', async () => {
    // A fresh instance without an index: every grantee is a miss.
    const c = createTestCore({ uow, limits: { ...DEFAULT_LIMITS, checkIndexMaxLicenses: 0 } });
    await c.listen();
    await check(c, ['warm-up']);
    const queried: string[][] = [];
    const read = uow.read.bind(uow);
    const spy = jest.spyOn(uow, 'read').mockImplementation((work) =>
      read((repos) =>
        work({
          ...repos,
          licenses: {
            ...repos.licenses,
            findForCheck: (t, p, grantees) => {
              queried.push([...grantees]);
              return repos.licenses.findForCheck(t, p, grantees);
            },
          },
        }),
      ),
    );
    const asked = [['bob'], ['cy', 'nobody'], ['dee'], ['bob', 'zed']];
    const together = await Promise.all(asked.map((g) => check(c, g)));
    spy.mockRestore();
    expect(queried).toEqual([['bob', 'cy', 'nobody', 'dee', 'zed']]);
    const alone = [];
    for (const g of asked) alone.push(await check(a, g));
    expect(together.map((x) => x?.capabilities ?? null)).toEqual(alone.map((x) => x?.capabilities ?? null));
    expect(together.map((x) => x?.capsHashed ?? null)).toEqual(alone.map((x) => x?.capsHashed ?? null));
  });
});
