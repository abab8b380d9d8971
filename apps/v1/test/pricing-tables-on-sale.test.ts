import type { CatalogFile } from '@tollgate/core';
import { FakePaymentProvider } from '@tollgate/core/testing';
import { createTestWorld, type TestWorld } from '@tollgate/runtime/testing';
import request from 'supertest';
import { createV1App, pricingTableSchema, v1ProductSchema } from '../src';
import { expectSchema, v1 } from './helpers';

/**
 * What pricing tables show (the contract's pricing table, product pricing table and feature
 * `visibility`): the plans on sale, the public features, one currency, and only `globalGranteeId`
 * required on the product pricing table.
 */

let world: TestWorld;
let app: ReturnType<typeof createV1App>;
let api: ReturnType<typeof v1>;
let keys: Record<string, string>;
let apiKey: string;

const catalog = (organisation: string): CatalogFile => ({
  organisation,
  test: false,
  products: [
    {
      key: 'shop',
      name: 'shop',
      displayName: 'Shop',
      currencies: ['USD', 'EUR'],
      capabilities: ['edit'],
      features: [
        { key: 'projects', displayName: 'Projects', valueType: 'numerical', defaultValue: '3' },
        { key: 'internal', displayName: 'Internal flag', valueType: 'boolean', defaultValue: 'false', visibility: 'private' },
      ],
      plans: [
        { key: 'free', displayName: 'Free', pricingType: 'free', capabilities: ['edit'], features: { projects: '3', internal: 'false' } },
        {
          key: 'both',
          displayName: 'Both',
          pricingType: 'paid',
          prices: { USD: 10, EUR: 9 },
          capabilities: ['edit'],
          features: { projects: '10', internal: 'true' },
        },
        { key: 'euros', displayName: 'Euros', pricingType: 'paid', prices: { EUR: 20 }, capabilities: ['edit'] },
        { key: 'old', displayName: 'Old', pricingType: 'paid', prices: { USD: 5 }, capabilities: ['edit'] },
        { key: 'paused', displayName: 'Paused', pricingType: 'paid', prices: { USD: 7 }, capabilities: ['edit'], active: false },
      ],
      pricingTables: [{ key: 'main', name: 'Main', plans: ['free', 'both', 'euros', 'old', 'paused'], features: ['projects', 'internal'] }],
    },
  ],
});

const globalParams =
  'globalSuccessUrl=https://app.example.com/ok&globalCancelUrl=https://app.example.com/cancel&globalGranteeId=alice&member=m@example.com';

type PlanView = { uuid: string; displayName: string; checkoutUrl?: string; features: { feature: { name: string } }[] };

/** What a deferred checkout link carries (its signed payload, read without the key). */
const linkRequestOf = (url: string) =>
  JSON.parse(Buffer.from((url.split('/').pop() as string).split('.')[0], 'base64url').toString('utf8')).request;

const byName = (plans: PlanView[]) => Object.fromEntries(plans.map((p) => [p.displayName, p]));

beforeAll(async () => {
  world = await createTestWorld({ payments: new FakePaymentProvider() });
  app = createV1App(world);
  const org = await world.core.apiKeys.ensureOrganisation('tables-on-sale');
  keys = (await world.core.importer.apply(catalog('tables-on-sale'))).keys;
  apiKey = (await world.core.apiKeys.create({ organisation: 'tables-on-sale', scopes: ['*'], isTest: false })).plaintext;
  api = v1(app, apiKey);
  await world.core.plans.archivePlan({ organisationId: org.id, isTest: false }, keys['plans.shop.old']);
});
afterAll(() => world?.close());

describe('v1 pricing tables show what is on sale', () => {
  it('leaves an archived or inactive plan out of a pricing table and answers 200 (the page link too)', async () => {
    const table = keys['pricingTables.shop.main'];
    const res = await api.get(`/pricing-tables/${table}?${globalParams}`).expect(200);
    expectSchema(pricingTableSchema, res.body);
    expect(res.body.plans.map((p: { plan: PlanView }) => p.plan.displayName)).toEqual(['Free', 'Both', 'Euros']);
    await api.get(`/pricing-tables/${table}/page-link?${globalParams}`).expect(200);
    // The product pricing table leaves them out as well.
    const product = await api.get(`/products/${keys['products.shop']}/pricingtable?${globalParams}`).expect(200);
    expect(product.body.plans.map((p: PlanView) => p.displayName)).toEqual(['Free', 'Both', 'Euros']);
  });

  it('shows no private feature: not in the features, the product or the plans', async () => {
    const table = (await api.get(`/pricing-tables/${keys['pricingTables.shop.main']}?${globalParams}`).expect(200)).body;
    expect(table.features.map((f: { feature: { name: string } }) => f.feature.name)).toEqual(['projects']);
    expect(table.product.features.map((f: { name: string }) => f.name)).toEqual(['projects']);
    const both = byName(table.plans.map((p: { plan: PlanView }) => p.plan)).Both;
    expect(both.features.map((f) => f.feature.name)).toEqual(['projects']);

    const product = (await api.get(`/products/${keys['products.shop']}/pricingtable?${globalParams}`).expect(200)).body;
    expect(product.features.map((f: { name: string }) => f.name)).toEqual(['projects']);
    expect(byName(product.plans).Both.features.map((f) => f.feature.name)).toEqual(['projects']);
    // Elsewhere the private feature is still listed (it is checked, only not shown on tables).
    const features = (await api.get(`/products/${keys['products.shop']}/features`).expect(200)).body;
    expect(features.map((f: { name: string }) => f.name)).toEqual(['projects', 'internal']);
  });

  it("shows one currency: without `currency` the product's default, a plan not priced in it gets no link", async () => {
    for (const path of [`/pricing-tables/${keys['pricingTables.shop.main']}`, `/products/${keys['products.shop']}/pricingtable`]) {
      const res = await api.get(`${path}?${globalParams}`).expect(200);
      const plans = byName(res.body.plans.map((p: { plan?: PlanView } & PlanView) => p.plan ?? p));
      expect(plans.Euros.checkoutUrl).toBeUndefined();
      expect(linkRequestOf(plans.Both.checkoutUrl as string).currency).toBe('USD');
      // A free plan charges nothing: its link names no currency (its own fallback could be refused when followed).
      expect(linkRequestOf(plans.Free.checkoutUrl as string).currency).toBeUndefined();
      // Followed, the link sells in dollars.
      const followed = await request(app)
        .get(new URL(plans.Both.checkoutUrl as string).pathname)
        .expect(303);
      expect(followed.headers.location).toMatch(/^https:\/\/pay\.example\.test\//);

      const euro = await api.get(`${path}?${globalParams}&currency=eur`).expect(200);
      const inEuros = byName(euro.body.plans.map((p: { plan?: PlanView } & PlanView) => p.plan ?? p));
      for (const name of ['Free', 'Both', 'Euros']) expect(linkRequestOf(inEuros[name].checkoutUrl as string).currency).toBe('EUR');
      // Asked for a currency one plan is not priced in: that plan has no link, the others do (not a 400 for the table).
      const dollars = await api.get(`${path}?${globalParams}&currency=usd`).expect(200);
      const inDollars = byName(dollars.body.plans.map((p: { plan?: PlanView } & PlanView) => p.plan ?? p));
      expect(inDollars.Euros.checkoutUrl).toBeUndefined();
      expect(linkRequestOf(inDollars.Both.checkoutUrl as string).currency).toBe('USD');
      // One no plan is priced in is refused, as before.
      expect((await api.get(`${path}?${globalParams}&currency=gbp`)).status).toBe(400);
    }
  });

  it('serves the product pricing table with globalGranteeId alone (the only one the contract requires), its plans without links', async () => {
    const path = `/products/${keys['products.shop']}/pricingtable`;
    const res = await api.get(`${path}?globalGranteeId=alice`).expect(200);
    expectSchema(v1ProductSchema, res.body);
    expect(res.body.plans.map((p: PlanView) => [p.displayName, p.checkoutUrl ?? null])).toEqual([
      ['Free', null],
      ['Both', null],
      ['Euros', null],
    ]);
    // A plan given its own addresses gets its link; an address given is still checked.
    const both = keys['plans.shop.both'];
    const own =
      `&successUrls=${encodeURIComponent(`[${both},https://app.example.com/ok]`)}` +
      `&cancelUrls=${encodeURIComponent(`[${both},https://app.example.com/no]`)}`;
    const some = await api.get(`${path}?globalGranteeId=alice${own}`).expect(200);
    expect(some.body.plans.filter((p: PlanView) => p.checkoutUrl).map((p: PlanView) => p.displayName)).toEqual(['Both']);
    expect((await api.get(`${path}?globalGranteeId=alice&globalSuccessUrl=/relative`).expect(400)).body.code).toBe('CHECKOUT_INVALID_URL');
    expect((await api.get(`${path}?globalSuccessUrl=https://x.io&globalCancelUrl=https://x.io`).expect(400)).body.code).toBe(
      'VALIDATION_FAILED',
    );
  });

  it("refuses an inactive plan's own checkout link (400 PLAN_NOT_ON_SALE), on v1 and legacy, and still sells the plans on sale", async () => {
    const query = 'successUrl=https://app.example.com/ok&cancelUrl=https://app.example.com/no&granteeId=alice&member=m@example.com';
    const paused = await api.get(`/plans/${keys['plans.shop.paused']}/checkoutlink?${query}`).expect(400);
    expect(paused.body.code).toBe('PLAN_NOT_ON_SALE');
    expect(paused.body.message ?? paused.body.error).toMatch(/not on sale/);
    const legacy = await request(app).get(`/plans/${keys['plans.shop.paused']}/checkoutlink?${query}`).set('x-api-key', apiKey).expect(400);
    expect(JSON.stringify(legacy.body)).toMatch(/not on sale/);
    await api.get(`/plans/${keys['plans.shop.both']}/checkoutlink?${query}`).expect(200);
  });

  it('refuses the table of an archived product (400), even once no plan is left on it', async () => {
    const org = await world.core.apiKeys.ensureOrganisation('tables-on-sale');
    const tenant = { organisationId: org.id, isTest: false };
    for (const key of ['free', 'both', 'euros']) await world.core.plans.archivePlan(tenant, keys[`plans.shop.${key}`]);
    await world.core.products.archiveProduct(tenant, keys['products.shop']);
    expect((await api.get(`/pricing-tables/${keys['pricingTables.shop.main']}?${globalParams}`)).status).toBe(400);
  });
});
