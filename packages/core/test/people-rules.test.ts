import { applyMembershipChanges, groupReference, NewSeats, seatHolders, seatsForGroup, subscriptionGroup } from '../src';
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

describe('a purchase for a group', () => {
  it('reads `grp_<id>` as a group reference and anything else as not one', () => {
    expect(groupReference('grp_0f8fad5b-d9cb-469f-a165-70867728950e')).toBe('0f8fad5b-d9cb-469f-a165-70867728950e');
    expect(groupReference('alice')).toBeUndefined();
    expect(groupReference('my_grp_x')).toBeUndefined();
  });

  it('sells a seat per member: grows an unasked per-seat count, refuses an asked one below the members, and a one-seat plan for several', () => {
    expect(seatsForGroup(3, true, 2, undefined)).toBe(3);
    expect(seatsForGroup(1, true, 2, undefined)).toBeUndefined();
    expect(seatsForGroup(3, true, 1, 5)).toBe(5);
    expect(errorCodeOf(() => seatsForGroup(3, true, 1, 2))).toBe('VALIDATION_FAILED');
    expect(seatsForGroup(1, false, 1, undefined)).toBeUndefined();
    expect(seatsForGroup(0, false, 1, undefined)).toBeUndefined();
    expect(errorCodeOf(() => seatsForGroup(2, false, 1, undefined))).toBe('VALIDATION_FAILED');
  });

  it('gives the first seats to the members in order, and the rest start free', () => {
    const template = aLicense(plan);
    let n = 0;
    const made = new NewSeats(template, 4, () => `id-${n++}`, ['ann', 'bob']).all();
    expect(made.map((l) => l.granteeId)).toEqual(['ann', 'bob', null, null]);
    expect(new NewSeats(template, 2, () => `id-${n++}`, 'cat').all().map((l) => l.granteeId)).toEqual(['cat', null]);
  });
});
