import type { CatalogFile } from '@tollgate/core';
import { sampleCatalog } from '@tollgate/core/testing';
import { assertCatalogFile, CATALOG_FILE_MAX_PROBLEMS, CATALOG_FILE_REPORT_VALUES, catalogFileProblems } from '../src';

// A catalog file's check is bounded whatever the file: at most CATALOG_FILE_MAX_PROBLEMS problems
// (then one entry saying more were left out), every free-text string and list of the schema has a
// largest size, and a value or key repeated in a message is cut short.

const details = (file: unknown, optional = false) =>
  catalogFileProblems(file, { organisationOptional: optional }).map(({ property, error }) => ({ property, error }));
const LEFT_OUT = { property: '(the file)', error: `more problems left out: the first ${CATALOG_FILE_MAX_PROBLEMS} are listed` };
const LARGE = {
  property: '(the file)',
  error: `the file is large: only its first ${CATALOG_FILE_REPORT_VALUES} values were checked for every problem; fix these and check it again`,
};

/** The sample file with its first product changed by `over`. */
function withProduct(over: Record<string, unknown>): CatalogFile {
  const file = sampleCatalog('acme');
  const [product] = file.products ?? [];
  return { ...file, products: [{ ...product, ...over } as NonNullable<CatalogFile['products']>[number]] };
}
/** `count` plans `{key, pricingType}` (3 values each), keys `p0`… */
const plans = (count: number, from = 0) => Array.from({ length: count }, (_, i) => ({ pricingType: 'free', key: `p${from + i}` }));

describe('the catalog-file check, bounded', () => {
  it('lists at most 100 problems of a file of empty products, then says more were left out', () => {
    const problems = details({ products: Array.from({ length: 1500 }, () => ({})) }, true);
    expect(problems).toHaveLength(CATALOG_FILE_MAX_PROBLEMS + 1);
    expect(problems.slice(0, 4)).toEqual([
      { property: 'products', error: 'may hold at most 1000 items, got 1500' },
      { property: 'products[0]', error: 'key is required' },
      { property: 'products[0]', error: 'name is required' },
      { property: 'products[1]', error: 'key is required' },
    ]);
    expect(problems[CATALOG_FILE_MAX_PROBLEMS]).toEqual(LEFT_OUT);
  });

  it('is a 400 naming the first problems (and no more than 100 of them)', () => {
    let thrown: { code?: string; message?: string; details?: unknown[] } = {};
    try {
      assertCatalogFile({ products: Array.from({ length: 40_000 }, () => ({})) }, { organisationOptional: true });
    } catch (e) {
      thrown = e as typeof thrown;
    }
    expect(thrown.code).toBe('VALIDATION_FAILED');
    expect(thrown.message).toMatch(/^products: may hold at most 1000 items, got 40000; products\[0\]: key is required; /);
    expect(thrown.details).toHaveLength(CATALOG_FILE_MAX_PROBLEMS + 1);
    expect(thrown.details?.[CATALOG_FILE_MAX_PROBLEMS]).toEqual(LEFT_OUT);
  });

  it('a file without problems passes whatever its size within the limits, and a large bad one names its problem past the report', () => {
    // 25 products of 900 plans: about 67 000 values, past what the report reads in full.
    const products = Array.from({ length: 25 }, (_, i) => ({ key: `k${i}`, name: `P${i}`, plans: plans(900) }));
    expect(details({ organisation: 'acme', products })).toEqual([]);
    products[24].plans[899] = { ...products[24].plans[899], pricingType: 'cheap' };
    expect(details({ organisation: 'acme', products })).toEqual([
      { property: 'products[24].plans[899].pricingType', error: 'must be one of free, paid, got "cheap"' },
      LARGE,
    ]);
  });

  it('a large bad file is reported without problems it does not have (members the schema names are read to the end)', () => {
    // About 23 000 values before the product's pricing tables; the table's key comes after a member
    // the schema does not know: a report that dropped members past its values would call it missing.
    const caps = Array.from({ length: 1000 }, (_, i) => `c${i}`);
    const product = {
      key: 'k',
      name: 'P',
      capabilities: caps,
      features: Array.from({ length: 1000 }, (_, i) => ({ key: `f${i}`, valueType: 'boolean' })),
      plans: plans(1000).map((p) => ({ ...p, capabilities: caps.slice(0, 15) })),
      pricingTables: [{ colour: 'red', key: 't' }],
    };
    product.plans[0].pricingType = 'cheap';
    expect(details({ organisation: 'acme', products: [product] })).toEqual([
      { property: 'products[0].plans[0].pricingType', error: 'must be one of free, paid, got "cheap"' },
      { property: 'products[0].pricingTables[0].colour', error: expect.stringContaining('unknown key colour') },
      LARGE,
    ]);
  });

  it.each([
    ['capabilities', { capabilities: ['a'.repeat(101)] }, 'products[0].capabilities[0]', 'must be at most 100 characters'],
    ['name', { name: 'n'.repeat(201) }, 'products[0].name', 'must be at most 200 characters'],
    ['displayName', { displayName: 'n'.repeat(201) }, 'products[0].displayName', 'must be at most 200 characters'],
    ['description', { description: 'd'.repeat(2001) }, 'products[0].description', 'must be at most 2000 characters'],
    ['key', { key: 'k'.repeat(101) }, 'products[0].key', 'must be at most 100 characters'],
    [
      'features',
      { features: [{ key: 'f', valueType: 'enum', enumOptions: ['o'.repeat(256)] }] },
      'products[0].features[0].enumOptions[0]',
      'must be at most 255 characters',
    ],
    ['plans', { plans: plans(1001) }, 'products[0].plans', 'may hold at most 1000 items, got 1001'],
    [
      'pricingTables',
      { pricingTables: Array.from({ length: 101 }, (_, i) => ({ key: `t${i}` })) },
      'products[0].pricingTables',
      'may hold at most 100 items, got 101',
    ],
    [
      'capabilities',
      { capabilities: Array.from({ length: 1001 }, (_, i) => `c${i}`) },
      'products[0].capabilities',
      'may hold at most 1000 items, got 1001',
    ],
    [
      'plans',
      { plans: [{ key: 'p', pricingType: 'free', capabilities: Array.from({ length: 201 }, (_, i) => `c${i}`) }] },
      'products[0].plans[0].capabilities',
      'may hold at most 200 items, got 201',
    ],
  ])('refuses a product whose %s is too long or holds too many: %#', (_, over, property, error) => {
    expect(details(withProduct(over))).toEqual([{ property, error }]);
  });

  it('takes the longest strings and lists', () => {
    expect(
      details(
        withProduct({
          capabilities: Array.from({ length: 1000 }, (_, i) => `${'c'.repeat(96)}${i}`.padEnd(100, 'x')),
          name: 'n'.repeat(200),
          description: 'd'.repeat(2000),
          key: 'k'.repeat(100),
        }),
      ),
    ).toEqual([]);
  });

  it('refuses tiers, usage entries and plan strings past their limits', () => {
    const tiers = Array.from({ length: 101 }, (_, i) => ({ upTo: i + 1, unitAmount: 1 }));
    const plan = {
      key: 'api',
      pricingType: 'paid',
      displayName: 'x'.repeat(201),
      usage: [{ meter: 'calls', name: 'm'.repeat(201), unitLabel: 'u'.repeat(51), tiers: { USD: tiers } }],
    };
    expect(details(withProduct({ plans: [plan] }))).toEqual([
      { property: 'products[0].plans[0].displayName', error: 'must be at most 200 characters' },
      { property: 'products[0].plans[0].usage[0].name', error: 'must be at most 200 characters' },
      { property: 'products[0].plans[0].usage[0].unitLabel', error: 'must be at most 50 characters' },
      { property: 'products[0].plans[0].usage[0].tiers.USD', error: 'may hold at most 100 items, got 101' },
    ]);
    const usage = Array.from({ length: 51 }, (_, i) => ({ meter: `m${i}`, unitPrices: { USD: 1 } }));
    expect(details(withProduct({ plans: [{ key: 'api', pricingType: 'paid', usage }] }))).toEqual([
      { property: 'products[0].plans[0].usage', error: 'may hold at most 50 items, got 51' },
    ]);
  });

  it('repeats at most 100 characters of a long value or key in its message', () => {
    const long = 'a b'.repeat(100_000);
    const problems = details(withProduct({ key: long, [long]: 1 }));
    expect(problems).toEqual([
      { property: `products[0].${'a b'.repeat(33)}a…`, error: expect.stringMatching(/^unknown key (a b){33}a…; allowed: key, name/) },
      { property: 'products[0].key', error: 'must be at most 100 characters' },
      {
        property: 'products[0].key',
        error: `"${'a b'.repeat(33)}…: A file-local reference, stable across imports: letters, digits, _, . or -.`,
      },
    ]);
    expect(JSON.stringify(problems).length).toBeLessThan(1000);
  });

  it('answers as before for a branch of an anyOf that is a definition (units)', () => {
    const usage = (u: Record<string, unknown>) =>
      withProduct({ plans: [{ key: 'api', pricingType: 'paid', usage: [{ meter: 'calls', unitPrices: { USD: 1 }, ...u }] }] });
    expect(details(usage({ maxUsage: -1 }))).toEqual([
      { property: 'products[0].plans[0].usage[0].maxUsage', error: 'must be a number of at least 0 and at most 1000000000000, got -1' },
      { property: 'products[0].plans[0].usage[0].maxUsage', error: 'must be units or null, got -1' },
    ]);
    expect(details(usage({ rollover: { upTo: -1 } }))).toEqual([
      {
        property: 'products[0].plans[0].usage[0].rollover.upTo',
        error: 'must be a number of at least 0 and at most 1000000000000, got -1',
      },
      { property: 'products[0].plans[0].usage[0].rollover', error: 'must be none, all or {upTo}, got {"upTo":-1}' },
    ]);
  });
});
