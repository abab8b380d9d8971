import fc from 'fast-check';
import { capabilityCheck, reduceSnapshot, LICENSE_STATUSES, type CheckLicense, type LicenseStatus } from '../src';

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
