import type { Id, Plan, Product, ProductSettings, Tenant } from '../model';

/** Settings of a new product: nothing collected beyond the payment, no redirect URLs yet. */
export const defaultSettings = (id: Id, now: Date): ProductSettings => ({
  id,
  successUrl: null,
  cancelUrl: null,
  allowPromoCodes: false,
  automaticTax: false,
  collectBillingAddress: false,
  collectShippingAddress: false,
  cardPrefillPreference: 'none',
  pastDueEntitlements: false,
  createdAt: now,
  updatedAt: now,
});

export function newProduct(
  tenant: Tenant,
  ids: { id: Id; settingsId: Id },
  fields: Partial<Product> & { name: string },
  now: Date,
): Product {
  return {
    id: ids.id,
    organisationId: tenant.organisationId,
    isTest: tenant.isTest,
    key: null,
    displayName: fields.name,
    description: '',
    appType: 'custom',
    paid: false,
    paymentIntegrationId: null,
    paymentProductId: null,
    currencies: [],
    features: [],
    capabilities: [],
    archivedAt: null,
    createdAt: now,
    updatedAt: now,
    ...fields,
    settings: fields.settings ?? defaultSettings(ids.settingsId, now),
  };
}

export function newPlan(tenant: Tenant, id: Id, fields: Partial<Plan> & { name: string; productId: Id }, now: Date): Plan {
  return {
    id,
    organisationId: tenant.organisationId,
    isTest: tenant.isTest,
    key: null,
    displayName: fields.name,
    description: '',
    active: true,
    visibility: 'public',
    licenseType: 'user',
    planType: 'standard',
    pricingType: 'paid',
    interval: 'month',
    length: 1,
    trialDays: null,
    evaluation: false,
    evalDays: 0,
    perSeatAmount: 1,
    usageBased: false,
    environment: tenant.isTest ? 'test' : 'live',
    appKind: 'custom',
    servicePlan: false,
    providerPlanId: null,
    tierTag: null,
    currencies: [],
    capabilityIds: [],
    features: [],
    lineItems: [],
    archivedAt: null,
    createdAt: now,
    updatedAt: now,
    ...fields,
  };
}
