import { applyMembershipChanges, seatHolders, subscriptionGroup } from '../src';
import { aCustomer, aLicense, aPlan, aProduct, aSubscription, aTenant, anOrganisation, at, errorCodeOf } from '../src/testing';

/* The pure rules of a subscription's group (issue #20): members take seats. */
const tenant = aTenant(anOrganisation());
const plan = aPlan(aProduct(tenant));
const seats = (...grantees: (string | null)[]) => grantees.map((g, i) => aLicense(plan, { granteeId: g, createdAt: at(i) }));

describe('a subscription group', () => {
  it('has the subscription id and its owner', () => {
    const s = aSubscription(plan, aCustomer(tenant));
    expect(subscriptionGroup(s)).toMatchObject({ id: s.id, subscriptionId: s.id, customerId: s.customerId, name: null });
  });

  it('lists the holders of running seats once each', () => {
    const [a, b, c] = seats('ann', 'ann', 'bob');
    expect(seatHolders([a, b, { ...c, status: 'CANCELED' }, ...seats(null)])).toEqual(['ann']);
  });

  it('gives an unassigned seat to an added grantee, frees a removed one, and hands a replaced one over', () => {
    const licenses = seats('ann', null, 'bob');
    const changed = applyMembershipChanges(
      licenses,
      [
        { type: 'add', granteeId: 'cid' },
        { type: 'add', granteeId: 'ann' },
        { type: 'remove', granteeId: 'bob' },
        { type: 'replace', granteeId: 'ann', newGranteeId: 'dee' },
        { type: 'remove', granteeId: 'nobody' },
      ],
      at(9),
    );
    expect(new Map(changed.map((l) => [l.id, l.granteeId]))).toEqual(
      new Map([
        [licenses[0].id, 'dee'],
        [licenses[1].id, 'cid'],
        [licenses[2].id, null],
      ]),
    );
    expect(changed.every((l) => l.updatedAt.getTime() === at(9).getTime())).toBe(true);
  });

  it('refuses an add without a free seat, a replace of a non-member and a replace onto a member', () => {
    expect(errorCodeOf(() => applyMembershipChanges(seats('ann'), [{ type: 'add', granteeId: 'bob' }], at(1)))).toBe(
      'SEATS_EXCEED_UNASSIGNED',
    );
    expect(errorCodeOf(() => applyMembershipChanges(seats('ann'), [{ type: 'replace', granteeId: 'x', newGranteeId: 'y' }], at(1)))).toBe(
      'VALIDATION_FAILED',
    );
    expect(
      errorCodeOf(() => applyMembershipChanges(seats('ann', 'bob'), [{ type: 'replace', granteeId: 'ann', newGranteeId: 'bob' }], at(1))),
    ).toBe('VALIDATION_FAILED');
    // A canceled seat is never taken.
    const [canceled] = seats(null);
    expect(
      errorCodeOf(() => applyMembershipChanges([{ ...canceled, status: 'CANCELED' }], [{ type: 'add', granteeId: 'bob' }], at(1))),
    ).toBe('SEATS_EXCEED_UNASSIGNED');
  });
});
