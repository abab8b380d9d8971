import { randomUUID } from 'node:crypto';
import { setPlanSeatsAt, type PaymentProvider, type PlanItemRequest } from '../src';
import { aCustomer, aPlan, aProduct, aSubscription } from '@tollgate/core/testing';

// The payment clean-up (paycleanup): an added plan's seats are told to a provider by one
// implementation, the use case's (`SubscriptionItems.setAddedSeats`) and the runtime's mode router's.

type Seats = Pick<PaymentProvider, 'name' | 'addPlan' | 'removePlan' | 'setPlanSeats'>;

const tenant = { organisationId: randomUUID(), isTest: false };
const plan = aPlan(aProduct(tenant), { licenseType: 'perSeat' });
const T = new Date('2026-01-15T12:00:00.000Z');
const subscription = {
  ...aSubscription(plan, aCustomer(tenant)),
  addedPlans: [{ id: randomUUID(), planId: plan.id, quantity: 2, lineItemIds: [], createdAt: T, updatedAt: T }],
};
// The whole request, the optional members included: the fallback passes each on, but the seats.
const request = (quantity: number): PlanItemRequest => ({
  subscription,
  plan,
  quantity,
  unitAmount: 100,
  proration: 'none',
  requestId: 'req-1',
  paymentItemId: 'si_1',
  member: 'm@example.com',
});

type Told = [string, PlanItemRequest];

/**
 * A provider that records what it is told, whole; `omit`: the operations it has not. Its
 * operations read `this` (as a provider's methods do): called unbound, they throw.
 */
function provider(omit: (keyof Seats)[] = []): Seats & { told: Told[] } {
  const told: Told[] = [];
  const p: Seats & { told: Told[] } = {
    name: 'p',
    told,
    async addPlan(r) {
      told.push([`${this.name}.add`, r]);
      return { paymentItemId: 'add' };
    },
    async removePlan(r) {
      told.push([`${this.name}.remove`, r]);
      return { paymentItemId: 'remove' };
    },
    async setPlanSeats(r) {
      told.push([`${this.name}.set`, r]);
      return { paymentItemId: 'set' };
    },
  };
  for (const k of omit) delete (p as Partial<Seats>)[k];
  return p;
}

it('tells a provider that keeps the number the number', async () => {
  const p = provider();
  expect(await setPlanSeatsAt(p, request(5))).toEqual({ paymentItemId: 'set' });
  expect(await setPlanSeatsAt(p, request(2))).toEqual({ paymentItemId: 'set' });
  expect(p.told).toEqual([
    ['p.set', request(5)],
    ['p.set', request(2)],
  ]);
});

it('tells one that keeps no number the difference from what the subscription holds, as seats added or removed', async () => {
  const p = provider(['setPlanSeats']);
  expect(await setPlanSeatsAt(p, request(5))).toEqual({ paymentItemId: 'add' });
  expect(await setPlanSeatsAt(p, request(1))).toEqual({ paymentItemId: 'remove' });
  expect(await setPlanSeatsAt(p, request(2))).toEqual({});
  // A plan the subscription does not hold: all its seats added.
  const none = { ...request(3), subscription: { ...subscription, addedPlans: [] } };
  expect(await setPlanSeatsAt(p, none)).toEqual({ paymentItemId: 'add' });
  // The request as asked (its id, item and member included), but the difference for its seats.
  expect(p.told).toEqual([
    ['p.add', { ...request(5), quantity: 3 }],
    ['p.remove', { ...request(1), quantity: 1 }],
    ['p.add', none],
  ]);
});

it('refuses on a provider whose subscriptions hold one plan', async () => {
  const p = provider(['setPlanSeats', 'addPlan', 'removePlan']);
  await expect(setPlanSeatsAt(p, request(5))).rejects.toMatchObject({
    code: 'PAYMENT_NOT_AVAILABLE',
    message: 'subscriptions paid through p hold one plan',
  });
  expect(await setPlanSeatsAt(p, request(2))).toEqual({});
});
