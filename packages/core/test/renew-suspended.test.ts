import { randomUUID } from 'node:crypto';
import { renew, syncWithProvider, type SubscriptionStatus } from '../src';
import { aCustomer, aLicense, aPlan, aProduct, aSubscription, at } from '../src/testing';

// The payments review (twelfth session): a renewal (Stripe's invoice.paid) of an UNPAID or PAUSED
// subscription gives its INACTIVE licenses back at once, by the provider sync's rule.

const DAY = 86_400_000;
const tenant = { organisationId: randomUUID(), isTest: false };
const plan = aPlan(aProduct(tenant));

describe.each(['UNPAID', 'PAUSED'] as SubscriptionStatus[])('renew of a %s subscription', (status) => {
  it('restores its INACTIVE licenses, grantees kept, as the sync to ACTIVE does', () => {
    const s = aSubscription(plan, aCustomer(tenant), { status });
    const licenses = [
      aLicense(plan, { subscriptionId: s.id, granteeId: 'a', status: 'INACTIVE' }),
      aLicense(plan, { subscriptionId: s.id, status: 'INACTIVE' }),
      aLicense(plan, { subscriptionId: s.id, granteeId: 'gone', status: 'CANCELED' }),
    ];
    const out = renew(s, licenses, s.currentPeriodEnd, at(60 * DAY), at(30 * DAY));
    expect(out.subscription.status).toBe('ACTIVE');
    expect(out.licenses.map((l) => [l.granteeId, l.status])).toEqual([
      ['a', 'ACTIVE'],
      [null, 'ACTIVE'],
      ['gone', 'CANCELED'],
    ]);
    const synced = syncWithProvider(
      s,
      licenses,
      {
        status: 'ACTIVE',
        currentPeriodStart: s.currentPeriodEnd,
        currentPeriodEnd: at(60 * DAY),
        cancelAtPeriodEnd: false,
        canceledAt: null,
        quantity: 2,
      },
      at(30 * DAY),
      () => {
        throw new Error('no seats to add');
      },
    );
    expect(synced.saved.map((l) => l.status)).toEqual(out.licenses.filter((l) => l.status !== 'CANCELED').map((l) => l.status));
  });
});
