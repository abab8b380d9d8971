import fs from 'node:fs';
import path from 'node:path';
import { demoCatalog } from '@tollgate/core';
import { sampleCatalog } from '@tollgate/core/testing';
import { createTestWorld, type TestWorld } from '@tollgate/runtime/testing';
import YAML from 'yaml';
import { CATALOG_FILE_SCHEMA_PATH, checkCatalogFile } from '../src/catalog-check';

const DOC = path.join(__dirname, '..', '..', '..', 'docs', 'catalog-file.md');

let world: TestWorld;
beforeAll(async () => {
  world = await createTestWorld();
});
afterAll(() => world?.close());

describe('the catalog-file schema', () => {
  it("accepts docs/catalog-file.md's example, which imports as documented", async () => {
    const example = /## Example\n\n```yaml\n([\s\S]*?)```/.exec(fs.readFileSync(DOC, 'utf8'))?.[1] as string;
    expect(checkCatalogFile('example.yaml', example).problems).toEqual([]);
    await world.core.apiKeys.ensureOrganisation('acme');
    const result = await world.core.importer.apply(YAML.parse(example));
    expect(Object.keys(result.keys).sort()).toEqual(['plans.notes.free', 'plans.notes.team', 'pricingTables.notes.main', 'products.notes']);
  });

  it("accepts docs/quickstart.md's catalog", () => {
    const quickstart = fs.readFileSync(path.join(__dirname, '..', '..', '..', 'docs', 'quickstart.md'), 'utf8');
    const file = /```yaml\n(organisation: acme[\s\S]*?)```/.exec(quickstart)?.[1] as string;
    expect(file).toContain('key: team');
    expect(checkCatalogFile('catalog.yaml', file).problems).toEqual([]);
  });

  it('accepts the demo and sample catalogs and every export, in YAML and JSON', async () => {
    for (const file of [demoCatalog('demo'), demoCatalog('demo', true), sampleCatalog('acme'), sampleCatalog('acme', true)]) {
      expect(checkCatalogFile('x.json', JSON.stringify(file)).problems).toEqual([]);
      expect(checkCatalogFile('x.yaml', YAML.stringify(file)).problems).toEqual([]);
    }
    await world.core.apiKeys.ensureOrganisation('sample');
    await world.core.importer.apply(sampleCatalog('sample'));
    const exported = await world.core.exporter.export('sample', false);
    expect(checkCatalogFile('x.yaml', YAML.stringify(exported)).problems).toEqual([]);
  });

  it('accepts what export writes of a decimal meter (scale, decimal terms and bounds), which imports back unchanged', async () => {
    const org = await world.core.apiKeys.ensureOrganisation('decimal');
    await world.core.usage.createMeter({ organisationId: org.id, isTest: false }, { slug: 'gpu_hours', name: 'GPU hours', scale: 3 });
    const file = {
      organisation: 'decimal',
      products: [
        {
          key: 'gpu',
          name: 'GPU',
          currencies: ['USD'],
          plans: [
            {
              key: 'hours',
              pricingType: 'paid' as const,
              prices: { USD: 10 },
              usage: [
                {
                  meter: 'gpu_hours',
                  scale: 3,
                  allowance: 0.5,
                  maxUsage: 100.25,
                  rollover: { upTo: 0.125 },
                  tiers: {
                    USD: [
                      { upTo: 2.5, unitAmount: 1 },
                      { upTo: 'inf' as const, unitAmount: 0.5 },
                    ],
                  },
                },
              ],
            },
          ],
        },
      ],
    };
    expect(checkCatalogFile('gpu.yaml', YAML.stringify(file)).problems).toEqual([]);
    await world.core.importer.apply(file);
    const exported = YAML.stringify(await world.core.exporter.export('decimal', false));
    expect(exported).toContain('scale: 3');
    expect(exported).toContain('allowance: 0.5');
    expect(checkCatalogFile('x.yaml', exported).problems).toEqual([]);
    const again = await world.core.importer.apply(YAML.parse(exported));
    expect(again).toMatchObject({ created: 0, updated: 0 });
  });

  it("is @tollgate/http's schema, the one POST /api/products/import checks, and docs/catalog-file.md names it", () => {
    expect(path.relative(path.join(__dirname, '..', '..'), CATALOG_FILE_SCHEMA_PATH)).toBe(
      path.join('http', 'assets', 'catalog-file.schema.json'),
    );
    expect(fs.existsSync(CATALOG_FILE_SCHEMA_PATH)).toBe(true);
    expect(fs.readFileSync(DOC, 'utf8')).toContain('$schema=./node_modules/@tollgate/http/assets/catalog-file.schema.json');
  });

  it('refuses what is out of range with its path and line (length, trialDays), as the API does', () => {
    const file = YAML.stringify({
      organisation: 'x',
      products: [{ key: 'p', name: 'P', plans: [{ key: 'a', pricingType: 'free', length: 0, trialDays: 731 }] }],
    });
    expect(checkCatalogFile('x.yaml', file).problems).toEqual([
      { path: 'products[0].plans[0].length', line: 8, message: 'must be a whole number from 1 to 1095, got 0' },
      { path: 'products[0].plans[0].trialDays', line: 9, message: 'must be a whole number from 0 to 730 or null, got 731' },
    ]);
  });

  it('refuses a usage entry priced by neither unitPrices nor tiers, as the import does', () => {
    const file = {
      organisation: 'x',
      products: [{ key: 'p', name: 'P', plans: [{ key: 'a', pricingType: 'paid', usage: [{ meter: 'calls' }] }] }],
    };
    expect(checkCatalogFile('x.json', JSON.stringify(file)).problems).toEqual([
      { path: 'products[0].plans[0].usage[0]', line: 1, message: 'Priced by exactly one of unitPrices and tiers.' },
    ]);
  });
});
