import {
  iso,
  planFeatures,
  productCurrencies,
  sortedFeatures,
  subscriptionView,
  type Capability,
  type Customer,
  type DomainEvent,
  type Feature,
  type Id,
  type License,
  type Plan,
  type PricingTableView,
  type Product,
  type ProductCatalog,
  type Subscription,
  type SubscriptionView,
} from '@tollgate/core';
import { enumOptionView, legacyFeature, licenseView, planFeatureBase } from '@tollgate/http';
import {
  currencyView,
  Expand,
  integrationView,
  pricingTableFeatureRows,
  pricingTablePlanRows,
  v1FeatureWithOptions,
  v1PlanCapabilities,
  v1PlanCurrencies,
  v1Plan,
  v1Product,
} from '@tollgate/app-v1';
import type { Version } from './routes/support';

/**
 * v2 and v3 views. v2 is v1's shapes plus the members the real v2 added (`slug`, `archivedAt`,
 * seat bounds); v3 drops what it dropped (`name`, `appType`, the legacy plan flags) and nests
 * relations in full where v3 always shows them (docs/decisions.md, "v2 and v3 shapes").
 */

const slugOf = (r: { key: string | null; name: string }) => r.key ?? r.name;

const omit = <T extends object, K extends string>(o: T, keys: readonly K[]): Omit<T, K> => {
  const out = { ...o } as Record<string, unknown>;
  for (const k of keys) delete out[k];
  return out as Omit<T, K>;
};

export const V3_PRODUCT_DROPS = ['name', 'appType'] as const;
export const V3_PLAN_DROPS = [
  'name',
  'trialDays',
  'evaluation',
  'active',
  'planType',
  'environment',
  'providerPlanId',
  'servicePlan',
  'salablePlan',
  'paddlePlanId',
] as const;

type Catalogish = Pick<ProductCatalog, 'product' | 'currencies'> & Partial<ProductCatalog>;

export function productView(version: Version, catalog: Catalogish, x: Expand = Expand.all()) {
  const p = catalog.product;
  const base = { ...v1Product(catalog as ProductCatalog, x), slug: slugOf(p), archivedAt: iso(p.archivedAt) };
  return version === 'v2' ? base : omit(base, V3_PRODUCT_DROPS);
}

/**
 * A plan's own members (no relations). v2 adds the two SDK 5's `Plan` requires beside v1's
 * `servicePlan` and `providerPlanId` (kept: v1's clients read them): `salablePlan` true, every plan
 * served here being one the service itself sells (none is a third-party marketplace's), and
 * `paddlePlanId` null (no such provider here).
 */
export function planView(version: Version, plan: Plan, catalog: Pick<ProductCatalog, 'product' | 'currencies'>) {
  const base = {
    ...v1Plan(plan, catalog, new Expand([])),
    slug: slugOf(plan),
    maxSeatAmount: -1,
    hasAcceptedTransaction: false,
    archivedAt: iso(plan.archivedAt),
    salablePlan: true,
    paddlePlanId: null,
  };
  return version === 'v2' ? base : omit(base, V3_PLAN_DROPS);
}

export const featureView = (version: Version, f: Feature) =>
  version === 'v2'
    ? v1FeatureWithOptions(f)
    : { ...omit(legacyFeature(f), ['name']), sortOrder: f.sortOrder, featureEnumOptions: f.enumOptions.map(enumOptionView) };

/** A plan's features with the feature (and its options) and the chosen option. */
export const planFeatureViews = (version: Version, plan: Plan, product: Product) =>
  planFeatures(plan, product).map((v) => ({
    ...planFeatureBase(plan.id, v),
    ...(version === 'v2'
      ? { isUsage: v.value.isUsage, pricePerUnit: v.value.pricePerUnit, minUsage: v.value.minUsage, maxUsage: v.value.maxUsage }
      : {}),
    feature: featureView(version, v.feature),
    enumValue: v.enumOption ? enumOptionView(v.enumOption) : null,
  }));

export const planCurrencyViews = (plan: Plan, catalog: Pick<ProductCatalog, 'currencies'>) =>
  v1PlanCurrencies(plan, catalog.currencies, Expand.all('currency')).map((c) => ({ ...c, hasAcceptedTransaction: false }));

/** What a pricing table is shown for: one currency only, and the plans the customer or grantee holds. */
export interface TableFor {
  /** A currency's short name (upper case): only its prices are shown. */
  currency?: string;
  /** Plans the customer (v3 `owner`) or grantee (v2 `granteeId`) holds: marked `isSubscribed`. */
  held?: ReadonlySet<Id>;
}

const inCurrency = (t: TableFor) => (c: { currency?: { shortName: string } }) =>
  !t.currency || c.currency?.shortName.toUpperCase() === t.currency;

/** A plan with its features and currencies (pricing tables, `expand`). */
export const fullPlanView = (version: Version, plan: Plan, catalog: Pick<ProductCatalog, 'product' | 'currencies'>, t: TableFor = {}) => ({
  ...planView(version, plan, catalog),
  features: planFeatureViews(version, plan, catalog.product),
  currencies: planCurrencyViews(plan, catalog).filter(inCurrency(t)),
  ...(t.held ? { isSubscribed: t.held.has(plan.id) } : {}),
});

export const planCapabilityViews = (plan: Plan, product: Product) => v1PlanCapabilities(plan, product, Expand.all('capability'));

export const productCurrencyViews = (catalog: ProductCatalog) =>
  productCurrencies(catalog).map(({ link, currency }) => ({
    productUuid: catalog.product.id,
    currencyUuid: currency.id,
    defaultCurrency: link.isDefault,
    currency: currencyView(currency),
  }));

/** A product's pricing table: the product with its features, currencies and public plans in full. */
export const productPricingTableView = (version: Version, catalog: ProductCatalog, t: TableFor = {}) => ({
  ...productView(version, catalog, new Expand([])),
  features: sortedFeatures(catalog.product).map((f) => featureView(version, f)),
  currencies: productCurrencyViews(catalog).filter(inCurrency(t)),
  plans: catalog.plans.map((p) => fullPlanView(version, p, catalog, t)),
});

export function pricingTableView(version: Version, view: PricingTableView, shown: TableFor = {}) {
  const t = view.table;
  const product = {
    ...productView(version, view.catalog, new Expand([])),
    features: sortedFeatures(view.catalog.product).map((f) => featureView(version, f)),
    currencies: productCurrencyViews(view.catalog).filter(inCurrency(shown)),
  };
  const tablePlans = pricingTablePlanRows(view, (plan) => fullPlanView(version, plan, view.catalog, shown));
  const common = {
    uuid: t.id,
    status: t.status,
    featureOrder: t.featureOrder,
    productUuid: t.productId,
    featuredPlanUuid: t.featuredPlanId,
    updatedAt: iso(t.updatedAt),
    product,
    plans: tablePlans,
  };
  if (version === 'v3') return common;
  return {
    ...common,
    name: t.name,
    title: t.title,
    text: t.text,
    theme: t.theme,
    customTheme: t.customTheme,
    features: pricingTableFeatureRows(view),
  };
}

export const integrationV3 = (catalog: ProductCatalog) => {
  const i = integrationView(catalog.integration);
  return i && { ...i, newPaymentEnabled: true, status: 'active' };
};

/** A subscription with its owner (the paying customer's identifier). */
export const subscriptionV2 = (s: Subscription, owner: string | null) => ({ ...subscriptionView(s), owner });

export function subscriptionWithPlan(version: Version, v: SubscriptionView, x: Expand) {
  const catalog = { product: v.product, currencies: v.currencies };
  return {
    ...subscriptionV2(v.subscription, v.customer?.value ?? null),
    ...(x.has('plan') ? { plan: fullPlanView(version, v.plan, catalog) } : {}),
    ...(x.has('product') ? { product: productView(version, catalog, new Expand([])) } : {}),
  };
}

/** v2 seats and licenses: the v1 License with its plan's capabilities; v3 seats: without name, email, capabilities, metadata. */
export const seatView = (version: Version, l: License, capabilities: Capability[]) =>
  version === 'v2'
    ? licenseView(l, capabilities)
    : {
        uuid: l.id,
        subscriptionUuid: l.subscriptionId,
        status: l.status,
        granteeId: l.granteeId,
        paymentService: l.paymentService,
        purchaser: l.purchaser,
        type: l.type,
        productUuid: l.productId,
        planUuid: l.planId,
        startTime: iso(l.startTime),
        endTime: iso(l.endTime),
        updatedAt: iso(l.updatedAt),
        isTest: l.isTest,
      };

/** The real service's event names for Tollgate's event types. */
const EVENT_TYPES: Record<string, string> = { 'seats.increment': 'Create seats', 'seats.decrement': 'Remove seats' };

export const eventV2 = (e: DomainEvent) => ({
  uuid: e.id,
  type: EVENT_TYPES[e.type] ?? e.type,
  organisation: e.organisationId,
  status: e.status,
  isTest: e.isTest,
  retries: e.attempts,
  errorMessage: e.lastError,
  errorCode: e.errorCode,
  createdAt: iso(e.createdAt),
  updatedAt: iso(e.updatedAt),
});

export type { Customer, Id };
