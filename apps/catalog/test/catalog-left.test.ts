import type { Currency } from '@tollgate/core';
import { createTestWorld, seedOrganisation, type SeededOrg, type TestWorld } from '@tollgate/runtime/testing';
import YAML from 'yaml';
import { createCatalogApp } from '../src';
import { catalogApi } from './helpers';

/* What the catalog audit left (docs/decisions.md, "Catalog API: archived records read-only, ..."
   and its review follow-ups): the catalog-file import keeps archived records read-only and takes
   new currencies from the published list only, as the catalog API does; a cart, as a plan, is
   re-saved with a currency it already has though the list lacks it. */

let world: TestWorld;
let app: ReturnType<typeof createCatalogApp>;

beforeAll(async () => {
  world = await createTestWorld();
  app = createCatalogApp(world);
});
afterAll(() => world?.close());

type Body = { detail: string; errors: { property: string; message: string }[] | null };
const names = (body: Body, property: string) => expect(body.errors?.map((e) => e.property)).toContain(property);

type PlanEntry = { key: string; displayName?: string; prices?: Record<string, number> } & Record<string, unknown>;
type FileShape = { products: ({ key: string; name: string; currencies?: string[]; plans: PlanEntry[] } & Record<string, unknown>)[] };

async function exported(org: SeededOrg): Promise<FileShape> {
  const api = catalogApi(app, org.liveKey);
  return YAML.parse((await api.get(`/api/products/export/${org.keys['products.notes']}`).expect(200)).text) as FileShape;
}
const withPlan = (file: FileShape, key: string, change: (p: PlanEntry) => PlanEntry): FileShape => ({
  ...file,
  products: [{ ...file.products[0], plans: file.products[0].plans.map((p) => (p.key === key ? change(p) : p)) }],
});

/** Gives a product and its plan a currency the published list lacks (JOD), as an older release could. */
async function storeJod(productId: string, planId: string) {
  await world.db.uow.run(async (r) => {
    const jod: Currency = (await r.currencies.list()).find((c) => c.shortName === 'JOD') ?? {
      id: '7c0d6f1e-6a8b-4e43-9d6b-0a1c2d3e4f50',
      shortName: 'JOD',
      longName: 'Jordanian Dinar',
      symbol: 'JD',
    };
    await r.currencies.save(jod);
    const product = (await r.products.get(productId))!;
    await r.products.save({ ...product, currencies: [...product.currencies, { currencyId: jod.id, isDefault: false }] });
    const plan = (await r.plans.get(planId))!;
    await r.plans.save({
      ...plan,
      currencies: [...plan.currencies, { currencyId: jod.id, amountMinor: 9000, paymentPlanId: `${plan.key}_jod` }],
    });
  });
}

describe('the catalog-file import and archived records', () => {
  it('refuses (400 PLAN_ARCHIVED naming the plan) to change an archived plan; the same file unchanged is taken', async () => {
    const org = await seedOrganisation(world, 'left-archived-plan');
    const api = catalogApi(app, org.liveKey);
    const planId = org.keys['plans.notes.team'];
    // The file as it was before the archive (export leaves archived plans out).
    const file = await exported(org);
    await api.post(`/api/plans/${planId}/archive`).expect(204);

    const same = await api.post('/api/products/import', file).expect(201);
    expect(same.body.data).toMatchObject({ created: 0, updated: 0 });

    const res = await api
      .post(
        '/api/products/import',
        withPlan(file, 'team', (p) => ({ ...p, displayName: 'Team renamed' })),
      )
      .expect(400);
    expect(res.body.detail).toMatch(/plan team is archived/);
    names(res.body, 'plans.team');
    const plan = (await api.get(`/api/plans/${planId}`).expect(200)).body.data;
    expect(plan.name).not.toBe('Team renamed');
    expect(plan.archivedAt).not.toBeNull();
  });

  it('refuses (400 PRODUCT_ARCHIVED) to change an archived product, its plans or pricing tables, or add a plan; unchanged is taken', async () => {
    const org = await seedOrganisation(world, 'left-archived-product');
    const api = catalogApi(app, org.liveKey);
    const productId = org.keys['products.notes'];
    const file = await exported(org);
    await api.post(`/api/products/${productId}/archive`).expect(204);

    const same = await api.post('/api/products/import', file).expect(201);
    expect(same.body.data).toMatchObject({ created: 0, updated: 0 });

    const product = file.products[0];
    const refused: [FileShape, string][] = [
      [{ products: [{ ...product, name: 'Renamed' }] }, 'products.notes'],
      [withPlan(file, 'team', (p) => ({ ...p, displayName: 'Team renamed' })), 'plans.team'],
      [{ products: [{ ...product, plans: [...product.plans, { key: 'extra', pricingType: 'free' }] }] }, 'plans.extra'],
      [
        { products: [{ ...product, pricingTables: [...(product.pricingTables as object[]), { key: 'another', plans: ['free'] }] }] },
        'pricingTables.notes.another',
      ],
    ];
    for (const [changed, property] of refused) {
      const res = await api.post('/api/products/import', changed).expect(400);
      expect(res.body.detail).toMatch(/product notes is archived/);
      names(res.body, property);
    }
    const after = (await api.get(`/api/products/${productId}`).expect(200)).body.data;
    expect(after).toMatchObject({ name: product.name, isActive: false });
    expect((await api.get(`/api/plans/${org.keys['plans.notes.team']}`).expect(200)).body.data.name).not.toBe('Team renamed');
    expect(
      (await api.get(`/api/plans?productId=${productId}&limit=100`).expect(200)).body.data.map((p: { name: string }) => p.name),
    ).not.toContain('extra');

    // Un-archived through the API, the same change is taken.
    await api.put(`/api/products/${productId}`, { isActive: true }).expect(200);
    await api.post('/api/products/import', { products: [{ ...product, name: 'Renamed' }] }).expect(201);
  });

  it('takes its own export back unchanged for an archived product made through the API (it stays keyless)', async () => {
    const org = await seedOrganisation(world, 'left-archived-api-product');
    const api = catalogApi(app, org.liveKey);
    const product = (await api.post('/api/products', { name: 'Made by the API' }).expect(201)).body.data;
    await api.post('/api/plans', { name: 'Its plan', productId: product.id }).expect(201);
    const file = YAML.parse((await api.get(`/api/products/export/${product.id}`).expect(200)).text) as FileShape;
    expect(file.products[0].key).toBe(product.id);
    await api.post(`/api/products/${product.id}/archive`).expect(204);

    const again = await api.post('/api/products/import', file).expect(201);
    expect(again.body.data).toMatchObject({ created: 0, updated: 0 });
    expect((await api.get(`/api/products/${product.id}`).expect(200)).body.data).toMatchObject({
      name: 'Made by the API',
      isActive: false,
    });
    // A change is still refused, naming the product by the key the export gave it.
    const renamed = await api.post('/api/products/import', { products: [{ ...file.products[0], name: 'Renamed' }] }).expect(400);
    names(renamed.body, `products.${product.id}`);
  });
});

describe('currencies of the catalog file', () => {
  it('takes a new currency only from the published list (400 naming the path), a product’s or plan’s own code on re-import', async () => {
    const org = await seedOrganisation(world, 'left-currencies');
    const api = catalogApi(app, org.liveKey);
    await storeJod(org.keys['products.notes'], org.keys['plans.notes.team']);
    const file = await exported(org);
    expect(file.products[0].currencies).toContain('JOD');
    expect(file.products[0].plans.find((p) => p.key === 'team')?.prices).toHaveProperty('JOD');

    // The product's and the plan's own JOD stay accepted (a re-import of what export wrote; the
    // first gives the plan's line item its JOD price, the second changes nothing).
    await api.post('/api/products/import', file).expect(201);
    expect((await api.post('/api/products/import', file).expect(201)).body.data).toMatchObject({ created: 0, updated: 0 });
    await api
      .post(
        '/api/products/import',
        withPlan(file, 'team', (p) => ({ ...p, prices: { ...p.prices, JOD: 12 } })),
      )
      .expect(201);

    // A new code outside the list (XDR: a code nobody is charged in) on the product is refused.
    const product = file.products[0];
    const xdr = await api.post('/api/products/import', { products: [{ ...product, currencies: [...(product.currencies ?? []), 'XDR'] }] });
    expect(xdr.status).toBe(400);
    names(xdr.body, 'products.notes.currencies');
    // JOD is the product's, but new to another plan: refused as plans/save refuses it.
    const business = await api.post(
      '/api/products/import',
      withPlan(file, 'business', (p) => ({ ...p, prices: { ...p.prices, JOD: 30 } })),
    );
    expect(business.status).toBe(400);
    names(business.body, 'plans.business.prices.JOD');
    // A list code new to the product stays accepted.
    await api.post('/api/products/import', { products: [{ ...product, currencies: [...(product.currencies ?? []), 'CHF'] }] }).expect(201);
    expect((await api.get(`/api/plans/${org.keys['plans.notes.business']}`).expect(200)).body.data.name).toBe('Business');
  });

  it('a new organisation’s file with a currency outside the list is refused and imports nothing', async () => {
    const org = await seedOrganisation(world, 'left-currencies-new');
    const api = catalogApi(app, org.liveKey);
    const res = await api
      .post('/api/products/import', {
        products: [{ key: 'fresh', name: 'Fresh', currencies: ['XSU'], plans: [{ key: 'p', pricingType: 'paid', prices: { XSU: 1 } }] }],
      })
      .expect(400);
    names(res.body, 'products.fresh.currencies');
    expect((await api.get('/api/products?limit=100').expect(200)).body.data.map((p: { name: string }) => p.name)).not.toContain('Fresh');
  });
});

describe('a cart re-saved with its own currency', () => {
  it('keeps a stored code the list lacks; a new one outside the list, or in mixed case, is 400 naming currency', async () => {
    const org = await seedOrganisation(world, 'left-carts');
    const api = catalogApi(app, org.liveKey);
    const cart = (
      await api.post('/api/carts', { owner: 'o@example.com', interval: 'month', intervalCount: 1, currency: 'USD' }).expect(201)
    ).body.data;
    await world.db.uow.run(async (r) => {
      await r.carts.save({ ...(await r.carts.get(cart.id))!, currency: 'JOD' });
    });
    const put = (currency: string | null) => api.put(`/api/carts/${cart.id}`, { currency, owner: 'o@example.com', cartItems: [] });
    await put('JOD').expect(204);
    await put('jod').expect(204);
    expect((await api.get(`/api/carts/${cart.id}`).expect(200)).body.data.currency).toBe('JOD');
    for (const code of ['TND', 'XDR', 'Jod']) names((await put(code).expect(400)).body, 'currency');
    await put('EUR').expect(204);
    // Once it changed, the old code is new again.
    names((await put('JOD').expect(400)).body, 'currency');
    await put(null).expect(204);
  });
});

describe('copy to live mode onto an archived live copy, and with a code outside the list', () => {
  it('names the live copy (id) and a fix a live-mode key makes when the live copy is archived', async () => {
    const org = await seedOrganisation(world, 'left-copy-archived');
    const testApi = catalogApi(app, org.testKey);
    const liveApi = catalogApi(app, org.liveKey);
    const created = (await testApi.post('/api/products', { name: 'Copied' }).expect(201)).body.data;
    const copy = (await testApi.post('/api/products/copy-to-live-mode', { id: created.id }).expect(201)).body;
    await liveApi.post(`/api/products/${copy.id}/archive`).expect(204);
    await testApi.put(`/api/products/${created.id}`, { name: 'Copied v2' }).expect(200);

    const res = await testApi.post('/api/products/copy-to-live-mode', { id: created.id }).expect(400);
    expect(res.body.detail).toContain(copy.id);
    expect(res.body.detail).not.toContain(created.id);
    expect(res.body.detail).toMatch(/un-archive it with a live-mode key/);
    expect(res.body.errors).toEqual([expect.objectContaining({ property: 'id' })]);
    expect((await liveApi.get(`/api/products/${copy.id}`).expect(200)).body.data).toMatchObject({ name: 'Copied', isActive: false });

    // The fix it gives works: un-archived with the live key, the copy is taken.
    await liveApi.put(`/api/products/${copy.id}`, { isActive: true }).expect(200);
    expect((await testApi.post('/api/products/copy-to-live-mode', { id: created.id }).expect(201)).body.id).toBe(copy.id);
    expect((await liveApi.get(`/api/products/${copy.id}`).expect(200)).body.data.name).toBe('Copied v2');
  });

  it('names the live copy’s archived plan (id) and the delete a live-mode key can make', async () => {
    const org = await seedOrganisation(world, 'left-copy-archived-plan');
    const testApi = catalogApi(app, org.testKey);
    const liveApi = catalogApi(app, org.liveKey);
    const created = (await testApi.post('/api/products', { name: 'Copied' }).expect(201)).body.data;
    const testPlan = (await testApi.post('/api/plans', { name: 'Copied plan', productId: created.id }).expect(201)).body.data;
    const copy = (await testApi.post('/api/products/copy-to-live-mode', { id: created.id }).expect(201)).body;
    const livePlan = (await liveApi.get(`/api/products/${copy.id}?expand=plans`).expect(200)).body.data.plans.data[0];
    await liveApi.post(`/api/plans/${livePlan.id}/archive`).expect(204);
    await testApi.put(`/api/plans/${testPlan.id}`, { trialPeriodDays: 14 }).expect(200);

    const res = await testApi.post('/api/products/copy-to-live-mode', { id: created.id }).expect(400);
    expect(res.body.detail).toContain(livePlan.id);
    expect(res.body.detail).toContain(copy.id);
    expect(res.body.detail).not.toContain(testPlan.id);
    expect(res.body.detail).toMatch(/live-mode key/);
    expect(res.body.errors).toEqual([expect.objectContaining({ property: 'id' })]);

    // The fix it gives works: the archived live plan deleted, the copy makes it anew.
    await liveApi.del(`/api/plans/${livePlan.id}`).expect(204);
    await testApi.post('/api/products/copy-to-live-mode', { id: created.id }).expect(201);
    const plans = (await liveApi.get(`/api/products/${copy.id}?expand=plans`).expect(200)).body.data.plans.data;
    expect(plans.map((p: { trialPeriodDays: number }) => p.trialPeriodDays)).toEqual([14]);
  });

  it('carries the test product’s own codes to a new live copy though the list lacks one (JOD); a new one stays refused', async () => {
    const org = await seedOrganisation(world, 'left-copy-jod');
    const testApi = catalogApi(app, org.testKey);
    const liveApi = catalogApi(app, org.liveKey);
    const imported = await testApi
      .post('/api/products/import', {
        products: [
          { key: 'jodded', name: 'Jodded', currencies: ['USD'], plans: [{ key: 'pro', pricingType: 'paid', prices: { USD: 10 } }] },
        ],
      })
      .expect(201);
    const { 'products.jodded': productId, 'plans.jodded.pro': planId } = imported.body.data.keys;
    await storeJod(productId, planId);

    const copy = (await testApi.post('/api/products/copy-to-live-mode', { id: productId }).expect(201)).body;
    const file = YAML.parse((await liveApi.get(`/api/products/export/${copy.id}`).expect(200)).text) as FileShape;
    expect(file.products[0].currencies).toEqual(['USD', 'JOD']);
    expect(file.products[0].plans[0].prices).toEqual({ USD: 10, JOD: 9 });
    // Copied again (unchanged), and the live product's own code on a live re-import, stay taken.
    await testApi.post('/api/products/copy-to-live-mode', { id: productId }).expect(201);
    await liveApi.post('/api/products/import', file).expect(201);
    // The exemption is the copy's: a live import adding another code outside the list is refused.
    const xdr = await liveApi.post('/api/products/import', { products: [{ ...file.products[0], currencies: ['USD', 'JOD', 'XDR'] }] });
    expect(xdr.status).toBe(400);
    names(xdr.body, `products.${file.products[0].key}.currencies`);
  });
});
