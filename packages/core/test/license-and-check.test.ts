import { randomUUID } from 'node:crypto';
import {
  assignGrantee,
  cancelLicense,
  capabilityCheck,
  createAdHocLicense,
  startSubscription,
  LICENSE_STATUSES,
  NO_END,
  licenseStatusFromFilter,
} from '../src';
import { aCustomer, aLicense, aPlan, aProduct, at, T0, errorCodeOf } from '../src/testing';

const DAY = 86_400_000;
const tenant = { organisationId: randomUUID(), isTest: false };
const product = aProduct(tenant);
const codeOf = errorCodeOf;

describe('ad hoc licenses', () => {
  it('on a free plan: ACTIVE with no end', () => {
    const plan = aPlan(product, { pricingType: 'free' });
    const l = createAdHocLicense({ plan, product, member: 'm@example.com', granteeId: 'g1', now: T0, id: randomUUID() });
    expect(l).toMatchObject({
      status: 'ACTIVE',
      endTime: null,
      granteeId: 'g1',
      purchaser: 'm@example.com',
      email: 'm@example.com',
      subscriptionId: null,
    });
  });

  it('on an evaluation plan: EVALUATION, ending evalDays later', () => {
    const plan = aPlan(product, { pricingType: 'paid', evaluation: true, evalDays: 14 });
    const l = createAdHocLicense({ plan, product, member: 'm', granteeId: null, now: T0, id: randomUUID() });
    expect(l.status).toBe('EVALUATION');
    expect(l.endTime).toEqual(at(14 * DAY));
    expect(l.email).toBeNull();
  });

  it('refuses a paid plan without evaluation, and archived plans or products', () => {
    const paid = aPlan(product, { pricingType: 'paid' });
    expect(codeOf(() => createAdHocLicense({ plan: paid, product, member: 'm', granteeId: 'g', now: T0, id: randomUUID() }))).toBe(
      'PLAN_NOT_FREE_OR_EVALUATION',
    );
    const free = aPlan(product, { pricingType: 'free' });
    expect(
      codeOf(() =>
        createAdHocLicense({ plan: { ...free, archivedAt: T0 }, product, member: 'm', granteeId: 'g', now: T0, id: randomUUID() }),
      ),
    ).toBe('PLAN_ARCHIVED');
    expect(
      codeOf(() =>
        createAdHocLicense({ plan: free, product: { ...product, archivedAt: T0 }, member: 'm', granteeId: 'g', now: T0, id: randomUUID() }),
      ),
    ).toBe('PLAN_ARCHIVED');
  });
});

describe('grantee assignment and cancellation', () => {
  const plan = aPlan(product);
  it('assigns and unassigns', () => {
    const l = aLicense(plan);
    expect(assignGrantee(l, 'alice', at(1)).granteeId).toBe('alice');
    expect(assignGrantee({ ...l, granteeId: 'alice' }, null, at(1)).granteeId).toBeNull();
  });
  it('refuses a canceled license and an empty grantee', () => {
    expect(codeOf(() => assignGrantee(aLicense(plan, { status: 'CANCELED' }), 'x', at(1)))).toBe('LICENSE_CANCELED');
    expect(codeOf(() => assignGrantee(aLicense(plan), '  ', at(1)))).toBe('VALIDATION_FAILED');
  });
  it('cancels once', () => {
    const c = cancelLicense(aLicense(plan), at(5));
    expect(c).toMatchObject({ status: 'CANCELED', endTime: at(5) });
    expect(codeOf(() => cancelLicense(c, at(6)))).toBe('LICENSE_CANCELED');
  });
});

describe('purchase', () => {
  it('creates the subscription and one license per seat, the first for the grantee', () => {
    const plan = aPlan(product, { licenseType: 'perSeat', perSeatAmount: 2, trialDays: 7 });
    const out = startSubscription({
      plan,
      product,
      customer: aCustomer(tenant),
      granteeId: 'g',
      quantity: 3,
      currency: 'USD',
      paymentProvider: 'sandbox',
      paymentSubscriptionId: null,
      now: T0,
      newId: randomUUID,
    });
    expect(out.subscription).toMatchObject({ quantity: 3, status: 'TRIALING', currentPeriodEnd: at(7 * DAY) });
    expect(out.licenses.all().map((l) => l.granteeId)).toEqual(['g', null, null]);
    expect(out.licenses.all().every((l) => l.status === 'TRIALING')).toBe(true);
  });
  it('refuses fewer seats than the minimum; a non-seat plan has one', () => {
    const plan = aPlan(product, { licenseType: 'perSeat', perSeatAmount: 2 });
    expect(
      codeOf(() =>
        startSubscription({
          plan,
          product,
          customer: aCustomer(tenant),
          granteeId: 'g',
          quantity: 1,
          currency: 'USD',
          paymentProvider: 's',
          paymentSubscriptionId: null,
          now: T0,
          newId: randomUUID,
        }),
      ),
    ).toBe('CHECKOUT_QUANTITY_BELOW_MINIMUM');
    const user = aPlan(product, { interval: 'year' });
    const out = startSubscription({
      plan: user,
      product,
      customer: aCustomer(tenant),
      granteeId: 'g',
      quantity: 9,
      currency: 'USD',
      paymentProvider: 's',
      paymentSubscriptionId: null,
      now: T0,
      newId: randomUUID,
    });
    expect(out.subscription.quantity).toBe(1);
    expect(out.subscription.currentPeriodEnd.toISOString()).toBe('2027-01-15T12:00:00.000Z');
  });
});

describe('capability check', () => {
  const a = aPlan(product);
  const b = aPlan(product);
  const caps = new Map([
    [a.id, ['edit', 'export']],
    [b.id, ['admin', 'edit']],
  ]);
  const now = at(DAY);
  const check = (licenses: ReturnType<typeof aLicense>[], graceDays = 0, granteeIds = ['alice']) =>
    capabilityCheck({ licenses, productId: product.id, granteeIds, capabilitiesByPlan: caps, graceDays, now });

  it("unions capabilities of the grantees' live licenses, in code-point order, with the latest end each", () => {
    const out = check(
      [
        aLicense(a, { granteeId: 'alice', endTime: at(10 * DAY) }),
        aLicense(b, { granteeId: 'bob', status: 'TRIALING', endTime: at(20 * DAY) }),
      ],
      0,
      ['alice', 'bob'],
    );
    expect(out.capabilities).toEqual(['admin', 'edit', 'export']);
    expect(out.capsHashed).toBe('admin,edit,export');
    expect(out.capabilitiesEndDates).toEqual({ admin: at(20 * DAY), edit: at(20 * DAY), export: at(10 * DAY) });
  });

  it('counts only ACTIVE, TRIALING and EVALUATION licenses', () => {
    for (const [status, info] of Object.entries(LICENSE_STATUSES)) {
      const out = check([aLicense(a, { granteeId: 'alice', status: status as never })]);
      expect(out.capabilities.length > 0).toBe(info.grantsAccess);
    }
    expect(
      Object.entries(LICENSE_STATUSES)
        .filter(([, v]) => v.grantsAccess)
        .map(([k]) => k)
        .sort(),
    ).toEqual(['ACTIVE', 'EVALUATION', 'TRIALING']);
  });

  it('excludes expired licenses, other grantees and other products; grace days extend the end', () => {
    const expired = aLicense(a, { granteeId: 'alice', endTime: at(DAY - 1) });
    expect(check([expired]).capabilities).toEqual([]);
    const graced = check([expired], 2);
    expect(graced.capabilities).toEqual(['edit', 'export']);
    expect(graced.capabilitiesEndDates.edit).toEqual(at(3 * DAY - 1));
    expect(check([aLicense(a, { granteeId: 'carol' })]).capabilities).toEqual([]);
    expect(check([aLicense(a, { granteeId: 'alice', productId: randomUUID() })]).capabilities).toEqual([]);
    expect(check([aLicense(a, { granteeId: null })], 0, ['alice']).capabilities).toEqual([]);
  });

  it('shows a license without end as the far future', () => {
    expect(check([aLicense(a, { granteeId: 'alice', endTime: null })], 5).capabilitiesEndDates.edit).toEqual(NO_END);
  });

  it('maps list filter values to statuses', () => {
    expect(licenseStatusFromFilter('canceled')).toBe('CANCELED');
    // Any letter case (real clients send ACTIVE); anything else names no status.
    expect(licenseStatusFromFilter('ACTIVE')).toBe('ACTIVE');
    expect(licenseStatusFromFilter(' Trialing ')).toBe('TRIALING');
    expect(licenseStatusFromFilter('ACTIVATED')).toBeUndefined();
  });
});
