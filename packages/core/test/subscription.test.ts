import { randomUUID } from 'node:crypto';
import {
  cancelAtPeriodEnd,
  cancelNow,
  changePlan,
  effectiveStatus,
  periodEndReached,
  reactivate,
  renew,
  SUBSCRIPTION_STATUSES,
} from '../src';
import { aCustomer, aLicense, aPlan, aProduct, aSubscription, at, T0, errorCodeOf } from '../src/testing';

const DAY = 86_400_000;
const tenant = { organisationId: randomUUID(), isTest: false };
const product = aProduct(tenant);
const plan = aPlan(product);
const customer = aCustomer(tenant);

function setup(over = {}) {
  const s = aSubscription(plan, customer, over);
  const licenses = [aLicense(plan, { subscriptionId: s.id, granteeId: 'a' }), aLicense(plan, { subscriptionId: s.id })];
  return { s, licenses };
}

const codeOf = errorCodeOf;

describe('subscription status table', () => {
  it('names every status with whether it runs', () => {
    expect(Object.keys(SUBSCRIPTION_STATUSES).sort()).toEqual(['ACTIVE', 'CANCELED', 'PAST_DUE', 'PAUSED', 'TRIALING', 'UNPAID']);
    expect(SUBSCRIPTION_STATUSES.CANCELED.running).toBe(false);
  });
});

describe('cancel now', () => {
  it('cancels the subscription and its licenses at once', () => {
    const { s, licenses } = setup();
    const out = cancelNow(s, licenses, at(DAY));
    expect(out.subscription.status).toBe('CANCELED');
    expect(out.subscription.canceledAt).toEqual(at(DAY));
    expect(out.licenses.every((l) => l.status === 'CANCELED' && l.endTime?.getTime() === at(DAY).getTime())).toBe(true);
  });

  it('refuses a subscription that is already canceled', () => {
    const { s, licenses } = setup({ status: 'CANCELED' });
    expect(codeOf(() => cancelNow(s, licenses, at(DAY)))).toBe('SUBSCRIPTION_CANCELED');
  });
});

describe('cancel at period end', () => {
  it('schedules cancellation and marks the licenses; the subscription keeps running', () => {
    const { s, licenses } = setup();
    const out = cancelAtPeriodEnd(s, licenses, at(DAY));
    expect(out.subscription.cancelAtPeriodEnd).toBe(true);
    expect(out.subscription.status).toBe('ACTIVE');
    expect(out.licenses.every((l) => l.cancelAtPeriodEnd && l.status === 'ACTIVE')).toBe(true);
  });

  it('is a no-op when already scheduled, and refused once canceled', () => {
    const { s, licenses } = setup({ cancelAtPeriodEnd: true });
    expect(cancelAtPeriodEnd(s, licenses, at(DAY)).subscription).toBe(s);
    expect(codeOf(() => cancelAtPeriodEnd({ ...s, status: 'CANCELED' }, licenses, at(DAY)))).toBe('SUBSCRIPTION_CANCELED');
  });

  it('reads as CANCELED from the end of the period on, before the sweep ran', () => {
    const { s } = setup({ cancelAtPeriodEnd: true });
    expect(effectiveStatus(s, at(DAY))).toBe('ACTIVE');
    expect(effectiveStatus(s, s.currentPeriodEnd)).toBe('CANCELED');
    expect(effectiveStatus({ ...s, cancelAtPeriodEnd: false }, at(365 * DAY))).toBe('ACTIVE');
  });
});

describe('period end reached', () => {
  it('cancels a scheduled subscription and ends its licenses at the period end', () => {
    const { s, licenses } = setup({ cancelAtPeriodEnd: true });
    const out = periodEndReached(s, licenses, at(40 * DAY));
    expect(out.subscription.status).toBe('CANCELED');
    expect(out.subscription.canceledAt).toEqual(s.currentPeriodEnd);
    expect(out.licenses.every((l) => l.status === 'CANCELED' && l.endTime?.getTime() === s.currentPeriodEnd.getTime())).toBe(true);
  });

  it('refuses before the period end, or when nothing is scheduled', () => {
    const { s, licenses } = setup({ cancelAtPeriodEnd: true });
    expect(codeOf(() => periodEndReached(s, licenses, at(DAY)))).toBe('SUBSCRIPTION_PERIOD_NOT_ENDED');
    expect(codeOf(() => periodEndReached({ ...s, cancelAtPeriodEnd: false }, licenses, at(40 * DAY)))).toBe(
      'SUBSCRIPTION_PERIOD_NOT_ENDED',
    );
    expect(codeOf(() => periodEndReached({ ...s, status: 'CANCELED' }, licenses, at(40 * DAY)))).toBe('SUBSCRIPTION_CANCELED');
  });
});

describe('reactivate', () => {
  it('removes a scheduled cancellation while the period runs', () => {
    const { s, licenses } = setup({ cancelAtPeriodEnd: true });
    const scheduled = cancelAtPeriodEnd(s, licenses, at(DAY));
    const out = reactivate(scheduled.subscription, scheduled.licenses, at(2 * DAY));
    expect(out.subscription.cancelAtPeriodEnd).toBe(false);
    expect(out.licenses.every((l) => !l.cancelAtPeriodEnd)).toBe(true);
  });

  it('refuses after the period has passed, when nothing is scheduled, and when canceled', () => {
    const { s, licenses } = setup({ cancelAtPeriodEnd: true });
    expect(codeOf(() => reactivate(s, licenses, s.currentPeriodEnd))).toBe('SUBSCRIPTION_NOT_REACTIVATABLE');
    expect(codeOf(() => reactivate({ ...s, cancelAtPeriodEnd: false }, licenses, at(DAY)))).toBe('SUBSCRIPTION_NOT_REACTIVATABLE');
    expect(codeOf(() => reactivate({ ...s, status: 'CANCELED' }, licenses, at(DAY)))).toBe('SUBSCRIPTION_NOT_REACTIVATABLE');
  });
});

describe('renew', () => {
  it('moves the period on and extends the licenses', () => {
    const { s, licenses } = setup({ status: 'TRIALING' });
    const out = renew(s, [{ ...licenses[0], status: 'TRIALING' }], s.currentPeriodEnd, at(60 * DAY), at(30 * DAY));
    expect(out.subscription.status).toBe('ACTIVE');
    expect(out.subscription.currentPeriodEnd).toEqual(at(60 * DAY));
    expect(out.licenses[0]).toMatchObject({ status: 'ACTIVE', endTime: at(60 * DAY) });
  });
});

describe('change plan', () => {
  const target = aPlan(product, { name: 'Business' });
  const base = (over = {}) => {
    const { s, licenses } = setup();
    return {
      subscription: s,
      licenses,
      currentPlan: plan,
      target,
      targetProduct: product,
      proration: 'create_prorations' as const,
      now: at(DAY),
      newId: randomUUID,
      billed: true,
      ...over,
    };
  };

  it('moves a subscription that is not usage-based, with its licenses, keeping its id', () => {
    const input = base();
    const out = changePlan(input);
    if (out.kind !== 'moved') throw new Error('expected a move');
    expect(out.subscription.id).toBe(input.subscription.id);
    expect(out.subscription.planId).toBe(target.id);
    expect(out.licenses.every((l) => l.planId === target.id)).toBe(true);
    expect(out.proration).toBe('create_prorations');
  });

  it('replaces a usage-based subscription: the old one canceled, a new one on the target plan', () => {
    const input = base({ currentPlan: { ...plan, usageBased: true } });
    const out = changePlan(input);
    if (out.kind !== 'replaced') throw new Error('expected a replacement');
    expect(out.canceled).toMatchObject({ id: input.subscription.id, status: 'CANCELED' });
    expect(out.created).toMatchObject({ planId: target.id, status: 'ACTIVE', replacesId: input.subscription.id });
    expect(out.created.id).not.toBe(input.subscription.id);
    expect(out.canceledLicenses.every((l) => l.status === 'CANCELED')).toBe(true);
    expect(out.createdLicenses).toHaveLength(2);
    expect(out.createdLicenses.every((l) => l.subscriptionId === out.created.id && l.planId === target.id)).toBe(true);
    expect(out.createdLicenses.map((l) => l.granteeId)).toEqual(['a', null]);
  });

  it('refuses an archived target plan or a target whose product is archived', () => {
    expect(codeOf(() => changePlan(base({ target: { ...target, archivedAt: T0 } })))).toBe('PLAN_ARCHIVED');
    expect(codeOf(() => changePlan(base({ targetProduct: { ...product, archivedAt: T0 } })))).toBe('PLAN_ARCHIVED');
  });

  it("refuses the current plan, another product's plan and a canceled subscription", () => {
    expect(codeOf(() => changePlan(base({ target: plan })))).toBe('SUBSCRIPTION_ALREADY_ON_PLAN');
    const other = aProduct(tenant);
    expect(codeOf(() => changePlan(base({ target: aPlan(other), targetProduct: other })))).toBe('PLAN_NOT_IN_PRODUCT');
    const { s, licenses } = setup({ status: 'CANCELED' });
    expect(codeOf(() => changePlan(base({ subscription: s, licenses })))).toBe('SUBSCRIPTION_CANCELED');
  });
});
