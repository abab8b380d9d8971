import { FakePaymentProvider, sampleCatalog } from '@tollgate/core/testing';
import { createTestWorld, type TestWorld } from '@tollgate/runtime/testing';
import { createCatalogApp } from '../src';
import { catalogApi } from './helpers';

/* The lifecycle review (twelfth session): `PUT /api/subscriptions/:id/items` on a subscription no
   payment provider bills (made without payment, or through the free checkout) takes only free
   plans, as change-plan does: a paid plan added, moved to by a remove and an add, or replacing an
   added plan is a 400 naming the item, and nothing is told or written. */

let world: TestWorld;
let app: ReturnType<typeof createCatalogApp>;
let key: string;
let plans: Record<string, string>;
const payments = new FakePaymentProvider();

beforeAll(async () => {
  world = await createTestWorld({ payments });
  await world.core.apiKeys.ensureOrganisation('unbilled-org');
  const catalog = sampleCatalog('unbilled-org');
  const [product] = catalog.products ?? [];
  const freePlus = {
    key: 'free-plus',
    displayName: 'Free plus',
    pricingType: 'free' as const,
    licenseType: 'user' as const,
    interval: 'month' as const,
    length: 1,
    capabilities: ['edit'],
  };
  const { keys } = await world.core.importer.apply({ ...catalog, products: [{ ...product, plans: [...(product.plans ?? []), freePlus] }] });
  plans = Object.fromEntries(['free', 'free-plus', 'business'].map((k) => [k, keys[`plans.notes.${k}`]]));
  key = (await world.core.apiKeys.create({ organisation: 'unbilled-org', scopes: ['*'], isTest: false })).plaintext;
  app = createCatalogApp(world);
});
afterAll(() => world?.close());

const api = () => catalogApi(app, key);

describe('items of a subscription made without payment', () => {
  it('refuses a paid plan added, moved to (remove + add) or replacing an added plan: 400 naming the item, nothing changed', async () => {
    const created = await api()
      .post('/api/subscriptions', {
        plans: [{ planId: plans.free }],
        owner: 'unbilled-owner',
        grantee: 'unbilled-user',
        interval: 'month',
        intervalCount: 1,
      })
      .expect(201);
    const id = created.body.data.id as string;
    const items = (list: object[]) => api().put(`/api/subscriptions/${id}/items`, { items: list, proration: 'none' });
    const held = async () =>
      (
        (await api().get(`/api/subscriptions/${id}?expand=subscriptionPlans`).expect(200)).body.data.subscriptionPlans.data as {
          planId: string;
        }[]
      ).map((x) => x.planId);
    const calls = payments.calls.length;

    const added = (await items([{ planId: plans.business, action: 'add' }]).expect(400)).body;
    expect(added.errors[0]).toMatchObject({ property: 'items[0].planId', message: expect.stringContaining('paid plan') });
    expect(added.detail).toMatch(/create it anew/);

    const moved = (
      await items([
        { planId: plans.free, action: 'remove' },
        { planId: plans.business, action: 'add' },
      ]).expect(400)
    ).body;
    expect(moved.errors[0]).toMatchObject({ property: 'items[1].planId', message: expect.stringContaining('paid plan') });
    expect(await held()).toEqual([plans.free]);

    // A free plan is still added; replacing it with a paid plan is refused.
    await items([{ planId: plans['free-plus'], action: 'add' }]).expect(204);
    const replaced = (await items([{ planId: plans['free-plus'], action: 'replace', newPlanId: plans.business }]).expect(400)).body;
    // Named by the replace's own field, `newPlanId`.
    expect(replaced.errors[0]).toMatchObject({
      property: 'items[0].newPlanId',
      message: expect.stringContaining('paid plan'),
    });
    expect(await held()).toEqual([plans.free, plans['free-plus']]);
    expect(payments.calls.length).toBe(calls);
    const check = await api().get('/api/entitlements/check?granteeId=unbilled-user').expect(200);
    expect(check.body.data.entitlements.map((e: { value: string }) => e.value).sort()).not.toContain('admin');
  });
});
