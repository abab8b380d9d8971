import type { CatalogFile, PlanEntry } from '../src';
import { createTestCore, rejectionOf, sampleCatalog } from '../src/testing';

// The file's shape is the catalog-file JSON Schema's, checked with ajv by both entry points
// (packages/http/test/catalog-file.test.ts). Core checks, before it opens the import's transaction,
// what a schema cannot say: the deployment's MAX_SEATS and keys named twice, each a 400 naming its path.

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

describe("a plan's perSeatAmount", () => {
  it('is at most the MAX_SEATS of the deployment: a 400 naming the path, and nothing is written', async () => {
    const { core, listed } = await setup();
    expect(await refusal(core, withPlan('team', { perSeatAmount: 20000 }))).toEqual({
      property: 'products[0].plans[1].perSeatAmount',
      error: 'must be a whole number from 1 to 10000, got 20000',
    });
    expect(await listed()).toEqual([]);
    const small = createTestCore({ limits: { maxSeats: 50 } as never });
    await small.apiKeys.ensureOrganisation('acme');
    expect(await refusal(small, withPlan('team', { perSeatAmount: 51 }))).toEqual({
      property: 'products[0].plans[1].perSeatAmount',
      error: 'must be a whole number from 1 to 50, got 51',
    });
    await small.importer.apply(withPlan('team', { perSeatAmount: 50 }));
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

describe('an amount in a catalog file', () => {
  it('is finite: an infinite price is refused by core too (embedders calling the importer without the schema), nothing written', async () => {
    const { core, listed } = await setup();
    expect(await refusal(core, withPlan('team', { prices: { USD: Infinity } }))).toMatchObject({ property: 'plans.team.prices.USD' });
    expect(await listed()).toEqual([]);
  });
});
