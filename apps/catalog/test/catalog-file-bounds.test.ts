import { createTestWorld, seedOrganisation, type TestWorld } from '@tollgate/runtime/testing';
import { createCatalogApp } from '../src';
import { catalogApi } from './helpers';

// `POST /api/products/import` checks a file of any size within the body limit in bounded work: a
// 400 naming the first 100 problems and saying more were left out; names have a largest length.
let world: TestWorld;
let app: ReturnType<typeof createCatalogApp>;

beforeAll(async () => {
  world = await createTestWorld();
  app = createCatalogApp(world);
});
afterAll(() => world?.close());

it('answers 40 000 empty products with a 400 naming the first 100 problems', async () => {
  const org = await seedOrganisation(world, 'import-bounds');
  const api = catalogApi(app, org.liveKey);
  const res = await api.post('/api/products/import', { products: Array.from({ length: 40_000 }, () => ({})) }).expect(400);
  expect(res.body.errors).toHaveLength(101);
  expect(res.body.errors.slice(0, 3)).toEqual([
    { property: 'products', message: 'may hold at most 1000 items, got 40000' },
    { property: 'products[0]', message: 'key is required' },
    { property: 'products[0]', message: 'name is required' },
  ]);
  expect(res.body.errors[100]).toEqual({ property: '(the file)', message: 'more problems left out: the first 100 are listed' });
});

it('refuses a capability name longer than 100 characters (as the catalog API)', async () => {
  const org = await seedOrganisation(world, 'import-long-name');
  const api = catalogApi(app, org.liveKey);
  const file = { products: [{ key: 'big', name: 'Big', capabilities: ['A'.repeat(400_000)] }] };
  const res = await api.post('/api/products/import', file).expect(400);
  expect(res.body.errors).toEqual([{ property: 'products[0].capabilities[0]', message: 'must be at most 100 characters' }]);
});
