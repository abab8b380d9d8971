import { FakePaymentProvider } from '@tollgate/core/testing';
import type { Plan } from '@tollgate/core';
import { createTestWorld, seedOrganisation, type SeededOrg, type TestWorld } from '@tollgate/runtime/testing';
import { createV1App } from '../src';
import { v1 } from './helpers';

// A pricing table offers no link to a plan its payment provider cannot sell (the port's
// `unsellable`: Stripe, a charging metered line item without a Stripe price): followed, the link
// would answer the visitor's browser with the 400 of the refused checkout. The table's other plans
// keep theirs.
let world: TestWorld;
let org: SeededOrg;
let api: ReturnType<typeof v1>;
const unsellable = new Set<string>();
const payments = Object.assign(new FakePaymentProvider(), {
  unsellable: (plan: Plan, currency: string) =>
    unsellable.has(plan.displayName)
      ? `${plan.displayName} cannot be billed in ${currency}: a metered line item has no Stripe price`
      : undefined,
});

beforeAll(async () => {
  world = await createTestWorld({ payments });
  org = await seedOrganisation(world, 'unsellable-org');
  api = v1(createV1App(world), org.liveKey);
});
afterAll(() => world?.close());

const globalParams =
  'globalSuccessUrl=https://app.example.com/ok&globalCancelUrl=https://app.example.com/cancel&globalGranteeId=alice&member=m@example.com';

/** Each plan of the table by name, with whether it has a checkout link. */
async function linked(): Promise<Record<string, boolean>> {
  const res = await api.get(`/pricing-tables/${org.keys['pricingTables.notes.main']}?${globalParams}`).expect(200);
  return Object.fromEntries(
    res.body.plans.map((p: { plan: { displayName: string; checkoutUrl?: string | null } }) => [p.plan.displayName, !!p.plan.checkoutUrl]),
  );
}

it("leaves out the link of a plan the payment provider cannot sell, and keeps the other plans' links", async () => {
  const before = await linked();
  expect(before.Team).toBe(true);
  unsellable.add('Team');
  const after = await linked();
  expect(after.Team).toBe(false);
  expect(after).toEqual({ ...before, Team: false });
});
