import { FakePaymentProvider } from '@tollgate/core/testing';
import { createTestWorld, seedOrganisation, type SeededOrg, type TestWorld } from '@tollgate/runtime/testing';
import { catalogOpenApi, createCatalogApp } from '../src';
import { catalogApi } from './helpers';
import { peopleOperations } from './published/people';

/* Every published operation of this lane's table is served: called with a real body on real
   records, none answers "no such operation", and the served document names it as published. */

let world: TestWorld;
let org: SeededOrg;
let app: ReturnType<typeof createCatalogApp>;

beforeAll(async () => {
  world = await createTestWorld({ payments: new FakePaymentProvider() });
  org = await seedOrganisation(world, 'published-people');
  app = createCatalogApp(world);
});
afterAll(() => world?.close());

const buy = async (member: string, granteeId: string) =>
  (
    await world.core.checkout.completePurchase({
      planId: org.testKeys['plans.notes.team'],
      member,
      email: null,
      granteeId,
      quantity: 3,
      currency: 'USD',
      paymentProvider: 'fake',
      paymentSubscriptionId: null,
      paymentCustomerId: null,
    })
  ).subscription;

it('serves every operation of the table, as the published document names it', async () => {
  const api = catalogApi(app, org.testKey);
  const served = catalogOpenApi(world.core).paths as Record<string, Record<string, { operationId: string }>>;
  const s = await buy('published-owner', 'published-grantee');
  const doomed = await buy('doomed-owner', 'doomed-grantee');
  const grantee = (await api.post('/api/grantees', { granteeId: 'published-g' }).expect(200)).body.data.id;
  const doomedGrantee = (await api.post('/api/grantees', { granteeId: 'doomed-g' }).expect(200)).body.data.id;
  const group = (await api.post('/api/groups', { owner: 'published-owner', grantees: [{ granteeId: 'published-g' }] }).expect(200)).body
    .data.id;
  const entitlement = (await api.post('/api/entitlements', { name: 'published_ent' }).expect(201)).body.data.id;
  const doomedEntitlement = (await api.post('/api/entitlements', { name: 'doomed_ent' }).expect(201)).body.data.id;
  const lineItem = (await api.get(`/api/subscription-plans/${s.id}?expand=subscriptionPlanLineItems`).expect(200)).body.data
    .subscriptionPlanLineItems.data[0].id;
  const idFor = (op: { method: string; path: string }): string => {
    const deleting = op.method === 'DELETE';
    if (op.path.startsWith('/api/subscription-plan-line-items')) return lineItem;
    if (op.path.startsWith('/api/entitlements')) return deleting ? doomedEntitlement : entitlement;
    if (op.path.startsWith('/api/grantees')) return deleting ? doomedGrantee : grantee;
    if (op.path.startsWith('/api/groups')) return deleting ? group : s.id;
    if (op.path.startsWith('/api/owners')) return deleting ? doomed.customerId : s.customerId;
    return deleting ? doomed.id : s.id;
  };
  const bodies: Record<string, unknown> = {
    createEntitlement: { name: 'published_new' },
    createSalableOnlySubscription: {
      plans: [{ planId: org.testKeys['plans.notes.team'], metadata: { seats: { quantity: 2 } } }],
      owner: 'published-owner',
      grantee: 'published-service',
      interval: 'month',
      intervalCount: 1,
    },
    updateEntitlement: { name: 'published_renamed' },
    createGrantee: { granteeId: 'published-new', name: 'New' },
    updateGrantee: { granteeId: 'published-g', name: 'Renamed' },
    createGroup: { owner: 'published-owner', name: 'Team', grantees: [{ granteeId: 'published-h', name: 'H' }] },
    updateGroup: { id: s.id, name: 'Seats', grantees: [] },
    manageGrantees: [{ type: 'add', granteeId: 'published-seat', name: 'Seat' }],
    updateOwner: { owner: 'published-owner', email: 'owner@example.com' },
    updateSubscriptionPlanSeats: { quantity: 4 },
    updateSubscriptionPlanLineItem: { quantity: 4, proration: 'none' },
    batchSubscriptionActions: { action: 'disable-auto-renew', subscriptionIds: [s.id] },
    updateSubscriptionItems: {
      items: [{ planId: s.planId, action: 'replace', newPlanId: org.testKeys['plans.notes.business'] }],
      proration: 'none',
    },
    createSubscriptionPortal: { returnUrl: 'https://vendor.example.com', features: { invoiceHistory: { enabled: true } } },
  };
  const query: Record<string, string> = { updateSubscriptionAutoRenew: '?status=enable' };
  // Cancel after the other changes of the subscription, deletions last, an owner after its subscription.
  const rank = (op: { method: string; path: string; operationId: string }) =>
    op.operationId === 'cancelSubscription' ? 1 : op.method !== 'DELETE' ? 0 : op.path.startsWith('/api/owners') ? 3 : 2;
  const rows = [...peopleOperations].sort((a, b) => rank(a) - rank(b));
  const answers: string[] = [];
  for (const op of rows) {
    const path = op.path.replace('{id}', idFor(op)) + (query[op.operationId] ?? '');
    const method = op.method.toLowerCase() as 'get' | 'post' | 'put' | 'del';
    const res =
      op.method === 'GET'
        ? await api.get(path)
        : op.method === 'DELETE'
          ? await api.del(path)
          : await api[method === 'post' ? 'post' : 'put'](path, bodies[op.operationId] as object);
    answers.push(`${op.operationId} ${res.status}${res.status >= 300 ? ` ${JSON.stringify(res.body)}` : ''}`);
    expect(res.body?.detail).not.toBe('no such catalog operation');
    expect(served[op.path.replace(/\{id\}/g, '{id}')]?.[op.method.toLowerCase()]?.operationId).toBe(op.operationId);
  }
  // Each answered as published: a success.
  expect(answers.filter((a) => !/ 20[014]$/.test(a))).toEqual([]);
});
