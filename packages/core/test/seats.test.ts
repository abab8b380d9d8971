import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { addSeats, removeSeats, validateSeatChange, unassignedSeats, type DomainError, type License, type Subscription } from '../src';
import { aCustomer, aLicense, aPlan, aProduct, aSubscription, at, errorCodeOf } from '../src/testing';

const tenant = { organisationId: randomUUID(), isTest: false };
const product = aProduct(tenant);
const plan = aPlan(product, { licenseType: 'perSeat', perSeatAmount: 2 });
const customer = aCustomer(tenant);
const now = at(1000);

function world(quantity: number, assigned: number) {
  const s = aSubscription(plan, customer, { quantity });
  const licenses = Array.from({ length: quantity }, (_, i) =>
    aLicense(plan, { subscriptionId: s.id, granteeId: i < assigned ? `g${i}` : null, createdAt: at(i) }),
  );
  return { s, licenses };
}

const codeOf = errorCodeOf;

describe('add seats', () => {
  it('raises the quantity and creates that many unassigned licenses', () => {
    const { s } = world(2, 1);
    const out = addSeats(s, plan, 'm@example.com', 3, now, randomUUID);
    expect(out.subscription.quantity).toBe(5);
    expect(out.created.all()).toHaveLength(3);
    expect(out.created.all().every((l) => l.granteeId === null && l.subscriptionId === s.id && l.status === 'ACTIVE')).toBe(true);
  });

  it('refuses a count that is not a positive whole number, a plan that is not per seat, and a canceled subscription', () => {
    const { s } = world(2, 0);
    for (const bad of [0, -1, 1.5, NaN]) expect(codeOf(() => addSeats(s, plan, 'm', bad, now, randomUUID))).toBe('SEATS_INVALID_COUNT');
    expect(codeOf(() => addSeats(s, { ...plan, licenseType: 'user' }, 'm', 1, now, randomUUID))).toBe('SUBSCRIPTION_NOT_PER_SEAT');
    expect(codeOf(() => addSeats({ ...s, status: 'CANCELED' }, plan, 'm', 1, now, randomUUID))).toBe('SUBSCRIPTION_CANCELED');
  });
});

describe('remove seats', () => {
  it('removes only unassigned licenses, newest first', () => {
    const { s, licenses } = world(5, 2);
    const out = removeSeats(s, plan, licenses, 2, now);
    expect(out.subscription.quantity).toBe(3);
    expect(out.removed.map((l) => l.id)).toEqual([licenses[4].id, licenses[3].id]);
    expect(out.removed.every((l) => l.granteeId === null)).toBe(true);
  });

  it('refuses to remove more than the unassigned seats, and changes nothing', () => {
    const { s, licenses } = world(5, 4);
    expect(codeOf(() => removeSeats(s, plan, licenses, 2, now))).toBe('SEATS_EXCEED_UNASSIGNED');
    expect(s.quantity).toBe(5);
  });

  it('refuses to go below the plan minimum (perSeatAmount)', () => {
    const { s, licenses } = world(3, 0);
    expect(codeOf(() => removeSeats(s, plan, licenses, 2, now))).toBe('SEATS_BELOW_MINIMUM');
    expect(removeSeats(s, plan, licenses, 1, now).subscription.quantity).toBe(2);
  });

  it('validates at request time with the same rules', () => {
    const { s, licenses } = world(3, 3);
    expect(codeOf(() => validateSeatChange(s, plan, licenses, { type: 'seats.decrement', count: 1 }, now))).toBe('SEATS_EXCEED_UNASSIGNED');
    expect(codeOf(() => validateSeatChange(s, plan, licenses, { type: 'seats.increment', count: 0 }, now))).toBe('SEATS_INVALID_COUNT');
    expect(() => validateSeatChange(s, plan, licenses, { type: 'seats.increment', count: 2 }, now)).not.toThrow();
  });
});

describe('seat changes keep quantity equal to the licenses and never remove an assigned one (property)', () => {
  it('holds for random sequences of increments, decrements and assignments', () => {
    const step = fc.oneof(
      fc.record({ op: fc.constant('inc' as const), n: fc.integer({ min: -1, max: 4 }) }),
      fc.record({ op: fc.constant('dec' as const), n: fc.integer({ min: -1, max: 4 }) }),
      fc.record({ op: fc.constant('assign' as const), n: fc.integer({ min: 0, max: 10 }) }),
    );
    fc.assert(
      fc.property(fc.array(step, { maxLength: 40 }), (steps) => {
        let { s, licenses } = world(2, 0) as { s: Subscription; licenses: License[] };
        let t = 10;
        for (const st of steps) {
          const when = at(t++);
          const assignedBefore = new Set(licenses.filter((l) => l.granteeId !== null).map((l) => l.id));
          try {
            if (st.op === 'inc') {
              const out = addSeats(s, plan, 'm', st.n, when, randomUUID);
              s = out.subscription;
              licenses = [...licenses, ...out.created.all()];
            } else if (st.op === 'dec') {
              const out = removeSeats(s, plan, licenses, st.n, when);
              const removed = new Set(out.removed.map((l) => l.id));
              for (const id of removed) expect(assignedBefore.has(id)).toBe(false);
              s = out.subscription;
              licenses = licenses.filter((l) => !removed.has(l.id));
            } else {
              const free = unassignedSeats(licenses);
              if (free.length) licenses = licenses.map((l) => (l.id === free[st.n % free.length].id ? { ...l, granteeId: `g${t}` } : l));
            }
          } catch (e) {
            expect((e as DomainError).code).toMatch(/^SEATS_/);
          }
          expect(s.quantity).toBe(licenses.length);
          expect(s.quantity).toBeGreaterThanOrEqual(2);
          for (const id of assignedBefore) expect(licenses.some((l) => l.id === id)).toBe(true);
        }
      }),
      { numRuns: 300 },
    );
  });
});
