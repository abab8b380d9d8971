import { ErrorCodes, fail } from '../errors';
import type {
  Capability,
  Currency,
  EnumOption,
  Feature,
  Id,
  PaymentIntegration,
  Plan,
  PlanCurrency,
  PlanFeatureValue,
  PricingTable,
  Product,
  ProductCurrency,
  Tenant,
} from '../model';
import { assertAccessible } from '../domain/tenancy';
import type { Repositories, UnitOfWork } from '../ports';

export interface PlanFeatureView {
  value: PlanFeatureValue;
  feature: Feature;
  enumOption: EnumOption | null;
}

export interface ProductCurrencyView {
  link: ProductCurrency;
  currency: Currency;
}

export interface PlanCurrencyView {
  link: PlanCurrency;
  currency: Currency;
}

export interface PlanCapabilityView {
  planId: Id;
  capability: Capability;
  updatedAt: Date;
}

/** A product with everything the views of its catalog may show. */
export interface ProductCatalog {
  product: Product;
  plans: Plan[];
  currencies: ReadonlyMap<Id, Currency>;
  /** The payment integration the product sells through, if any. */
  integration: PaymentIntegration | undefined;
}

export interface PricingTableView {
  table: PricingTable;
  catalog: ProductCatalog;
  /** The table's plans in sort order. */
  plans: Plan[];
  /** The table's features in sort order. */
  features: Feature[];
}

export const planFeatures = (plan: Plan, product: Product): PlanFeatureView[] => {
  const byId = new Map(product.features.map((f) => [f.id, f]));
  return plan.features
    .map((value) => {
      const feature = byId.get(value.featureId);
      if (!feature) return undefined;
      const enumOption = value.enumOptionId ? (feature.enumOptions.find((o) => o.id === value.enumOptionId) ?? null) : null;
      return { value, feature, enumOption };
    })
    .filter((v): v is PlanFeatureView => v !== undefined)
    .sort((a, b) => a.feature.sortOrder - b.feature.sortOrder);
};

export const productCurrencies = (catalog: ProductCatalog): ProductCurrencyView[] =>
  catalog.product.currencies
    .map((link) => ({ link, currency: catalog.currencies.get(link.currencyId) as Currency }))
    .filter((v) => v.currency);

export const planCurrencies = (plan: Plan, currencies: ReadonlyMap<Id, Currency>): PlanCurrencyView[] =>
  plan.currencies.map((link) => ({ link, currency: currencies.get(link.currencyId) as Currency })).filter((v) => v.currency);

export const planCapabilities = (plan: Plan, product: Product): PlanCapabilityView[] => {
  const byId = new Map(product.capabilities.map((c) => [c.id, c]));
  return plan.capabilityIds
    .map((id) => byId.get(id))
    .filter((c): c is Capability => c !== undefined)
    .map((capability) => ({ planId: plan.id, capability, updatedAt: plan.updatedAt }));
};

export const sortedFeatures = (product: Product): Feature[] => [...product.features].sort((a, b) => a.sortOrder - b.sortOrder);

/** Read-only use cases of the legacy and v1 generations over products, plans and pricing tables. */
export class CatalogQueries {
  constructor(private readonly deps: { uow: UnitOfWork }) {}

  private read<T>(work: (r: Repositories) => Promise<T>): Promise<T> {
    return this.deps.uow.run(work);
  }

  /** The tenant's products (archived included), `batch` at a time, oldest first: bounded memory whatever their number. */
  async *productPages(tenant: Tenant, batch = 100): AsyncGenerator<Product[]> {
    let after: string | undefined;
    for (;;) {
      const page = await this.deps.uow.read((r) => r.products.page(tenant, { limit: batch, after, includeArchived: true }));
      yield page.items;
      if (!page.hasMore || !page.nextCursor) return;
      after = page.nextCursor;
    }
  }

  async listProducts(tenant: Tenant): Promise<Product[]> {
    return this.read((r) => r.products.list(tenant, { includeArchived: true }));
  }

  async getProduct(tenant: Tenant, productId: Id): Promise<Product> {
    return this.read(async (r) => assertAccessible(await r.products.get(productId), tenant, 'product'));
  }

  /** The product with its plans and the currencies they use. */
  async productCatalog(tenant: Tenant, productId: Id): Promise<ProductCatalog> {
    return this.read((r) => loadProductCatalog(r, tenant, productId));
  }

  async listPlans(tenant: Tenant, productId: Id): Promise<Plan[]> {
    return (await this.productCatalog(tenant, productId)).plans;
  }

  async productFeatures(tenant: Tenant, productId: Id): Promise<Feature[]> {
    return sortedFeatures(await this.getProduct(tenant, productId));
  }

  async productCapabilities(tenant: Tenant, productId: Id): Promise<Capability[]> {
    return (await this.getProduct(tenant, productId)).capabilities;
  }

  async productCurrencies(tenant: Tenant, productId: Id): Promise<ProductCurrencyView[]> {
    return productCurrencies(await this.productCatalog(tenant, productId));
  }

  /** The plan with its product and the currencies they use. */
  async getPlan(tenant: Tenant, planId: Id): Promise<{ plan: Plan; catalog: ProductCatalog }> {
    return this.read(async (r) => {
      const plan = assertAccessible(await r.plans.get(planId), tenant, 'plan');
      return { plan, catalog: await loadProductCatalog(r, tenant, plan.productId) };
    });
  }

  async planFeatures(tenant: Tenant, planId: Id): Promise<PlanFeatureView[]> {
    const { plan, catalog } = await this.getPlan(tenant, planId);
    return planFeatures(plan, catalog.product);
  }

  async planCurrencies(tenant: Tenant, planId: Id): Promise<PlanCurrencyView[]> {
    const { plan, catalog } = await this.getPlan(tenant, planId);
    return planCurrencies(plan, catalog.currencies);
  }

  async planCapabilities(tenant: Tenant, planId: Id): Promise<PlanCapabilityView[]> {
    const { plan, catalog } = await this.getPlan(tenant, planId);
    return planCapabilities(plan, catalog.product);
  }

  /**
   * A pricing table as a customer sees it: its plans on sale (`onSale`: an archived or inactive
   * plan leaves the table, the table stays), its public features in sort order, and the product
   * with its public features only (a private feature is checked, not shown: `shownOnTables`).
   */
  async getPricingTable(tenant: Tenant, tableId: Id): Promise<PricingTableView> {
    return this.read(async (r) => {
      const table = assertAccessible(await r.pricingTables.get(tableId), tenant, 'pricing table');
      const catalog = shownOnTables(await loadProductCatalog(r, tenant, table.productId));
      // The product is not sold at all: its table is refused, whether or not a plan is left on it.
      if (catalog.product.archivedAt) fail(ErrorCodes.PLAN_ARCHIVED, "the pricing table's product is archived");
      const plansById = new Map(catalog.plans.filter(onSale).map((p) => [p.id, p]));
      const featuresById = new Map(catalog.product.features.map((f) => [f.id, f]));
      return {
        table,
        catalog,
        plans: [...table.plans]
          .sort((a, b) => a.sortOrder - b.sortOrder)
          .map((p) => plansById.get(p.planId))
          .filter((p): p is Plan => !!p),
        features: [...table.features]
          .sort((a, b) => a.sortOrder - b.sortOrder)
          .map((f) => featuresById.get(f.featureId))
          .filter((f): f is Feature => !!f),
      };
    });
  }

  /** The product's pricing table: its public plans on sale, its public features. */
  async productPricingTable(tenant: Tenant, productId: Id): Promise<ProductCatalog> {
    const catalog = shownOnTables(await this.productCatalog(tenant, productId));
    if (catalog.product.archivedAt) fail(ErrorCodes.PRODUCT_ARCHIVED, 'the product is archived');
    return { ...catalog, plans: catalog.plans.filter((p) => onSale(p) && p.visibility === 'public') };
  }
}

/** A plan a pricing table offers: active (a catalog file's `active`) and not archived. */
const onSale = (p: Plan): boolean => p.active && !p.archivedAt;

/**
 * The catalog as pricing tables show it: the product's private features left out (the contract's
 * feature `visibility` is whether it shows on pricing tables), and with them the plans' values of them.
 */
const shownOnTables = (catalog: ProductCatalog): ProductCatalog => ({
  ...catalog,
  product: { ...catalog.product, features: catalog.product.features.filter((f) => f.visibility === 'public') },
});

export async function loadCurrencies(r: Repositories): Promise<Map<Id, Currency>> {
  return new Map((await r.currencies.list()).map((c) => [c.id, c]));
}

export async function loadProductCatalog(r: Repositories, tenant: Tenant, productId: Id): Promise<ProductCatalog> {
  const product = assertAccessible(await r.products.get(productId), tenant, 'product');
  const [plans, currencies, integration] = await Promise.all([
    r.plans.listByProduct(product.id),
    loadCurrencies(r),
    product.paymentIntegrationId ? r.paymentIntegrations.get(product.paymentIntegrationId) : Promise.resolve(undefined),
  ]);
  return { product, plans, currencies, integration };
}
