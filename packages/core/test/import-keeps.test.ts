import type { CatalogFile, ProductEntry } from '../src';
import { toMinor } from '../src';
import { buyPlan, createTestCore, rejectionOf, sampleCatalog, seedSample, type TestCore } from '../src/testing';

// An import never deletes a capability or feature (docs/catalog-file.md: "Nothing is ever deleted
// by an import"): the product's lists are merged, and the grants of a plan change only when the
// file names the plan, which the dry run then lists with what it gains and loses.

const ORG = 'acme';

async function setup() {
  const core = createTestCore();
  const { tenant, keys } = await seedSample(core, ORG);
  // alice pays for team, which grants edit and export.
  await buyPlan(core, keys['plans.notes.team'], 2, 'alice');
  const check = async (grantee = 'alice') =>
    (await core.checks.check(tenant, { productId: keys['products.notes'], granteeIds: [grantee], graceDays: 0, encoding: 'der' }))
      ?.capabilities ?? [];
  const exported = async () => (await core.exporter.export(ORG)).products?.[0] as ProductEntry;
  const planOf = async (key: string) => (await exported()).plans?.find((p) => p.key === key);
  return { core, tenant, keys, check, exported, planOf };
}

/** The sample product with `over`, naming only the plans given. */
function file(over: Partial<ProductEntry>): CatalogFile {
  const [product] = sampleCatalog(ORG).products ?? [];
  return { organisation: ORG, products: [{ ...product, plans: [], pricingTables: [], ...over }] };
}

const refusal = async (core: TestCore, f: CatalogFile) => {
  const e = await rejectionOf(core.importer.apply(f));
  expect(e.code).toBe('VALIDATION_FAILED');
  return (e.details as { property: string; error: string }[])[0];
};

describe('an import keeps what it does not name', () => {
  it("keeps the capabilities a file leaves out of the product's list, and the plans' grants of them", async () => {
    const { core, check, exported, planOf } = await setup();
    expect(await check()).toEqual(['edit', 'export']);
    const partial = file({ capabilities: ['edit'] });
    const dry = await core.importer.apply(partial, { dryRun: true });
    // Only the plans named count (none here); the product's list is unchanged: nothing to write.
    expect(dry.changes).toEqual([]);
    await core.importer.apply(partial);
    expect(await check()).toEqual(['edit', 'export']);
    expect((await exported()).capabilities).toEqual(['edit', 'export', 'admin']);
    expect((await planOf('business'))?.capabilities).toEqual(['edit', 'export', 'admin']);
    // A file naming only the product keeps it paid (its paid plans are not in the file).
    const product = await core.uow.read(
      async (r) => (await r.products.list({ organisationId: (await r.organisations.findByName(ORG))!.id, isTest: false }))[0],
    );
    expect(product.paid).toBe(true);
  });

  it('keeps features a file renames or drops, with the values of plans it does not name', async () => {
    const { core, exported, planOf } = await setup();
    const before = await planOf('team');
    expect(before?.features).toEqual({ projects: 'unlimited', theme: 'dark', sso: 'true' });
    const [sample] = sampleCatalog(ORG).products ?? [];
    const free = sample.plans?.find((p) => p.key === 'free');
    const renamed = file({
      features: [
        { key: 'projects', displayName: 'Projects', valueType: 'numerical', defaultValue: '3', showUnlimited: true },
        { key: 'colour', displayName: 'Colour', valueType: 'enum', enumOptions: ['light', 'dark'], defaultValue: 'light' },
      ],
      plans: [{ ...free!, features: { projects: '3', colour: 'light' } }],
    });
    const dry = await core.importer.apply(renamed, { dryRun: true });
    expect(dry.changes.map((c) => c.key)).toEqual(['products.notes', 'plans.notes.free']);
    await core.importer.apply(renamed);
    expect(await planOf('team')).toEqual(before);
    expect((await exported()).features?.map((f) => f.key)).toEqual(['projects', 'colour', 'theme', 'sso']);
    // The same file again changes nothing.
    expect((await core.importer.apply(renamed)).changes).toEqual([]);
  });

  it("keeps an enum feature's options the file leaves out", async () => {
    const { core, exported, planOf } = await setup();
    const [sample] = sampleCatalog(ORG).products ?? [];
    const features = (sample.features ?? []).map((f) => (f.key === 'theme' ? { ...f, enumOptions: ['light', 'sepia'] } : f));
    await core.importer.apply(file({ features }));
    expect((await exported()).features?.find((f) => f.key === 'theme')?.enumOptions).toEqual(['light', 'sepia', 'dark']);
    expect((await planOf('team'))?.features?.theme).toBe('dark');
  });

  it("refuses to change a feature's type while a plan the file does not name has a value of it", async () => {
    const { core, planOf } = await setup();
    const [sample] = sampleCatalog(ORG).products ?? [];
    const features = (sample.features ?? []).map((f) =>
      f.key === 'sso' ? { ...f, valueType: 'numerical' as const, defaultValue: '0' } : f,
    );
    expect(await refusal(core, file({ features }))).toEqual({
      property: 'features.sso.valueType',
      error:
        'plans free, team (not in the file) have a boolean value of feature sso: name them in the file with new values, or give the feature another key',
    });
    expect((await planOf('team'))?.features?.sso).toBe('true');
  });

  it("changes a named plan's grants as the file says, and the dry run lists them with the plan's running subscriptions", async () => {
    const { core, check } = await setup();
    const [sample] = sampleCatalog(ORG).products ?? [];
    const team = sample.plans?.find((p) => p.key === 'team');
    const f = file({ plans: [{ ...team!, capabilities: ['edit', 'admin'], features: { projects: '10', theme: 'dark' } }] });
    const dry = await core.importer.apply(f, { dryRun: true });
    expect(dry.changes).toEqual([
      {
        key: 'plans.notes.team',
        change: 'updated',
        grants: {
          capabilities: { added: ['admin'], removed: ['export'] },
          features: { projects: { before: 'unlimited', after: '10' }, sso: { before: 'true', after: null } },
          runningSubscriptions: 1,
        },
      },
    ]);
    expect(await check()).toEqual(['edit', 'export']);
    await core.importer.apply(f);
    // Deliberate: named, the plan's list is its whole set; its subscriptions follow at the check.
    expect(await check()).toEqual(['admin', 'edit']);
  });
});

describe("a plan's prices", () => {
  const withTeamPrices = (prices: Record<string, number>, currencies = ['USD', 'EUR', 'JPY']) => {
    const [sample] = sampleCatalog(ORG).products ?? [];
    const team = sample.plans?.find((p) => p.key === 'team');
    return file({ currencies, plans: [{ ...team!, prices }] });
  };

  it('are refused with more decimals than the currency has, never rounded', async () => {
    const core = createTestCore();
    await core.apiKeys.ensureOrganisation(ORG);
    expect(await refusal(core, withTeamPrices({ USD: 12.345 }))).toEqual({
      property: 'plans.team.prices.USD',
      error: 'must have at most 2 decimal places (whole USD minor units), got 12.345',
    });
    expect(await refusal(core, withTeamPrices({ USD: 12, JPY: 10.5 }))).toEqual({
      property: 'plans.team.prices.JPY',
      error: 'must be a whole number of JPY (it has no minor unit), got 10.5',
    });
    await core.importer.apply(withTeamPrices({ USD: 12.35, JPY: 1500, EUR: 0.1 }));
    const team = (await core.exporter.export(ORG)).products?.[0].plans?.find((p) => p.key === 'team');
    expect(team?.prices).toEqual({ USD: 12.35, JPY: 1500, EUR: 0.1 });
  });

  it("are at most the catalog API's largest amount (99,999,999,999 minor units)", async () => {
    const core = createTestCore();
    await core.apiKeys.ensureOrganisation(ORG);
    expect(await refusal(core, withTeamPrices({ USD: 1e12 }))).toEqual({
      property: 'plans.team.prices.USD',
      error: 'must be at most 999999999.99',
    });
    expect(await refusal(core, withTeamPrices({ USD: 1, JPY: 100_000_000_000 }))).toEqual({
      property: 'plans.team.prices.JPY',
      error: 'must be at most 99999999999',
    });
    await core.importer.apply(withTeamPrices({ USD: 999_999_999.99, JPY: 99_999_999_999 }));
  });

  it('toMinor is exact, and refuses a fraction of the minor unit', () => {
    expect(toMinor(12.35, 'USD')).toBe(1235);
    expect(toMinor(0.07, 'USD')).toBe(7);
    expect(toMinor(1.005, 'KWD')).toBe(1005);
    expect(() => toMinor(12.345, 'USD')).toThrow(RangeError);
    expect(() => toMinor(10.5, 'JPY')).toThrow(RangeError);
  });
});

describe('an import, after review', () => {
  const sample = () => (sampleCatalog(ORG).products ?? [])[0];
  const planEntry = (key: string) => sample().plans?.find((p) => p.key === key);
  const productCurrencies = (core: TestCore) =>
    core.uow.read(async (r) => {
      const org = (await r.organisations.findByName(ORG))!;
      const [p] = await r.products.list({ organisationId: org.id, isTest: false });
      const names = new Map((await r.currencies.list()).map((c) => [c.id, c.shortName]));
      return p.currencies.map((c) => `${names.get(c.currencyId)}${c.isDefault ? '*' : ''}`);
    });

  it('shows the value a plan had before an enum feature becomes boolean (read through the stored product)', async () => {
    const { core } = await setup();
    const features = (sample().features ?? []).map((f) =>
      f.key === 'theme' ? { key: 'theme', displayName: 'Theme', valueType: 'boolean' as const, defaultValue: 'false' } : f,
    );
    const f = file({
      features,
      plans: [
        { ...planEntry('free')!, features: { projects: '3', theme: 'false', sso: 'false' } },
        { ...planEntry('team')!, features: { projects: 'unlimited', theme: 'true', sso: 'true' } },
      ],
    });
    const dry = await core.importer.apply(f, { dryRun: true });
    expect(dry.changes.filter((c) => c.grants).map((c) => [c.key, c.grants?.features])).toEqual([
      ['plans.notes.free', { theme: { before: 'light', after: 'false' } }],
      ['plans.notes.team', { theme: { before: 'dark', after: 'true' } }],
    ]);
  });

  it("merges the product's currencies: the file's first (its first the default), then those it leaves out", async () => {
    const { core, exported } = await setup();
    expect(await productCurrencies(core)).toEqual(['USD*', 'EUR']);
    // A file without `currencies` keeps the product's list as it is: nothing to write.
    const { currencies: _omitted, ...noCurrencies } = file({}).products![0];
    void _omitted;
    expect((await core.importer.apply({ organisation: ORG, products: [noCurrencies] }, { dryRun: true })).changes).toEqual([]);
    await core.importer.apply({ organisation: ORG, products: [noCurrencies] });
    expect(await productCurrencies(core)).toEqual(['USD*', 'EUR']);
    await core.importer.apply(file({ currencies: ['USD'] }));
    expect(await productCurrencies(core)).toEqual(['USD*', 'EUR']);
    await core.importer.apply(file({ currencies: ['GBP', 'USD'] }));
    expect(await productCurrencies(core)).toEqual(['GBP*', 'USD', 'EUR']);
    // The team plan (not in those files) is still priced in EUR, and the product's export imports back.
    const product = await exported();
    expect(product.plans?.find((p) => p.key === 'team')?.prices).toEqual({ USD: 12, EUR: 11 });
    expect((await core.importer.apply({ organisation: ORG, products: [product] })).changes).toEqual([]);
  });

  it('removes a currency no plan left out of the file is priced in; an empty list keeps the default of those kept (final review)', async () => {
    const { core } = await setup();
    await core.importer.apply(file({ currencies: ['GBP', 'USD'] }));
    expect(await productCurrencies(core)).toEqual(['GBP*', 'USD', 'EUR']);
    // GBP: no plan is priced in it, so a file leaving it out removes it; USD and EUR price the team plan.
    await core.importer.apply(file({ currencies: ['USD'] }));
    expect(await productCurrencies(core)).toEqual(['USD*', 'EUR']);
    await core.importer.apply(file({ currencies: [] }));
    expect(await productCurrencies(core)).toEqual(['USD*', 'EUR']);
  });

  it('lets a pricing table list and feature a stored plan the file does not name', async () => {
    const { core, keys } = await setup();
    const result = await core.importer.apply(
      file({
        plans: [planEntry('free')!],
        pricingTables: [
          { key: 'main', name: 'Main', title: 'Pick', plans: ['free', 'team'], featuredPlan: 'team', features: ['projects'] },
        ],
      }),
    );
    const table = await core.uow.read((r) => r.pricingTables.get(result.keys['pricingTables.notes.main']));
    expect(table?.plans.map((p) => p.planId)).toEqual([keys['plans.notes.free'], keys['plans.notes.team']]);
    expect(table?.featuredPlanId).toBe(keys['plans.notes.team']);
    expect(await refusal(core, file({ pricingTables: [{ key: 'main', plans: ['nope'] }] }))).toEqual({
      property: 'pricingTables.main.plans',
      error: 'unknown plan nope',
    });
  });

  it('says to use a new feature key when an archived plan holds a value of a feature whose type changes', async () => {
    const { core, tenant } = await setup();
    const legacy = { ...planEntry('team')!, key: 'legacy', displayName: 'Legacy' };
    const added = await core.importer.apply(file({ plans: [legacy] }));
    await core.plans.archivePlan(tenant, added.keys['plans.notes.legacy']);
    const features = (sample().features ?? []).map((f) =>
      f.key === 'sso' ? { ...f, valueType: 'numerical' as const, defaultValue: '0' } : f,
    );
    const named = (['free', 'team'] as const).map((k) => ({ ...planEntry(k)!, features: { ...planEntry(k)!.features, sso: '1' } }));
    expect(await refusal(core, file({ features, plans: named }))).toEqual({
      property: 'features.sso.valueType',
      error:
        'plans legacy (archived) (not in the file) have a boolean value of feature sso: an archived plan cannot be given new values, so give the feature another key',
    });
  });

  it("names the usage entry's field when a running subscription's currency is dropped from a usage price", async () => {
    const { core } = await setup();
    const metered = {
      key: 'calls',
      displayName: 'Calls',
      pricingType: 'paid' as const,
      interval: 'month' as const,
      length: 1,
      prices: { USD: 5, EUR: 5 },
      usage: [{ meter: 'api_calls', unitPrices: { USD: 0.01, EUR: 0.01 } }],
    };
    const made = await core.importer.apply(file({ plans: [metered] }));
    await buyPlan(core, made.keys['plans.notes.calls'], 1, 'bob');
    const conflict = async (plan: typeof metered | Record<string, unknown>) => {
      const e = await rejectionOf(core.importer.apply(file({ plans: [plan as typeof metered] })));
      expect(e.code).toBe('CONFLICT');
      return (e.details as { property: string }[])[0].property;
    };
    expect(await conflict({ ...metered, usage: [{ meter: 'api_calls', unitPrices: { EUR: 0.01 } }] })).toBe(
      'plans.calls.usage[0].unitPrices.USD',
    );
    expect(await conflict({ ...metered, usage: [{ meter: 'api_calls', tiers: { EUR: [{ upTo: 'inf', unitAmount: 0.01 }] } }] })).toBe(
      'plans.calls.usage[0].tiers.USD',
    );
    // `prices` dropped it too: named first, as before.
    expect(await conflict({ ...metered, prices: { EUR: 5 }, usage: [{ meter: 'api_calls', unitPrices: { EUR: 0.01 } }] })).toBe(
      'plans.calls.prices.USD',
    );
  });
});
