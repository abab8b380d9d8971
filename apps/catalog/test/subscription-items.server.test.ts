import { randomUUID } from 'node:crypto';
import { FakePaymentProvider } from '@tollgate/core/testing';
import { createTestWorld, seedOrganisation, type SeededOrg, type TestWorld } from '@tollgate/runtime/testing';
import { createCatalogApp } from '../src';
import { catalogApi } from './helpers';

// Two item changes of one subscription at once, on a PostgreSQL server (concurrent transactions,
// unlike PGlite's one session): each is decided again on the row locked for update, so neither is
// lost and the seats follow both.
let world: TestWorld;
let org: SeededOrg;
let app: ReturnType<typeof createCatalogApp>;
const payments = new FakePaymentProvider();

beforeAll(async () => {
  world = await createTestWorld({ kind: 'postgres', payments });
  org = await seedOrganisation(world, 'items-concurrency');
  app = createCatalogApp(world);
});
afterAll(() => world?.close());

it('keeps both of two concurrent plan additions, and then both of two concurrent removals', async () => {
  const api = catalogApi(app, org.liveKey);
  const { subscription } = await world.core.checkout.completePurchase({
    planId: org.keys['plans.notes.team'],
    member: 'racer',
    email: null,
    granteeId: 'racer-seat',
    quantity: 2,
    currency: 'USD',
    paymentProvider: 'fake',
    paymentSubscriptionId: null,
    paymentCustomerId: null,
  });
  const [business, free] = [org.keys['plans.notes.business'], org.keys['plans.notes.free']];
  const items = (list: object[]) => api.put(`/api/subscriptions/${subscription.id}/items`, { items: list, proration: 'none' });
  const held = async () =>
    (
      (await api.get(`/api/subscriptions/${subscription.id}?expand=subscriptionPlans`).expect(200)).body.data.subscriptionPlans.data as {
        planId: string;
      }[]
    ).map((p) => p.planId);
  const running = async (planId: string) =>
    (await world.core.licenses.list(org.tenant, { subscriptionId: subscription.id, planId })).filter((l) => l.status !== 'CANCELED');

  for (let round = 0; round < 3; round++) {
    const added = await Promise.all([items([{ planId: business, action: 'add' }]), items([{ planId: free, action: 'add' }])]);
    expect(added.map((r) => r.status)).toEqual([204, 204]);
    expect((await held()).sort()).toEqual([org.keys['plans.notes.team'], business, free].sort());
    expect(await running(business)).toHaveLength(1);
    expect(await running(free)).toHaveLength(1);
    const removed = await Promise.all([items([{ planId: business, action: 'remove' }]), items([{ planId: free, action: 'remove' }])]);
    expect(removed.map((r) => r.status)).toEqual([204, 204]);
    expect(await held()).toEqual([org.keys['plans.notes.team']]);
    expect(await running(business)).toEqual([]);
  }
  // The same plan added twice at once: one wins, the other is refused (400), never two rows.
  const twice = await Promise.all([items([{ planId: business, action: 'add' }]), items([{ planId: business, action: 'add' }])]);
  expect(twice.map((r) => r.status).sort()).toEqual([204, 400]);
  expect(await held()).toEqual([org.keys['plans.notes.team'], business]);
  expect(await running(business)).toHaveLength(1);

  // The added plan's seats set by two identical requests at once (a retry while the first runs):
  // the provider is slow, so both decide on the same read and both tell it; the seats move once
  // and one of its charges is kept (the sandbox bills each change it is told as an invoice).
  const added = payments.addPlan.bind(payments);
  payments.addPlan = async (request) => {
    const outcome = await added(request);
    await new Promise((r) => setTimeout(r, 150));
    const body = { seats: request.quantity };
    return {
      ...outcome,
      documents: [
        {
          id: randomUUID(),
          organisationId: org.tenant.organisationId,
          subscriptionId: subscription.id,
          kind: 'invoice' as const,
          body,
          createdAt: new Date(),
        },
      ],
    };
  };
  const plan = (
    (await api.get(`/api/subscriptions/${subscription.id}?expand=subscriptionPlans`).expect(200)).body.data.subscriptionPlans.data as {
      id: string;
      planId: string;
    }[]
  ).find((p) => p.planId === business)!;
  const invoices = () => world.db.uow.run((r) => r.billingDocuments.list(subscription.id, 'invoice'));
  for (const seats of [3, 5]) {
    const before = (await invoices()).length;
    const set = await Promise.all([1, 2].map(() => api.put(`/api/subscription-plans/${plan.id}/seats`, { quantity: seats })));
    expect(set.map((r) => r.status)).toEqual([204, 204]);
    expect(await running(business)).toHaveLength(seats);
    expect((await invoices()).length - before).toBe(1);
  }
});
