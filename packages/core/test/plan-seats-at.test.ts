import { randomUUID } from 'node:crypto';
import { setPlanSeatsAt, type PaymentProvider, type PlanItemRequest, type ProviderOutcome } from '../src';
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
const request = (quantity: number): PlanItemRequest => ({ subscription, plan, quantity, unitAmount: 100, proration: 'none' });

/** A provider that records what it is told; `omit`: the operations it has not. */
function provider(omit: (keyof Seats)[] = []): Seats & { told: [string, number][] } {
  const told: [string, number][] = [];
  const op =
    (name: string) =>
    async (r: PlanItemRequest): Promise<ProviderOutcome> => (told.push([name, r.quantity]), { paymentItemId: name });
  const p: Seats & { told: [string, number][] } = {
    name: 'p',
    told,
    addPlan: op('add'),
    removePlan: op('remove'),
    setPlanSeats: op('set'),
  };
  for (const k of omit) delete (p as Partial<Seats>)[k];
  return p;
}

it('tells a provider that keeps the number the number', async () => {
  const p = provider();
  expect(await setPlanSeatsAt(p, request(5))).toEqual({ paymentItemId: 'set' });
  expect(await setPlanSeatsAt(p, request(2))).toEqual({ paymentItemId: 'set' });
  expect(p.told).toEqual([
    ['set', 5],
    ['set', 2],
  ]);
});

it('tells one that keeps no number the difference from what the subscription holds, as seats added or removed', async () => {
  const p = provider(['setPlanSeats']);
  expect(await setPlanSeatsAt(p, request(5))).toEqual({ paymentItemId: 'add' });
  expect(await setPlanSeatsAt(p, request(1))).toEqual({ paymentItemId: 'remove' });
  expect(await setPlanSeatsAt(p, request(2))).toEqual({});
  // A plan the subscription does not hold: all its seats added.
  expect(await setPlanSeatsAt(p, { ...request(3), subscription: { ...subscription, addedPlans: [] } })).toEqual({ paymentItemId: 'add' });
  expect(p.told).toEqual([
    ['add', 3],
    ['remove', 1],
    ['add', 3],
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
