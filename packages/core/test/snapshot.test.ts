import fc from 'fast-check';
import {
  addDays,
  capabilityCheck,
  reduceSnapshot,
  LICENSE_STATUSES,
  NO_END,
  type CheckInput,
  type CheckLicense,
  type LicenseStatus,
} from '../src';

// The cache keeps a grantee's licenses reduced to one per plan (the granting one that ends last).
// The check over the reduced snapshot must equal the check over every license, at any time and grace.
const PRODUCT = '00000000-0000-4000-8000-000000000001';
const PLANS = ['plan-a', 'plan-b', 'plan-c'];
const CAPS = new Map([
  ['plan-a', ['edit']],
  ['plan-b', ['edit', 'export']],
  ['plan-c', []],
]);
const DAY = 86_400_000;
const T0 = Date.UTC(2026, 0, 1);

const license = fc.record({
  productId: fc.constantFrom(PRODUCT, 'another-product'),
  planId: fc.constantFrom(...PLANS),
  granteeId: fc.constantFrom('ann', 'bob'),
  status: fc.constantFrom(...(Object.keys(LICENSE_STATUSES) as LicenseStatus[])),
  endTime: fc.option(
    fc.integer({ min: -20, max: 20 }).map((d) => new Date(T0 + d * DAY)),
    { nil: null },
  ),
}) as fc.Arbitrary<CheckLicense>;

describe('reduced entitlement snapshots', () => {
  it('give the same check as the full license list, at every time and grace', () => {
    fc.assert(
      fc.property(
        fc.array(license, { maxLength: 25 }),
        fc.integer({ min: -25, max: 25 }),
        fc.integer({ min: 0, max: 5 }),
        (ls, day, grace) => {
          const now = new Date(T0 + day * DAY + 1);
          const input = { productId: PRODUCT, granteeIds: ['ann'], capabilitiesByPlan: CAPS, graceDays: grace, now };
          const reduced = reduceSnapshot(ls, PRODUCT, 'ann');
          expect(capabilityCheck({ ...input, licenses: reduced })).toEqual(capabilityCheck({ ...input, licenses: ls }));
          expect(reduced.length).toBeLessThanOrEqual(PLANS.length);
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('shares plan ids through the given function', () => {
    const planId = ['plan', 'a'].join('-');
    const kept = 'plan-a';
    const [one] = reduceSnapshot(
      [{ productId: PRODUCT, planId, granteeId: 'ann', status: 'ACTIVE', endTime: null }],
      PRODUCT,
      'ann',
      () => kept,
    );
    expect(one.planId).toBe(kept);
  });
});

/** The check as it was written before it worked on times: the reference the faster one must equal. */
function referenceCheck({ licenses, productId, granteeIds, capabilitiesByPlan, graceDays, now }: CheckInput) {
  const grantees = new Set(granteeIds);
  const ends = new Map<string, Date>();
  for (const l of licenses) {
    if (l.productId !== productId || l.granteeId === null || !grantees.has(l.granteeId)) continue;
    if (!LICENSE_STATUSES[l.status].grantsAccess) continue;
    const end = l.endTime === null ? NO_END : addDays(l.endTime, graceDays);
    if (end <= now) continue;
    for (const cap of capabilitiesByPlan.get(l.planId) ?? []) {
      const prev = ends.get(cap);
      if (!prev || end > prev) ends.set(cap, end);
    }
  }
  const capabilities = [...ends.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return {
    capabilities,
    capabilitiesEndDates: Object.fromEntries(capabilities.map((c) => [c, ends.get(c) as Date])),
    capsHashed: capabilities.join(','),
  };
}

describe('the capability check', () => {
  it('equals the date-by-date reference for any licenses, grantees, plans, grace and time', () => {
    const caps = new Map([
      ['plan-a', ['edit', '__proto__', '10']],
      ['plan-b', ['edit', 'export', '9']],
      ['plan-c', []],
    ]);
    const end = fc.oneof(
      fc.integer({ min: -20, max: 20 }).map((d) => new Date(T0 + d * DAY + (d % 3))),
      fc.constantFrom(new Date(8.64e15 - DAY), new Date(NaN), new Date(-8.64e15)),
    );
    const lic = fc.record({
      productId: fc.constantFrom(PRODUCT, 'another-product'),
      planId: fc.constantFrom(...PLANS, 'plan-unknown'),
      granteeId: fc.constantFrom('ann', 'bob', 'cy', null),
      status: fc.constantFrom(...(Object.keys(LICENSE_STATUSES) as LicenseStatus[])),
      endTime: fc.option(end, { nil: null }),
    }) as fc.Arbitrary<CheckLicense>;
    fc.assert(
      fc.property(
        fc.array(lic, { maxLength: 25 }),
        fc.uniqueArray(fc.constantFrom('ann', 'bob', 'cy'), { minLength: 1 }),
        fc.integer({ min: -25, max: 25 }),
        fc.integer({ min: 0, max: 5 }),
        (licenses, granteeIds, day, graceDays) => {
          const input = {
            licenses,
            productId: PRODUCT,
            granteeIds,
            capabilitiesByPlan: caps,
            graceDays,
            now: new Date(T0 + day * DAY + 1),
          };
          const got = capabilityCheck(input);
          const want = referenceCheck(input);
          expect(got.capabilities).toEqual(want.capabilities);
          expect(got.capsHashed).toBe(want.capsHashed);
          // Same keys in the same order, the same times (NaN for an end past the Date range).
          expect(Object.keys(got.capabilitiesEndDates)).toEqual(Object.keys(want.capabilitiesEndDates));
          for (const c of Object.keys(want.capabilitiesEndDates))
            expect(got.capabilitiesEndDates[c].getTime()).toBe(want.capabilitiesEndDates[c].getTime());
        },
      ),
      { numRuns: 3000 },
    );
  });
});
