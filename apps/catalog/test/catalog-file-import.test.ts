import request from 'supertest';
import YAML from 'yaml';
import { createTestWorld, seedOrganisation, type TestWorld } from '@tollgate/runtime/testing';
import { createCatalogApp } from '../src';
import { catalogApi } from './helpers';

// `POST /api/products/import` refuses what `tollgate import` refuses (both check the file against the
// catalog-file JSON Schema of @tollgate/http; core checks keys named twice and MAX_SEATS),
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
  expect(bad.body.errors).toEqual([{ property: 'products', message: 'must be array, got {}' }]);
  const file = YAML.parse((await api.get(`/api/products/export/${org.keys['products.notes']}`).expect(200)).text);
  const team = file.products[0].plans.findIndex((p: { key: string }) => p.key === 'team');
  file.products[0].plans[team] = { ...file.products[0].plans[team], length: 0 };
  const res = await api.post('/api/products/import', file).expect(400);
  expect(res.body.errors).toEqual([
    { property: `products[0].plans[${team}].length`, message: 'must be a whole number from 1 to 1095, got 0' },
  ]);
  // A multipart YAML file is checked the same way, every problem named; nothing was written.
  file.products[0].plans[team] = { ...file.products[0].plans[team], trialDays: 731, visibility: 'secret', length: 0 };
  const upload = await request(app)
    .post('/api/products/import')
    .set('authorization', `Bearer ${org.liveKey}`)
    .attach('file', Buffer.from(YAML.stringify(file)), { filename: 'notes.yaml', contentType: 'application/yaml' })
    .expect(400);
  expect(upload.body.errors).toEqual([
    { property: `products[0].plans[${team}].length`, message: 'must be a whole number from 1 to 1095, got 0' },
    { property: `products[0].plans[${team}].trialDays`, message: 'must be a whole number from 0 to 730 or null, got 731' },
    { property: `products[0].plans[${team}].visibility`, message: 'must be one of public, private, got "secret"' },
  ]);
  // The key decides the organisation: a file without one is taken.
  delete file.products[0].plans[team].trialDays;
  delete file.products[0].plans[team].visibility;
  file.products[0].plans[team].length = 1;
  const keyless = { ...file, organisation: undefined };
  await api.post('/api/products/import', keyless).expect(201);
});

it('refuses keys named twice and seats above MAX_SEATS (core) with a 400 naming the path', async () => {
  const org = await seedOrganisation(world, 'import-core-rules');
  const api = catalogApi(app, org.liveKey);
  const file = YAML.parse((await api.get(`/api/products/export/${org.keys['products.notes']}`).expect(200)).text);
  const plans = file.products[0].plans;
  const twice = { ...file, products: [{ ...file.products[0], plans: [...plans, plans[0]] }] };
  expect((await api.post('/api/products/import', twice).expect(400)).body.errors).toEqual([
    {
      property: `products[0].plans[${plans.length}].key`,
      message: `plan key ${plans[0].key} is named twice (products[0].plans[0] and products[0].plans[${plans.length}])`,
    },
  ]);
  const seats = { ...file, products: [{ ...file.products[0], plans: [{ ...plans[0], perSeatAmount: 20000 }, ...plans.slice(1)] }] };
  expect((await api.post('/api/products/import', seats).expect(400)).body.errors).toEqual([
    { property: 'products[0].plans[0].perSeatAmount', message: 'must be a whole number from 1 to 10000, got 20000' },
  ]);
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
