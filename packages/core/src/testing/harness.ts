import type { Tenant, UnitOfWork } from '..';
import { type CatalogFile, ApiKeyService, CatalogAdmin, CatalogFileImport, CatalogQueries, CheckoutService, EventWorker, LicenseService, SubscriptionService, type CoreDeps } from '../usecases';
import { CountingEventQueue, FakePaymentProvider, FakeSigner, FixedClock, RandomIds } from './fakes';
import { InMemoryUnitOfWork } from './memory';

/** Every use case wired to fakes (or to the given unit of work), for tests and embedding. */
export function createTestCore(options: { uow?: UnitOfWork } = {}) {
  const clock = new FixedClock();
  const payments = new FakePaymentProvider();
  const events = new CountingEventQueue();
  const uow = options.uow ?? new InMemoryUnitOfWork();
  const deps: CoreDeps = { uow, clock, ids: new RandomIds(), payments, signer: new FakeSigner(), events };
  const subscriptions = new SubscriptionService(deps);
  return {
    deps,
    uow,
    clock,
    payments,
    events,
    apiKeys: new ApiKeyService(deps),
    queries: new CatalogQueries(deps),
    admin: new CatalogAdmin(deps),
    importer: new CatalogFileImport(deps),
    checkout: new CheckoutService(deps),
    subscriptions,
    licenses: new LicenseService(deps),
    worker: new EventWorker(deps, subscriptions),
  };
}

export type TestCore = ReturnType<typeof createTestCore>;

/** A demo catalog in the catalog-file shape: a free, a per-seat, a usage-based and an evaluation plan. */
export const sampleCatalog = (organisation: string, test = false): CatalogFile => ({
  organisation,
  test,
  products: [
    {
      key: 'notes',
      name: 'notes-app',
      displayName: 'Notes',
      description: 'Shared notes for teams',
      currencies: ['USD', 'EUR'],
      capabilities: ['edit', 'export', 'admin'],
      features: [
        { key: 'projects', displayName: 'Projects', valueType: 'numerical', defaultValue: '3', showUnlimited: true },
        { key: 'theme', valueType: 'enum', enumOptions: ['light', 'dark'], defaultValue: 'light' },
        { key: 'sso', valueType: 'boolean', defaultValue: 'false', visibility: 'private' },
      ],
      plans: [
        { key: 'free', displayName: 'Free', pricingType: 'free', licenseType: 'user', interval: 'month', length: 1, capabilities: ['edit'], features: { projects: '3', theme: 'light', sso: 'false' } },
        { key: 'team', displayName: 'Team', pricingType: 'paid', licenseType: 'perSeat', perSeatAmount: 2, interval: 'month', length: 1, evaluation: true, evalDays: 14, prices: { USD: 12, EUR: 11 }, capabilities: ['edit', 'export'], features: { projects: 'unlimited', theme: 'dark', sso: 'true' } },
        { key: 'business', displayName: 'Business', pricingType: 'paid', licenseType: 'perSeat', perSeatAmount: 1, interval: 'month', length: 1, prices: { USD: 30, EUR: 28 }, capabilities: ['edit', 'export', 'admin'] },
        { key: 'metered', displayName: 'Metered', pricingType: 'paid', licenseType: 'user', usageBased: true, interval: 'month', length: 1, prices: { USD: 5 }, capabilities: ['edit'] },
        { key: 'metered-pro', displayName: 'Metered Pro', pricingType: 'paid', licenseType: 'user', usageBased: true, interval: 'month', length: 1, prices: { USD: 9 }, capabilities: ['edit', 'export'] },
      ],
      pricingTables: [{ key: 'main', name: 'Main', title: 'Pick a plan', plans: ['free', 'team', 'business'], featuredPlan: 'team', features: ['projects', 'theme', 'sso'] }],
    },
  ],
});

/** An organisation with the sample catalog imported; returns its tenant and the key -> uuid map. */
export async function seedSample(core: TestCore, organisation: string, test = false): Promise<{ tenant: Tenant; keys: Record<string, string> }> {
  const org = await core.apiKeys.ensureOrganisation(organisation);
  const result = await core.importer.apply(sampleCatalog(organisation, test));
  return { tenant: { organisationId: org.id, isTest: test }, keys: result.keys };
}
