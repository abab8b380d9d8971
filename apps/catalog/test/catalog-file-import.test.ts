import YAML from 'yaml';
import { createTestWorld, seedOrganisation, type TestWorld } from '@tollgate/runtime/testing';
import { createCatalogApp } from '../src';
import { catalogApi } from './helpers';

// `POST /api/products/import` refuses what `tollgate import` refuses (core checks the file's shape),
// and no catalog import takes away a currency running subscriptions are billed in.
let world: TestWorld;
let app: ReturnType<typeof createCatalogApp>;

beforeAll(async () => {
  world = await createTestWorld();
  app = createCatalogApp(world);
});
afterAll(() => world?.close());

it('refuses a file of the wrong shape with a 400 naming the path, and products that are not a list too (was a 500)', async () => {
  const org = await seedOrganisation(world, 'import-shape');
  const api = catalogApi(app, org.liveKey);
  const bad = await api.post('/api/products/import', { products: {} }).expect(400);
  expect(bad.body.errors).toEqual([{ property: 'products', message: 'must be a list, got {}' }]);
  const file = YAML.parse((await api.get(`/api/products/export/${org.keys['products.notes']}`).expect(200)).text);
  const team = file.products[0].plans.findIndex((p: { key: string }) => p.key === 'team');
  file.products[0].plans[team] = { ...file.products[0].plans[team], length: 0 };
  const res = await api.post('/api/products/import', file).expect(400);
  expect(res.body.errors).toEqual([{ property: `products[0].plans[${team}].length`, message: expect.stringContaining('from 1 to 1095') }]);
});

it('refuses (409, naming the plan and the currency) to drop a currency a running subscription is billed in', async () => {
  const org = await seedOrganisation(world, 'import-currency');
  const api = catalogApi(app, org.liveKey);
  await world.core.checkout.completePurchase({
    planId: org.keys['plans.notes.team'],
    member: 'team@example.com',
    email: 'team@example.com',
    granteeId: 'team@example.com',
    quantity: 2,
    currency: 'USD',
    paymentProvider: 'sandbox',
    paymentSubscriptionId: null,
    paymentCustomerId: null,
  });
  const file = YAML.parse((await api.get(`/api/products/export/${org.keys['products.notes']}`).expect(200)).text);
  file.products[0].plans = file.products[0].plans.map((p: { key: string; prices: object }) =>
    p.key === 'team' ? { ...p, prices: { EUR: 11 } } : p,
  );
  const res = await api.post('/api/products/import', file).expect(409);
  expect(res.body.errors).toEqual([
    { property: 'plans.team.prices.USD', message: expect.stringMatching(/plan Team .*running subscriptions billed in USD/) },
  ]);
});
