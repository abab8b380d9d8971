import YAML from 'yaml';
import { createTestWorld, purchase, seedOrganisation, type TestWorld } from '@tollgate/runtime/testing';
import { createCatalogApp } from '../src';
import { catalogApi } from './helpers';

// `POST /api/products/import` over PostgreSQL: an import never deletes a capability or feature (the
// rows' plan links would cascade away from plans the file does not name, and from the licenses
// customers paid for), and a plan's price is never rounded.
let world: TestWorld;
let app: ReturnType<typeof createCatalogApp>;

beforeAll(async () => {
  world = await createTestWorld();
  app = createCatalogApp(world);
});
afterAll(() => world?.close());

async function setup(name: string) {
  const org = await seedOrganisation(world, name);
  const api = catalogApi(app, org.liveKey);
  await purchase(world, org.keys['plans.notes.team'], 'alice', 2);
  const check = async () =>
    (
      await world.core.checks.check(org.tenant, {
        productId: org.keys['products.notes'],
        granteeIds: ['alice'],
        graceDays: 0,
        encoding: 'der',
      })
    )?.capabilities;
  const exported = async () => YAML.parse((await api.get(`/api/products/export/${org.keys['products.notes']}`).expect(200)).text);
  return { org, api, check, exported };
}

it('keeps the capabilities and features a file leaves out, and what plans it does not name grant of them', async () => {
  const { api, check, exported } = await setup('import-keeps');
  expect(await check()).toEqual(['edit', 'export']);
  const file = await exported();
  const [product] = file.products;
  const team = product.plans.find((p: { key: string }) => p.key === 'team');
  // Only the product, with one capability and the feature theme renamed colour, sso dropped.
  const partial = {
    products: [
      {
        key: product.key,
        name: product.name,
        currencies: product.currencies,
        capabilities: ['edit'],
        features: [
          product.features[0],
          { key: 'colour', displayName: 'Colour', valueType: 'enum', enumOptions: ['light', 'dark'], defaultValue: 'light' },
        ],
      },
    ],
  };
  await api.post('/api/products/import', partial).expect(201);
  expect(await check()).toEqual(['edit', 'export']);
  const after = (await exported()).products[0];
  expect(after.capabilities).toEqual(['edit', 'export', 'admin']);
  expect(after.features.map((f: { key: string }) => f.key)).toEqual(['projects', 'colour', 'theme', 'sso']);
  const teamAfter = after.plans.find((p: { key: string }) => p.key === 'team');
  expect(teamAfter.capabilities).toEqual(team.capabilities);
  expect(teamAfter.features).toEqual(team.features);
  // The export imports back unchanged.
  expect((await api.post('/api/products/import', await exported()).expect(201)).body.data).toMatchObject({ created: 0, updated: 0 });
});

it('refuses a plan price with more decimals than its currency has, or above the largest amount, naming it', async () => {
  const { api, exported } = await setup('import-price-places');
  const file = await exported();
  const at = file.products[0].plans.findIndex((p: { key: string }) => p.key === 'team');
  const priced = (prices: object) => {
    const copy = structuredClone(file);
    copy.products[0].plans[at].prices = prices;
    return copy;
  };
  expect((await api.post('/api/products/import', priced({ USD: 12.345, EUR: 11 })).expect(400)).body.errors).toEqual([
    { property: 'plans.team.prices.USD', message: 'must have at most 2 decimal places (whole USD minor units), got 12.345' },
  ]);
  expect((await api.post('/api/products/import', priced({ USD: 1e12, EUR: 11 })).expect(400)).body.errors).toEqual([
    { property: 'plans.team.prices.USD', message: 'must be at most 999999999.99' },
  ]);
  expect((await exported()).products[0].plans[at].prices).toEqual({ USD: 12, EUR: 11 });
});

it("keeps the product's currencies a file leaves out while plans it does not name are priced in them", async () => {
  const { api, exported } = await setup('import-keeps-currencies');
  const file = await exported();
  const [product] = file.products;
  expect(product.currencies).toEqual(['USD', 'EUR']);
  const { currencies: _omitted, ...withoutCurrencies } = { ...product, plans: [], pricingTables: [] };
  void _omitted;
  // No `currencies`: the list stays; `[USD]` leaves EUR after it (team is priced in EUR).
  await api.post('/api/products/import', { products: [withoutCurrencies] }).expect(201);
  expect((await exported()).products[0].currencies).toEqual(['USD', 'EUR']);
  await api.post('/api/products/import', { products: [{ ...withoutCurrencies, currencies: ['EUR'] }] }).expect(201);
  const after = await exported();
  expect(after.products[0].currencies).toEqual(['EUR', 'USD']);
  expect(after.products[0].plans.find((p: { key: string }) => p.key === 'team').prices).toEqual({ USD: 12, EUR: 11 });
  // The product's own export imports back unchanged.
  expect((await api.post('/api/products/import', after).expect(201)).body.data).toMatchObject({ created: 0, updated: 0 });
});
