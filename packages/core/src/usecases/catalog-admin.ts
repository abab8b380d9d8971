import { ErrorCodes, fail, invalid } from '../errors';
import type {
  Capability,
  CurrencyOption,
  Customer,
  Id,
  Interval,
  LineItem,
  Page,
  Plan,
  Price,
  Product,
  Subscription,
  Tenant,
  Tier,
  TierTag,
} from '../model';
import { archivePlan, archiveProduct } from '../domain/catalog';
import { newPlan, newProduct } from '../domain/builders';
import { assertAccessible } from '../domain/tenancy';
import type { ListQuery, PlanFilterOptions, PlanListQuery, Repositories } from '../ports';
import type { CoreDeps } from './deps';
import { DEFAULT_PAYMENT_INTEGRATION, ensurePaymentIntegration } from './integrations';

export interface ProductInput {
  name: string;
  description?: string;
}

export interface PlanInput {
  productId: Id;
  name: string;
  trialPeriodDays?: number | null;
  tierTagId?: Id | null;
  isActive?: boolean;
}

export interface TierDraft {
  upTo: string;
  flatAmount?: number | null;
  unitAmount: number;
}
export interface CurrencyOptionDraft {
  currency: string;
  unitAmount?: number | null;
  isDefault?: boolean;
  tiers?: TierDraft[];
}
export interface PriceDraft {
  interval?: Interval | null;
  intervalCount?: number | null;
  paymentPriceId?: string;
  currencyOptions: CurrencyOptionDraft[];
}
export interface LineItemDraft {
  name: string;
  slug?: string;
  nickname?: string;
  priceType: LineItem['priceType'];
  intervalType?: LineItem['intervalType'];
  billingScheme?: LineItem['billingScheme'];
  tiersMode?: LineItem['tiersMode'];
  minQuantity?: number;
  maxQuantity?: number;
  allowChangingQuantity?: boolean;
  unitLabel?: string | null;
  prices: PriceDraft[];
}

/** A plan with its entitlements and nested pricing, saved in one call (`POST /api/plans/save`). */
export interface PlanDraft extends PlanInput {
  id?: Id;
  entitlements?: string[];
  lineItems?: LineItemDraft[];
}

export interface PlanDetail {
  plan: Plan;
  product: Product;
  subscriptions: Subscription[];
  customers: Map<Id, Customer>;
}

const slugify = (s: string) =>
  s
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');

/** Use cases of the catalog generation: products and plans with their pricing. */
export class CatalogAdmin {
  constructor(private readonly deps: Pick<CoreDeps, 'uow' | 'clock' | 'ids'>) {}

  private id = () => this.deps.ids.newId();

  async listProducts(tenant: Tenant, query: ListQuery): Promise<Page<Product>> {
    return this.deps.uow.run((r) => r.products.page(tenant, query));
  }

  async getProduct(tenant: Tenant, id: Id): Promise<Product> {
    return this.deps.uow.run(async (r) => assertAccessible(await r.products.get(id), tenant, 'product'));
  }

  /** Plans of several products at once, for `expand=plans`. */
  async plansOf(tenant: Tenant, productIds: Id[]): Promise<Map<Id, Plan[]>> {
    return this.deps.uow.run(async (r) => {
      const out = new Map<Id, Plan[]>();
      for (const id of productIds)
        out.set(
          id,
          (await r.plans.listByProduct(id)).filter((p) => p.organisationId === tenant.organisationId),
        );
      return out;
    });
  }

  async createProduct(tenant: Tenant, input: ProductInput): Promise<Product> {
    const now = this.deps.clock.now();
    return this.deps.uow.run(async (r) => {
      const integration = await ensurePaymentIntegration(r, tenant, DEFAULT_PAYMENT_INTEGRATION, this.deps.ids, now);
      const product = newProduct(
        tenant,
        { id: this.id(), settingsId: this.id() },
        { name: input.name, description: input.description ?? '', paymentIntegrationId: integration.id },
        now,
      );
      await r.products.save(product);
      return product;
    });
  }

  async updateProduct(tenant: Tenant, id: Id, input: Partial<ProductInput>): Promise<Product> {
    return this.deps.uow.run(async (r) => {
      const current = assertAccessible(await r.products.get(id), tenant, 'product');
      const updated: Product = { ...current, ...definedOnly(input), updatedAt: this.deps.clock.now() };
      await r.products.save(updated);
      return updated;
    });
  }

  async archiveProduct(tenant: Tenant, id: Id): Promise<Product> {
    return this.deps.uow.run(async (r) => {
      const archived = archiveProduct(assertAccessible(await r.products.get(id), tenant, 'product'), this.deps.clock.now());
      await r.products.save(archived);
      return archived;
    });
  }

  /** Deletes a product no subscription references (archive it otherwise). */
  async deleteProduct(tenant: Tenant, id: Id): Promise<void> {
    await this.deps.uow.run(async (r) => {
      assertAccessible(await r.products.get(id), tenant, 'product');
      if ((await r.subscriptions.countReferencing({ productId: id })) > 0) {
        fail(ErrorCodes.PRODUCT_HAS_SUBSCRIPTIONS, 'the product has subscriptions; archive it instead');
      }
      await r.products.delete(id);
    });
  }

  async listPlans(tenant: Tenant, query: PlanListQuery): Promise<{ page: Page<Plan>; filterOptions: PlanFilterOptions }> {
    return this.deps.uow.run(async (r) => ({
      page: await r.plans.page(tenant, query),
      filterOptions: await r.plans.filterOptions(tenant),
    }));
  }

  async productsById(tenant: Tenant, ids: Id[]): Promise<Map<Id, Product>> {
    return this.deps.uow.run(async (r) => {
      const out = new Map<Id, Product>();
      for (const id of new Set(ids)) {
        const p = await r.products.get(id);
        if (p && p.organisationId === tenant.organisationId) out.set(id, p);
      }
      return out;
    });
  }

  async getPlan(tenant: Tenant, id: Id): Promise<PlanDetail> {
    return this.deps.uow.run(async (r) => {
      const plan = assertAccessible(await r.plans.get(id), tenant, 'plan');
      const product = (await r.products.get(plan.productId)) ?? fail(ErrorCodes.PRODUCT_NOT_FOUND, 'product not found');
      const subscriptions = await r.subscriptions.listByPlan(plan.id);
      const customers = new Map<Id, Customer>();
      for (const id of new Set(subscriptions.map((x) => x.customerId))) {
        const c = await r.customers.get(id);
        if (c) customers.set(id, c);
      }
      return { plan, product, subscriptions, customers };
    });
  }

  async createPlan(tenant: Tenant, input: PlanInput): Promise<Plan> {
    return (await this.savePlan(tenant, input)).plan;
  }

  async updatePlan(tenant: Tenant, id: Id, input: Partial<PlanInput>): Promise<Plan> {
    return this.deps.uow.run(async (r) => {
      const current = assertAccessible(await r.plans.get(id), tenant, 'plan');
      if (input.productId && input.productId !== current.productId) invalid('productId', 'a plan cannot move to another product');
      const updated: Plan = {
        ...current,
        name: input.name ?? current.name,
        active: input.isActive ?? current.active,
        trialDays: input.trialPeriodDays === undefined ? current.trialDays : input.trialPeriodDays,
        tierTag: input.tierTagId === undefined ? current.tierTag : await this.tierTag(r, tenant, input.tierTagId),
        updatedAt: this.deps.clock.now(),
      };
      await r.plans.save(updated);
      return updated;
    });
  }

  async archivePlan(tenant: Tenant, id: Id): Promise<Plan> {
    return this.deps.uow.run(async (r) => {
      const archived = archivePlan(assertAccessible(await r.plans.get(id), tenant, 'plan'), this.deps.clock.now());
      await r.plans.save(archived);
      return archived;
    });
  }

  async deletePlan(tenant: Tenant, id: Id): Promise<void> {
    await this.deps.uow.run(async (r) => {
      assertAccessible(await r.plans.get(id), tenant, 'plan');
      if ((await r.subscriptions.countReferencing({ planId: id })) > 0)
        fail(ErrorCodes.PLAN_HAS_SUBSCRIPTIONS, 'the plan has subscriptions; archive it instead');
      await r.plans.delete(id);
    });
  }

  /**
   * Creates or replaces a plan with its entitlements (capabilities of the product, created by name
   * when new) and its line items, prices, currency options and tiers, in one transaction.
   */
  async savePlan(tenant: Tenant, draft: PlanDraft): Promise<{ plan: Plan; created: boolean }> {
    const now = this.deps.clock.now();
    return this.deps.uow.run(async (r) => {
      const product = assertAccessible(await r.products.get(draft.productId), tenant, 'product');
      if (product.archivedAt) fail(ErrorCodes.PRODUCT_ARCHIVED, 'the product is archived');
      const existing = draft.id ? await r.plans.get(draft.id) : undefined;
      if (existing) assertAccessible(existing, tenant, 'plan');
      if (existing && existing.productId !== product.id) invalid('productId', 'a plan cannot move to another product');

      let capabilities = product.capabilities;
      const capabilityIds: Id[] = [];
      for (const name of draft.entitlements ?? []) {
        let cap = capabilities.find((c) => c.name === name);
        if (!cap) {
          cap = {
            id: this.id(),
            productId: product.id,
            name,
            description: '',
            status: 'ACTIVE',
            createdAt: now,
            updatedAt: now,
          } satisfies Capability;
          capabilities = [...capabilities, cap];
        }
        capabilityIds.push(cap.id);
      }
      if (capabilities !== product.capabilities) await r.products.save({ ...product, capabilities, updatedAt: now });

      const base = existing ?? newPlan(tenant, draft.id ?? this.id(), { name: draft.name, productId: product.id }, now);
      const plan: Plan = {
        ...base,
        name: draft.name,
        active: draft.isActive ?? base.active,
        trialDays: draft.trialPeriodDays === undefined ? base.trialDays : draft.trialPeriodDays,
        tierTag: draft.tierTagId === undefined ? base.tierTag : await this.tierTag(r, tenant, draft.tierTagId),
        capabilityIds: draft.entitlements ? capabilityIds : base.capabilityIds,
        lineItems: draft.lineItems ? draft.lineItems.map((li) => this.lineItem(li, now)) : base.lineItems,
        updatedAt: now,
      };
      await r.plans.save(plan);
      return { plan, created: !existing };
    });
  }

  private async tierTag(r: Repositories, tenant: Tenant, id: Id | null): Promise<TierTag | null> {
    if (id === null) return null;
    const tag = await r.plans.getTierTag(id);
    if (!tag || tag.organisationId !== tenant.organisationId) return invalid('tierTagId', 'unknown tier tag');
    return tag;
  }

  private lineItem(d: LineItemDraft, now: Date): LineItem {
    const min = d.minQuantity ?? 1;
    const max = d.maxQuantity ?? 1;
    if (!Number.isInteger(min) || !Number.isInteger(max) || min < 0 || max < min)
      invalid('lineItems.minQuantity', 'minQuantity and maxQuantity must be integers with 0 <= min <= max');
    const billingScheme = d.billingScheme ?? (d.priceType === 'flat_rate' ? 'flat_rate' : 'per_unit');
    const tiersMode = d.tiersMode ?? null;
    if ((billingScheme === 'tiered') !== (tiersMode !== null))
      invalid('lineItems.tiersMode', 'tiersMode is required exactly when billingScheme is tiered');
    const id = this.id();
    return {
      id,
      name: d.name,
      slug: d.slug ?? slugify(d.name),
      paymentProductId: `prod_${id.replace(/-/g, '').slice(0, 14)}`,
      nickname: d.nickname ?? d.name,
      priceType: d.priceType,
      intervalType: d.intervalType ?? 'recurring',
      billingScheme,
      tiersMode,
      minQuantity: min,
      maxQuantity: max,
      isActive: true,
      allowChangingQuantity: d.allowChangingQuantity ?? false,
      unitLabel: d.unitLabel ?? null,
      meter:
        d.priceType === 'metered'
          ? { id: this.id(), slug: slugify(d.name), name: d.name, paymentMeterId: `mtr_${id.slice(0, 8)}`, createdAt: now, updatedAt: now }
          : null,
      prices: d.prices.map((p) => this.price(p, tiersMode !== null, now)),
      archivedAt: null,
      createdAt: now,
      updatedAt: now,
    };
  }

  private price(d: PriceDraft, tiered: boolean, now: Date): Price {
    if (d.currencyOptions.length === 0) invalid('prices.currencyOptions', 'at least one currency option is required');
    const defaults = d.currencyOptions.filter((o) => o.isDefault).length;
    if (defaults > 1) invalid('prices.currencyOptions', 'at most one currency option is the default');
    const id = this.id();
    return {
      id,
      paymentPriceId: d.paymentPriceId ?? `price_${id.replace(/-/g, '').slice(0, 14)}`,
      interval: d.interval ?? null,
      intervalCount: d.interval ? (d.intervalCount ?? 1) : null,
      currencyOptions: d.currencyOptions.map((o, i) => this.currencyOption(o, defaults === 0 ? i === 0 : !!o.isDefault, tiered, now)),
      archivedAt: null,
      createdAt: now,
      updatedAt: now,
    };
  }

  private currencyOption(d: CurrencyOptionDraft, isDefault: boolean, tiered: boolean, now: Date): CurrencyOption {
    if (!/^[A-Za-z]{3}$/.test(d.currency)) invalid('currencyOptions.currency', 'must be a three-letter currency code');
    if (tiered && !(d.tiers && d.tiers.length)) invalid('currencyOptions.tiers', 'a tiered price needs tiers');
    return {
      id: this.id(),
      currency: d.currency.toLowerCase(),
      unitAmount: d.unitAmount ?? null,
      isDefault,
      tiers: (d.tiers ?? []).map((t): Tier => ({
        id: this.id(),
        upTo: t.upTo,
        flatAmount: t.flatAmount ?? null,
        unitAmount: t.unitAmount,
        createdAt: now,
        updatedAt: now,
      })),
      createdAt: now,
      updatedAt: now,
    };
  }
}

function definedOnly<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
