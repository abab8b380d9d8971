import {
  planCapabilities,
  planCurrencies,
  planFeatures,
  productCurrencies,
  sortedFeatures,
  subscriptionView,
  toMajor,
  type Capability,
  type Currency,
  type DomainEvent,
  type Feature,
  type Id,
  type PaymentIntegration,
  type Plan,
  type PlanFeatureView,
  type PricingTableView,
  type Product,
  type ProductCatalog,
  type SubscriptionView,
  type Customer,
} from '@tollgate/core';
import { capabilityView, enumOptionView, iso, legacyFeature, legacyPlan, legacyProduct, planFeatureBase } from '@tollgate/http';

/** v1 views: the legacy shapes plus v1 members; relations only where `expand` asks for them. */

/** A parsed `expand`: the set of requested paths with every parent path implied. */
export class Expand {
  private readonly paths: Set<string>;
  constructor(paths: Iterable<string>) {
    this.paths = new Set();
    for (const p of paths) {
      const parts = p.split('.');
      for (let i = 1; i <= parts.length; i++) this.paths.add(parts.slice(0, i).join('.'));
    }
  }
  has(path: string): boolean {
    return this.paths.has(path);
  }
  /** This expansion plus `path`. */
  with(path: string): Expand {
    return new Expand([...this.paths, path]);
  }
  /** The sub-expansion under `prefix` (`plans.features` under `plans` is `features`). */
  under(prefix: string): Expand {
    return new Expand([...this.paths].filter((p) => p.startsWith(`${prefix}.`)).map((p) => p.slice(prefix.length + 1)));
  }
  static all(...paths: string[]): Expand {
    return new Expand(paths);
  }
}

export const currencyView = (c: Currency) => ({ uuid: c.id, shortName: c.shortName, longName: c.longName, symbol: c.symbol });

export const v1Feature = (f: Feature) => ({ ...legacyFeature(f), sortOrder: f.sortOrder });
export const v1FeatureWithOptions = (f: Feature) => ({ ...v1Feature(f), featureEnumOptions: f.enumOptions.map(enumOptionView) });

export const integrationView = (i: PaymentIntegration | undefined) =>
  i
    ? {
        uuid: i.id,
        organisation: i.organisationId,
        integrationName: i.integrationName,
        accountName: i.accountName,
        accountData: i.accountData,
        accountId: i.accountId,
        updatedAt: iso(i.updatedAt),
        isTest: i.isTest,
      }
    : null;

export const v1PlanFeature = (planId: Id, v: PlanFeatureView, x: Expand) => ({
  ...planFeatureBase(planId, v),
  isUsage: v.value.isUsage,
  pricePerUnit: v.value.pricePerUnit,
  minUsage: v.value.minUsage,
  maxUsage: v.value.maxUsage,
  ...(x.has('feature') ? { feature: v1Feature(v.feature) } : {}),
  ...(x.has('enumValue') ? { enumValue: v.enumOption ? enumOptionView(v.enumOption) : null } : {}),
});

export const v1ProductCurrencies = (catalog: ProductCatalog, x: Expand) =>
  productCurrencies(catalog).map(({ link, currency }) => ({
    productUuid: catalog.product.id,
    currencyUuid: currency.id,
    defaultCurrency: link.isDefault,
    ...(x.has('currency') ? { currency: currencyView(currency) } : {}),
  }));

export const v1PlanCurrencies = (plan: Plan, currencies: ReadonlyMap<Id, Currency>, x: Expand) =>
  planCurrencies(plan, currencies).map(({ link, currency }) => ({
    planUuid: plan.id,
    currencyUuid: currency.id,
    price: toMajor(link.amountMinor, currency.shortName),
    paymentIntegrationPlanId: link.paymentPlanId,
    ...(x.has('currency') ? { currency: currencyView(currency) } : {}),
  }));

export const v1PlanCapabilities = (plan: Plan, product: Product, x: Expand) =>
  planCapabilities(plan, product).map((c) => ({
    planUuid: plan.id,
    capabilityUuid: c.capability.id,
    updatedAt: iso(c.updatedAt),
    ...(x.has('capability') ? { capability: capabilityView(c.capability) } : {}),
  }));

/** A v1 plan; `checkoutUrl` when a link was generated for it. */
export function v1Plan(
  plan: Plan,
  catalog: Pick<ProductCatalog, 'product' | 'currencies'>,
  x: Expand = Expand.all(),
  checkoutUrl?: string,
) {
  const { type: _t, ...base } = legacyPlan(plan);
  void _t;
  return {
    ...base,
    isTest: plan.isTest,
    perSeatAmount: plan.perSeatAmount,
    ...(x.has('capabilities') ? { capabilities: v1PlanCapabilities(plan, catalog.product, x.under('capabilities')) } : {}),
    ...(x.has('features')
      ? { features: planFeatures(plan, catalog.product).map((v) => v1PlanFeature(plan.id, v, x.under('features'))) }
      : {}),
    ...(x.has('currencies') ? { currencies: v1PlanCurrencies(plan, catalog.currencies, x.under('currencies')) } : {}),
    ...(checkoutUrl !== undefined ? { checkoutUrl } : {}),
  };
}

/** How plans show inside pricing tables and switch lists: with capabilities, features and currencies in full. */
export const DISPLAY_PLAN = Expand.all('capabilities.capability', 'features.feature', 'features.enumValue', 'currencies.currency');

export function v1Product(catalog: ProductCatalog | { product: Product }, x: Expand = Expand.all(), checkoutUrls?: Map<Id, string>) {
  const p = catalog.product;
  const full = catalog as ProductCatalog;
  return {
    ...legacyProduct(p),
    appType: p.appType,
    isTest: p.isTest,
    ...(x.has('features')
      ? { features: sortedFeatures(p).map((f) => (x.has('features.featureEnumOptions') ? v1FeatureWithOptions(f) : v1Feature(f))) }
      : {}),
    ...(x.has('capabilities') ? { capabilities: p.capabilities.map(capabilityView) } : {}),
    ...(x.has('currencies') ? { currencies: v1ProductCurrencies(full, x.under('currencies')) } : {}),
    ...(x.has('organisationPaymentIntegration') ? { organisationPaymentIntegration: integrationView(full.integration) } : {}),
    ...(x.has('plans') ? { plans: full.plans.map((plan) => v1Plan(plan, full, x.under('plans'), checkoutUrls?.get(plan.id))) } : {}),
  };
}

/** Product pricing table: the product with features, integration, currencies and its plans in full. */
export const v1ProductPricingTable = (catalog: ProductCatalog, checkoutUrls: Map<Id, string>) => ({
  ...v1Product(catalog, Expand.all('features.featureEnumOptions', 'organisationPaymentIntegration', 'currencies.currency')),
  plans: catalog.plans.map((plan) => v1Plan(plan, catalog, DISPLAY_PLAN, checkoutUrls.get(plan.id))),
});

export const v1PricingTable = (view: PricingTableView, checkoutUrls: Map<Id, string>) => {
  const t = view.table;
  return {
    uuid: t.id,
    name: t.name,
    status: t.status,
    title: t.title,
    text: t.text,
    theme: t.theme,
    featureOrder: t.featureOrder,
    productUuid: t.productId,
    customTheme: t.customTheme,
    featuredPlanUuid: t.featuredPlanId,
    updatedAt: iso(t.updatedAt),
    features: pricingTableFeatureRows(view),
    product: v1Product(view.catalog, Expand.all('features', 'currencies.currency', 'organisationPaymentIntegration')),
    plans: pricingTablePlanRows(view, (plan) => v1Plan(plan, view.catalog, DISPLAY_PLAN, checkoutUrls.get(plan.id))),
  };
};

/** A pricing table's features in their sort order (those the product still has), each with its feature and options (v1, v2). */
export const pricingTableFeatureRows = (view: PricingTableView) => {
  const t = view.table;
  const features = new Map(view.features.map((f) => [f.id, f]));
  return [...t.features]
    .sort((a, b) => a.sortOrder - b.sortOrder)
    .filter((f) => features.has(f.featureId))
    .map((f) => ({
      pricingTableUuid: t.id,
      featureUuid: f.featureId,
      sortOrder: f.sortOrder,
      updatedAt: iso(f.updatedAt),
      feature: v1FeatureWithOptions(features.get(f.featureId) as Feature),
    }));
};

/** A pricing table's plans in their sort order (those that still exist), each shown by `planOf` (v1, v2, v3). */
export const pricingTablePlanRows = <V>(view: PricingTableView, planOf: (plan: Plan) => V) => {
  const t = view.table;
  const plans = new Map(view.plans.map((p) => [p.id, p]));
  return [...t.plans]
    .sort((a, b) => a.sortOrder - b.sortOrder)
    .filter((p) => plans.has(p.planId))
    .map((p) => ({
      planUuid: p.planId,
      pricingTableUuid: t.id,
      sortOrder: p.sortOrder,
      updatedAt: iso(p.updatedAt),
      plan: planOf(plans.get(p.planId) as Plan),
    }));
};

export type SubscriptionViewInput = SubscriptionView;

export function v1Subscription(v: SubscriptionViewInput, x: Expand = Expand.all()) {
  const s = v.subscription;
  const catalog: ProductCatalog = { product: v.product, plans: [v.plan], currencies: v.currencies, integration: v.integration };
  return {
    ...subscriptionView(s),
    ...(x.has('product') ? { product: v1Product(catalog, x.under('product')) } : {}),
    ...(x.has('plan') ? { plan: v1Plan(v.plan, catalog, x.under('plan')) } : {}),
    ...(x.has('customer') ? { customer: v.customer ? customerView(v.customer) : null } : {}),
  };
}

export const customerView = (c: Customer) => ({
  uuid: c.id,
  organisation: c.organisationId,
  value: c.value,
  email: c.emailAddress,
  paymentIntegrationCustomerId: c.paymentCustomerId,
  createdAt: iso(c.createdAt),
  updatedAt: iso(c.updatedAt),
  isTest: c.isTest,
});

export const eventView = (e: DomainEvent) => ({
  uuid: e.id,
  type: e.type,
  status: e.status,
  subscriptionUuid: e.subscriptionId,
  attempts: e.attempts,
  error: e.lastError,
  errorCode: e.errorCode,
  createdAt: iso(e.createdAt),
  updatedAt: iso(e.updatedAt),
});

export type CapabilityList = Capability[];
