import type { CatalogFile, PlanEntry } from '../src';
import { createTestCore, rejectionOf, sampleCatalog } from '../src/testing';

// Core checks a catalog file's shape (what the CLI's JSON Schema says, with the bounds plans/save
// applies) before it opens the import's transaction, so `tollgate import` and
// `POST /api/products/import` refuse the same files, each problem a 400 naming its path.

async function setup() {
  const core = createTestCore();
  const org = await core.apiKeys.ensureOrganisation('acme');
  const listed = () => core.queries.listProducts({ organisationId: org.id, isTest: false });
  return { core, listed };
}

/** The sample file with its plan `key` changed by `over`. */
function withPlan(key: string, over: Record<string, unknown>): CatalogFile {
  const file = sampleCatalog('acme');
  const [product] = file.products ?? [];
  product.plans = (product.plans ?? []).map((p) => (p.key === key ? ({ ...p, ...over } as PlanEntry) : p));
  return file;
}

const refusal = async (core: ReturnType<typeof createTestCore>, file: unknown) => {
  const e = await rejectionOf(core.importer.apply(file as CatalogFile));
  expect(e.code).toBe('VALIDATION_FAILED');
  return (e.details as { property: string; error: string }[])[0];
};

describe('a catalog file of the wrong shape', () => {
  it.each([
    [{ length: 0 }, 'products[0].plans[1].length', 'must be a whole number from 1 to 1095, got 0'],
    [{ length: 1.5 }, 'products[0].plans[1].length', 'must be a whole number from 1 to 1095, got 1.5'],
    [{ visibility: 'secret' }, 'products[0].plans[1].visibility', 'must be one of public, private, got "secret"'],
    [{ perSeatAmount: 20000 }, 'products[0].plans[1].perSeatAmount', 'must be a whole number from 1 to 10000, got 20000'],
    [{ evalDays: -1 }, 'products[0].plans[1].evalDays', 'must be a whole number from 0 to 730, got -1'],
    [{ trialDays: 'soon' }, 'products[0].plans[1].trialDays', 'must be a whole number from 0 to 730 or null, got "soon"'],
    [{ prices: { USD: -1 } }, 'products[0].plans[1].prices.USD', 'must be a number of at least 0, got -1'],
    [{ capabilites: ['edit'] }, 'products[0].plans[1].capabilites', expect.stringContaining('unknown key capabilites')],
  ])('%j is a 400 naming %s, and nothing is written', async (over, property, error) => {
    const { core, listed } = await setup();
    expect(await refusal(core, withPlan('team', over))).toEqual({ property, error });
    expect(await listed()).toEqual([]);
  });

  it('products that are not a list are a 400 (was a TypeError, a 500)', async () => {
    const { core } = await setup();
    expect(await refusal(core, { organisation: 'acme', products: {} })).toEqual({ property: 'products', error: 'must be a list, got {}' });
    expect(await refusal(core, { organisation: 'acme', products: [{ key: 'p', name: 'P', plans: {} }] })).toMatchObject({
      property: 'products[0].plans',
    });
  });

  it('takes the seats the deployment allows (MAX_SEATS)', async () => {
    const core = createTestCore({ limits: { maxSeats: 50 } as never });
    await core.apiKeys.ensureOrganisation('acme');
    expect(await refusal(core, withPlan('team', { perSeatAmount: 51 }))).toMatchObject({ property: 'products[0].plans[1].perSeatAmount' });
  });
});

describe('keys named twice in one file', () => {
  it('are refused naming the key and both places, every time', async () => {
    const { core, listed } = await setup();
    const file = sampleCatalog('acme');
    const [product] = file.products ?? [];
    const plans = product.plans ?? [];
    const twicePlan = { ...file, products: [{ ...product, plans: [...plans, { ...plans[1], displayName: 'Other' }] }] };
    expect(await refusal(core, twicePlan)).toEqual({
      property: `products[0].plans[${plans.length}].key`,
      error: `plan key team is named twice (products[0].plans[1] and products[0].plans[${plans.length}])`,
    });
    const features = product.features ?? [];
    const twiceFeature = { ...file, products: [{ ...product, features: [...features, features[0]] }] };
    for (let i = 0; i < 2; i++)
      expect(await refusal(core, twiceFeature)).toEqual({
        property: `products[0].features[${features.length}].key`,
        error: `feature key projects is named twice (products[0].features[0] and products[0].features[${features.length}])`,
      });
    const twiceProduct = { ...file, products: [product, { ...product, name: 'other' }] };
    expect(await refusal(core, twiceProduct)).toEqual({
      property: 'products[1].key',
      error: 'product key notes is named twice (products[0] and products[1])',
    });
    expect(await listed()).toEqual([]);
  });

  it('a feature key twice is refused on a second import too (was a raw PostgreSQL error there)', async () => {
    const { core } = await setup();
    const file = sampleCatalog('acme');
    await core.importer.apply(file);
    const [product] = file.products ?? [];
    const features = product.features ?? [];
    expect(await refusal(core, { ...file, products: [{ ...product, features: [...features, features[1]] }] })).toMatchObject({
      property: `products[0].features[${features.length}].key`,
    });
  });
});

describe('a usage entry', () => {
  it('with neither unitPrices nor tiers is refused naming unitPrices; with both, naming tiers', async () => {
    const { core } = await setup();
    expect(await refusal(core, withPlan('team', { usage: [{ meter: 'api_calls', allowance: 10 }] }))).toEqual({
      property: 'products[0].plans[1].usage[0].unitPrices',
      error: 'a usage entry is priced by unitPrices or tiers (by currency): give one',
    });
    const both = { meter: 'api_calls', unitPrices: { USD: 0.01 }, tiers: { USD: [{ upTo: 'inf', unitAmount: 0.01 }] } };
    expect(await refusal(core, withPlan('team', { usage: [both] }))).toMatchObject({ property: 'products[0].plans[1].usage[0].tiers' });
    expect(await refusal(core, withPlan('team', { usage: [{ meter: 'api_calls', unitPrices: {} }] }))).toMatchObject({
      property: 'products[0].plans[1].usage[0].unitPrices',
    });
  });
});
