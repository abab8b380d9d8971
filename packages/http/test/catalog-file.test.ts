import fs from 'node:fs';
import type { CatalogFile, PlanEntry, ProductEntry } from '@tollgate/core';
import { demoCatalog } from '@tollgate/core';
import { sampleCatalog } from '@tollgate/core/testing';
import { assertCatalogFile, CATALOG_FILE_SCHEMA_PATH, catalogFileProblems } from '../src';

// The catalog file's shape is one JSON Schema (assets/catalog-file.schema.json), checked with ajv by
// `tollgate import` and `POST /api/products/import` alike: each problem names its path.

/** The sample file with its plan `team` (products[0].plans[1]) changed by `over`. */
function withPlan(over: Record<string, unknown>): CatalogFile {
  const file = sampleCatalog('acme');
  const [product] = file.products ?? [];
  product.plans = (product.plans ?? []).map((p) => (p.key === 'team' ? ({ ...p, ...over } as PlanEntry) : p));
  return file;
}
/** The sample file with its product changed by `over`. */
function withProduct(over: Record<string, unknown>): CatalogFile {
  const file = sampleCatalog('acme');
  const [product] = file.products ?? [];
  return { ...file, products: [{ ...product, ...over } as ProductEntry] };
}
const details = (file: unknown) => catalogFileProblems(file).map(({ property, error }) => ({ property, error }));
const plan = 'products[0].plans[1]';
const usage = (u: Record<string, unknown>) => withPlan({ usage: [{ meter: 'api_calls', ...u }] });

describe('the catalog-file schema', () => {
  it('is the file published with @tollgate/http', () => {
    expect(JSON.parse(fs.readFileSync(CATALOG_FILE_SCHEMA_PATH, 'utf8')).$id).toBe('https://tollgate.dev/schemas/catalog-file.json');
  });

  it('accepts the sample and demo catalogs', () => {
    for (const file of [sampleCatalog('acme'), sampleCatalog('acme', true), demoCatalog('demo'), demoCatalog('demo', true)])
      expect(details(file)).toEqual([]);
    expect(details(withPlan({ trialDays: null, length: 1095, evalDays: 730, perSeatAmount: 50000 }))).toEqual([]);
  });

  it.each([
    [{ length: 0 }, `${plan}.length`, 'must be a whole number from 1 to 1095, got 0'],
    [{ length: 1096 }, `${plan}.length`, 'must be a whole number from 1 to 1095, got 1096'],
    [{ length: 1.5 }, `${plan}.length`, 'must be a whole number from 1 to 1095, got 1.5'],
    [{ visibility: 'secret' }, `${plan}.visibility`, 'must be one of public, private, got "secret"'],
    [{ perSeatAmount: 0 }, `${plan}.perSeatAmount`, 'must be a whole number of at least 1, got 0'],
    [{ evalDays: -1 }, `${plan}.evalDays`, 'must be a whole number from 0 to 730, got -1'],
    [{ evalDays: 731 }, `${plan}.evalDays`, 'must be a whole number from 0 to 730, got 731'],
    [{ trialDays: 'soon' }, `${plan}.trialDays`, 'must be a whole number from 0 to 730 or null, got "soon"'],
    [{ trialDays: 731 }, `${plan}.trialDays`, 'must be a whole number from 0 to 730 or null, got 731'],
    [{ prices: { USD: -1 } }, `${plan}.prices.USD`, 'must be a number of at least 0, got -1'],
    [{ prices: { usd: 1 } }, `${plan}.prices.usd`, 'usd is not allowed here'],
    [{ licenseType: 'seat' }, `${plan}.licenseType`, 'must be one of user, perSeat, board, customId, got "seat"'],
    [{ interval: 'fortnight' }, `${plan}.interval`, 'must be one of day, week, month, year, got "fortnight"'],
    [{ pricingType: 'cheap' }, `${plan}.pricingType`, 'must be one of free, paid, got "cheap"'],
    [{ active: 'yes' }, `${plan}.active`, 'must be boolean, got "yes"'],
    [{ capabilities: ['edit', 'edit'] }, `${plan}.capabilities`, 'names "edit" twice (items 0 and 1)'],
    [{ features: { projects: [1] } }, `${plan}.features.projects`, 'must be string or number or boolean, got [1]'],
    [{ key: 'a b' }, `${plan}.key`, expect.stringContaining('"a b"')],
    [{ capabilites: ['edit'] }, `${plan}.capabilites`, expect.stringContaining('unknown key capabilites (did you mean capabilities?)')],
  ])('a plan with %j is refused at %s', (over, property, error) => {
    expect(details(withPlan(over))).toEqual([{ property, error }]);
  });

  it.each([
    [{ unitPrices: {} }, `${plan}.usage[0].unitPrices`, 'needs at least 1 entry'],
    [{ allowance: 10 }, `${plan}.usage[0]`, 'Priced by exactly one of unitPrices and tiers.'],
    [
      { unitPrices: { USD: 1 }, tiers: { USD: [{ upTo: 'inf', unitAmount: 1 }] } },
      `${plan}.usage[0]`,
      'Priced by exactly one of unitPrices and tiers.',
    ],
    [{ tiers: { USD: [] } }, `${plan}.usage[0].tiers.USD`, 'needs at least 1 item(s)'],
    [{ tiers: { USD: [{ upTo: 0, unitAmount: 1 }] } }, `${plan}.usage[0].tiers.USD[0].upTo`, 'must be a number above 0 or inf, got 0'],
    [
      { tiers: { USD: [{ upTo: 'inf', unitAmount: -1 }] } },
      `${plan}.usage[0].tiers.USD[0].unitAmount`,
      'must be a number of at least 0, got -1',
    ],
    [{ unitPrices: { USD: 1 }, scale: 7 }, `${plan}.usage[0].scale`, 'must be a whole number from 0 to 6, got 7'],
    [
      { unitPrices: { USD: 1 }, allowance: 1e13 },
      `${plan}.usage[0].allowance`,
      'must be a number of at least 0 and at most 1000000000000, got 10000000000000',
    ],
    [{ unitPrices: { USD: 1 }, rollover: 'some' }, `${plan}.usage[0].rollover`, 'must be none, all or {upTo}, got "some"'],
    [{ unitPrices: { USD: 1 }, tiersMode: 'flat' }, `${plan}.usage[0].tiersMode`, 'must be one of graduated, volume, got "flat"'],
  ])('a usage entry with %j is refused at %s', (u, property, error) => {
    expect(details(usage(u))).toEqual([{ property, error }]);
  });

  it('refuses a meter slug that is not ^[a-z0-9_]+$ or longer than 64', () => {
    expect(details(withPlan({ usage: [{ meter: 'API', unitPrices: { USD: 1 } }] }))).toMatchObject([
      { property: `${plan}.usage[0].meter` },
    ]);
    expect(details(withPlan({ usage: [{ meter: 'a'.repeat(65), unitPrices: { USD: 1 } }] }))).toEqual([
      { property: `${plan}.usage[0].meter`, error: 'must be at most 64 characters' },
    ]);
  });

  it('refuses an infinite amount (YAML .inf, JSON 1e400), not only a negative one', () => {
    expect(details(withPlan({ prices: { USD: Infinity } }))).toMatchObject([{ property: `${plan}.prices.USD` }]);
    expect(details(usage({ unitPrices: { USD: Infinity } }))).toMatchObject([{ property: `${plan}.usage[0].unitPrices.USD` }]);
  });

  it('refuses products, features and pricing tables of the wrong shape', () => {
    expect(details({ organisation: 'acme', products: {} })).toEqual([{ property: 'products', error: 'must be array, got {}' }]);
    expect(details({ organisation: '' })).toEqual([{ property: 'organisation', error: 'must not be empty' }]);
    expect(details({})).toEqual([{ property: '(the file)', error: 'organisation is required' }]);
    expect(details({ organisation: 'acme', products: [{ key: 'p', name: 'P', plans: {} }] })).toEqual([
      { property: 'products[0].plans', error: 'must be array, got {}' },
    ]);
    expect(details(withProduct({ name: '' }))).toEqual([{ property: 'products[0].name', error: 'must not be empty' }]);
    expect(details(withProduct({ currencies: ['usd'] }))).toMatchObject([{ property: 'products[0].currencies[0]' }]);
    expect(details(withProduct({ currencies: ['USD', 'USD'] }))).toMatchObject([{ property: 'products[0].currencies' }]);
    expect(details(withProduct({ features: [{ key: 'f', valueType: 'text' }] }))).toMatchObject([
      { property: 'products[0].features[0].valueType' },
    ]);
    expect(details(withProduct({ features: [{ key: 'f', valueType: 'boolean', visibility: 'hidden' }] }))).toMatchObject([
      { property: 'products[0].features[0].visibility' },
    ]);
    expect(details(withProduct({ pricingTables: [{ key: 't', plans: ['a', 'a'] }] }))).toMatchObject([
      { property: 'products[0].pricingTables[0].plans' },
    ]);
    expect(details(withProduct({ pricingTables: [{ key: 't', colour: 'red' }] }))).toMatchObject([
      { property: 'products[0].pricingTables[0].colour' },
    ]);
  });

  it('assertCatalogFile is a 400 naming every path; over HTTP the file may leave the organisation to the key', () => {
    let thrown: unknown;
    try {
      assertCatalogFile(withPlan({ length: 0, visibility: 'secret' }));
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toMatchObject({
      code: 'VALIDATION_FAILED',
      details: [
        { property: `${plan}.length`, error: 'must be a whole number from 1 to 1095, got 0' },
        { property: `${plan}.visibility`, error: 'must be one of public, private, got "secret"' },
      ],
    });
    const keyless: Partial<CatalogFile> = { ...sampleCatalog('acme') };
    delete keyless.organisation;
    expect(() => assertCatalogFile(keyless)).toThrow('organisation is required');
    expect(() => assertCatalogFile(keyless, { organisationOptional: true })).not.toThrow();
  });
});
