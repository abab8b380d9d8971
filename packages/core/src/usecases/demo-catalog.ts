import type { CatalogFile } from './catalog-file';

/** The demo organisation's catalog: the example of DESIGN.md section 9. */
export const demoCatalog = (organisation = 'demo', test = false): CatalogFile => ({
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
        { key: 'theme', displayName: 'Theme', valueType: 'enum', enumOptions: ['light', 'dark'], defaultValue: 'light' },
        { key: 'sso', displayName: 'Single sign-on', valueType: 'boolean', defaultValue: 'false', visibility: 'private' },
      ],
      plans: [
        {
          key: 'free',
          displayName: 'Free',
          pricingType: 'free',
          licenseType: 'user',
          interval: 'month',
          length: 1,
          capabilities: ['edit'],
          features: { projects: '3', theme: 'light', sso: 'false' },
        },
        {
          key: 'team',
          displayName: 'Team',
          pricingType: 'paid',
          licenseType: 'perSeat',
          perSeatAmount: 2,
          interval: 'month',
          length: 1,
          evaluation: true,
          evalDays: 14,
          prices: { USD: 12, EUR: 11 },
          capabilities: ['edit', 'export'],
          features: { projects: 'unlimited', theme: 'dark', sso: 'true' },
        },
      ],
      pricingTables: [
        {
          key: 'main',
          name: 'Main',
          title: 'Pick a plan',
          plans: ['free', 'team'],
          featuredPlan: 'team',
          features: ['projects', 'theme', 'sso'],
        },
      ],
    },
  ],
});
