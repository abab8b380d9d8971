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
  ProductSettings,
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
  /** false: archived (not for sale); true: for sale again. */
  isActive?: boolean;
}

/** The product's checkout settings a vendor may set (catalog `PUT /api/products/:id`). */
export type ProductSettingsInput = Partial<Omit<ProductSettings, 'id' | 'createdAt' | 'updatedAt'>>;

export interface ProductUpdate extends Partial<ProductInput> {
  settings?: ProductSettingsInput;
}

export interface PlanInput {
  /** Optional when the organisation and mode have one product (it is then that one), or when saving an existing plan. */
  productId?: Id;
  name: string;
  trialPeriodDays?: number | null;
  tierTagId?: Id | null;
  /** A tier tag by name (created when new); null removes the plan's tag. */
  tierTag?: string | null;
  isActive?: boolean;
}

export interface TierDraft {
  id?: Id;
  upTo: string;
  flatAmount?: number | null;
  unitAmount: number;
}
export interface CurrencyOptionDraft {
  /** Matched by currency within its price when absent. */
  id?: Id;
  currency: string;
  unitAmount?: number | null;
  isDefault?: boolean;
  tiers?: TierDraft[];
}
export interface PriceDraft {
  id?: Id;
  /** The currency whose option is the default (else the option marked `isDefault`, else the first). */
  defaultCurrency?: string;
  archivedAt?: string | null;
  interval?: Interval | null;
  intervalCount?: number | null;
  paymentPriceId?: string;
  currencyOptions: CurrencyOptionDraft[];
}
export interface LineItemDraft {
  id?: Id;
  isActive?: boolean;
  /** The meter's slug of a metered line item (default: from the name). */
  meterSlug?: string | null;
  archivedAt?: string | null;
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
  /** A time: the plan is archived (then); null: not archived. */
  archivedAt?: string | null;
  entitlements?: string[];
  lineItems?: LineItemDraft[];
}

export interface PlanDetail {
  plan: Plan;
  product: Product;
  subscriptions: Subscription[];
  customers: Map<Id, Customer>;
}

/** A slug of the real catalog API's form (`^[a-z0-9_]+$`). */
const slugify = (s: string) =>
  s
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '') || 'item';

const dateOf = (property: string, raw: string | null | undefined, fallback: Date | null): Date | null => {
  if (raw === undefined) return fallback;
  if (raw === null) return null;
  const d = new Date(raw);
  return Number.isNaN(d.getTime()) ? invalid(property, 'must be a date-time') : d;
};

const httpUrl = (property: string, raw: string | null | undefined): string | null | undefined => {
  if (raw === undefined || raw === null) return raw;
  try {
    const u = new URL(raw);
    if (u.protocol === 'http:' || u.protocol === 'https:') return raw;
  } catch {
    // fall through
  }
  return invalid(property, 'must be an absolute http or https URL');
};

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
      const saved = input.isActive === false ? archiveProduct(product, now) : product;
      await r.products.save(saved);
      return saved;
    });
  }

  async updateProduct(tenant: Tenant, id: Id, input: ProductUpdate): Promise<Product> {
    const { settings, isActive, ...fields } = input;
    const checked: ProductSettingsInput | undefined = settings && {
      ...settings,
      successUrl: httpUrl('settings.successUrl', settings.successUrl),
      cancelUrl: httpUrl('settings.cancelUrl', settings.cancelUrl),
    };
    return this.deps.uow.run(async (r) => {
      const current = assertAccessible(await r.products.get(id), tenant, 'product');
      const now = this.deps.clock.now();
      let updated: Product = { ...current, ...definedOnly(fields), updatedAt: now };
      if (checked) updated = { ...updated, settings: { ...current.settings, ...definedOnly(checked), updatedAt: now } };
      if (isActive === false && !current.archivedAt) updated = archiveProduct(updated, now);
      if (isActive === true && current.archivedAt) updated = { ...updated, archivedAt: null };
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
        tierTag: await this.tierTagOf(r, tenant, input, current.tierTag),
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
      const existing = draft.id ? await r.plans.get(draft.id) : undefined;
      if (existing) assertAccessible(existing, tenant, 'plan');
      const productId = draft.productId ?? existing?.productId ?? (await this.onlyProduct(r, tenant));
      const product = assertAccessible(await r.products.get(productId), tenant, 'product');
      if (product.archivedAt) fail(ErrorCodes.PRODUCT_ARCHIVED, 'the product is archived');
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
      const referenced = existing ? new Set((await r.subscriptions.listByPlan(existing.id)).flatMap((x) => x.lineItemIds)) : new Set<Id>();
      const plan: Plan = {
        ...base,
        name: draft.name,
        active: draft.isActive ?? base.active,
        trialDays: draft.trialPeriodDays === undefined ? base.trialDays : draft.trialPeriodDays,
        tierTag: await this.tierTagOf(r, tenant, draft, base.tierTag),
        archivedAt: dateOf('archivedAt', draft.archivedAt, base.archivedAt),
        capabilityIds: draft.entitlements ? capabilityIds : base.capabilityIds,
        lineItems: draft.lineItems ? this.lineItems(draft.lineItems, base.lineItems, referenced, now) : base.lineItems,
        updatedAt: now,
      };
      await r.plans.save(plan);
      return { plan, created: !existing };
    });
  }

  /** The tenant's only product, for a plan created without `productId`. */
  private async onlyProduct(r: Repositories, tenant: Tenant): Promise<Id> {
    const products = (await r.products.list(tenant)).filter((p) => !p.archivedAt);
    if (products.length !== 1)
      invalid('productId', `is required: this organisation has ${products.length} products in this mode, name the plan's one`);
    return products[0].id;
  }

  /**
   * The line items of a save, merged with the plan's current ones: a given id updates that item in
   * place (its prices and currency options likewise), an item without id is new, and an item left
   * out is archived when a subscription references it (deleted otherwise).
   */
  private lineItems(drafts: LineItemDraft[], current: LineItem[], referenced: Set<Id>, now: Date): LineItem[] {
    const byId = new Map(current.map((li) => [li.id, li]));
    const kept = new Set<Id>();
    const saved = drafts.map((d, i) => {
      const before = d.id ? (byId.get(d.id) ?? invalid(`lineItems[${i}].id`, 'is not a line item of this plan')) : undefined;
      if (before) {
        if (kept.has(before.id)) invalid(`lineItems[${i}].id`, 'is given twice');
        kept.add(before.id);
      }
      return this.lineItem(d, before, !!before && referenced.has(before.id), `lineItems[${i}]`, now);
    });
    const dropped = current
      .filter((li) => !kept.has(li.id) && referenced.has(li.id))
      .map((li) => (li.archivedAt ? li : { ...li, isActive: false, archivedAt: now, updatedAt: now }));
    return [...saved, ...dropped];
  }

  private async tierTag(r: Repositories, tenant: Tenant, id: Id | null): Promise<TierTag | null> {
    if (id === null) return null;
    const tag = await r.plans.getTierTag(id);
    if (!tag || tag.organisationId !== tenant.organisationId) return invalid('tierTagId', 'unknown tier tag');
    return tag;
  }

  /** The tag a plan input names: by `tierTag` (a name, created when new) or `tierTagId`; `current` when neither is given. */
  private async tierTagOf(
    r: Repositories,
    tenant: Tenant,
    input: Pick<PlanInput, 'tierTag' | 'tierTagId'>,
    current: TierTag | null,
  ): Promise<TierTag | null> {
    const byId = input.tierTagId === undefined ? undefined : await this.tierTag(r, tenant, input.tierTagId);
    if (input.tierTag === undefined) return byId === undefined ? current : byId;
    const byName = input.tierTag === null ? null : await this.ensureTierTag(r, tenant, input.tierTag);
    if (byId !== undefined && byId?.id !== byName?.id) invalid('tierTag', 'names another tag than tierTagId');
    return byName;
  }

  private async ensureTierTag(r: Repositories, tenant: Tenant, raw: string): Promise<TierTag> {
    const name = raw.trim();
    if (!name) invalid('tierTag', 'must not be empty');
    const found = await r.plans.findTierTag(tenant.organisationId, name);
    if (found) return found;
    const now = this.deps.clock.now();
    const tag: TierTag = { id: this.id(), organisationId: tenant.organisationId, name, createdAt: now, updatedAt: now };
    await r.plans.saveTierTag(tag);
    return tag;
  }

  /** The organisation's tier tags (shared by its live and test modes, as plans name them), oldest first. */
  async listTierTags(tenant: Tenant, query: { limit: number; after?: string; before?: string }): Promise<Page<TierTag>> {
    return this.deps.uow.read((r) => r.plans.pageTierTags(tenant.organisationId, query));
  }

  /** A new tier tag; CONFLICT when the organisation has one of this name. */
  async createTierTag(tenant: Tenant, name: string): Promise<TierTag> {
    return this.deps.uow.run(async (r) => {
      if (await r.plans.findTierTag(tenant.organisationId, name.trim()))
        fail(ErrorCodes.CONFLICT, `a tier tag named ${name.trim()} exists`);
      return this.ensureTierTag(r, tenant, name);
    });
  }

  private lineItem(d: LineItemDraft, before: LineItem | undefined, isReferenced: boolean, at: string, now: Date): LineItem {
    const min = d.minQuantity ?? before?.minQuantity ?? 1;
    const max = d.maxQuantity ?? before?.maxQuantity ?? 1;
    if (!Number.isInteger(min) || !Number.isInteger(max) || min < 0 || max < min)
      invalid(`${at}.minQuantity`, 'minQuantity and maxQuantity must be integers with 0 <= min <= max');
    const billingScheme = d.billingScheme ?? (d.priceType === 'flat_rate' ? 'flat_rate' : 'per_unit');
    // The real catalog API sends a tiers mode with every line item: it means something only when tiered.
    const tiersMode =
      billingScheme === 'tiered' ? (d.tiersMode ?? invalid(`${at}.tiersMode`, 'is required when billingScheme is tiered')) : null;
    const id = before?.id ?? this.id();
    const slug = d.slug ?? before?.slug ?? slugify(d.name);
    const meterSlug = d.meterSlug ?? before?.meter?.slug ?? slugify(d.name);
    const prices = new Map((before?.prices ?? []).map((p) => [p.id, p]));
    const keptPrices = new Set<Id>();
    const saved = d.prices.map((p, i) => {
      const old = p.id ? (prices.get(p.id) ?? invalid(`${at}.prices[${i}].id`, 'is not a price of this line item')) : undefined;
      if (old) keptPrices.add(old.id);
      return this.price(p, old, tiersMode !== null, `${at}.prices[${i}]`, now);
    });
    // Prices left out stay, archived, while a subscription references the line item; else they go.
    const droppedPrices = [...prices.values()]
      .filter((p) => !keptPrices.has(p.id))
      .map((p) => (p.archivedAt ? p : { ...p, archivedAt: now, updatedAt: now }));
    return {
      id,
      name: d.name,
      slug,
      paymentProductId: before?.paymentProductId ?? `prod_${id.replace(/-/g, '').slice(0, 14)}`,
      nickname: d.nickname ?? before?.nickname ?? d.name,
      priceType: d.priceType,
      intervalType: d.intervalType ?? before?.intervalType ?? 'recurring',
      billingScheme,
      tiersMode,
      minQuantity: min,
      maxQuantity: max,
      isActive: d.isActive ?? before?.isActive ?? true,
      allowChangingQuantity: d.allowChangingQuantity ?? before?.allowChangingQuantity ?? false,
      unitLabel: d.unitLabel === undefined ? (before?.unitLabel ?? null) : d.unitLabel,
      meter:
        d.priceType === 'metered' && d.meterSlug !== null
          ? {
              id: before?.meter?.id ?? this.id(),
              slug: meterSlug,
              name: d.name,
              paymentMeterId: before?.meter?.paymentMeterId ?? `mtr_${id.slice(0, 8)}`,
              createdAt: before?.meter?.createdAt ?? now,
              updatedAt: now,
            }
          : null,
      prices: [...saved, ...(isReferenced ? droppedPrices : [])],
      archivedAt: dateOf(`${at}.archivedAt`, d.archivedAt, before?.archivedAt ?? null),
      createdAt: before?.createdAt ?? now,
      updatedAt: now,
    };
  }

  private price(d: PriceDraft, before: Price | undefined, tiered: boolean, at: string, now: Date): Price {
    if (d.currencyOptions.length === 0) invalid(`${at}.currencyOptions`, 'at least one currency option is required');
    const currencies = d.currencyOptions.map((o) => o.currency.toLowerCase());
    if (new Set(currencies).size !== currencies.length) invalid(`${at}.currencyOptions`, 'names a currency twice');
    let defaultIndex: number;
    if (d.defaultCurrency !== undefined) {
      defaultIndex = currencies.indexOf(d.defaultCurrency.toLowerCase());
      if (defaultIndex < 0) invalid(`${at}.defaultCurrency`, 'is not one of the currency options');
    } else {
      const marked = d.currencyOptions.flatMap((o, i) => (o.isDefault ? [i] : []));
      if (marked.length > 1) invalid(`${at}.currencyOptions`, 'at most one currency option is the default');
      defaultIndex = marked[0] ?? 0;
    }
    const id = before?.id ?? this.id();
    const oldOptions = before?.currencyOptions ?? [];
    return {
      id,
      paymentPriceId: d.paymentPriceId ?? before?.paymentPriceId ?? `price_${id.replace(/-/g, '').slice(0, 14)}`,
      interval: d.interval ?? null,
      intervalCount: d.interval ? (d.intervalCount ?? 1) : null,
      currencyOptions: d.currencyOptions.map((o, i) => {
        const old = o.id
          ? (oldOptions.find((x) => x.id === o.id) ?? invalid(`${at}.currencyOptions[${i}].id`, 'is not a currency option of this price'))
          : oldOptions.find((x) => x.currency === o.currency.toLowerCase());
        return this.currencyOption(o, old, i === defaultIndex, tiered, `${at}.currencyOptions[${i}]`, now);
      }),
      archivedAt: dateOf(`${at}.archivedAt`, d.archivedAt, before?.archivedAt ?? null),
      createdAt: before?.createdAt ?? now,
      updatedAt: now,
    };
  }

  private currencyOption(
    d: CurrencyOptionDraft,
    before: CurrencyOption | undefined,
    isDefault: boolean,
    tiered: boolean,
    at: string,
    now: Date,
  ): CurrencyOption {
    if (!/^[A-Za-z]{3}$/.test(d.currency)) invalid(`${at}.currency`, 'must be a three-letter currency code');
    if (tiered && !(d.tiers && d.tiers.length)) invalid(`${at}.tiers`, 'a tiered price needs tiers');
    const oldTiers = new Map((before?.tiers ?? []).map((t) => [t.id, t]));
    return {
      id: before?.id ?? this.id(),
      currency: d.currency.toLowerCase(),
      unitAmount: d.unitAmount ?? null,
      isDefault,
      // Tiers mean something only for a tiered price.
      tiers: (tiered ? (d.tiers ?? []) : []).map((t, i): Tier => {
        const old = t.id ? (oldTiers.get(t.id) ?? invalid(`${at}.tiers[${i}].id`, 'is not a tier of this currency option')) : undefined;
        return {
          id: old?.id ?? this.id(),
          upTo: t.upTo,
          flatAmount: t.flatAmount ?? null,
          unitAmount: t.unitAmount,
          createdAt: old?.createdAt ?? now,
          updatedAt: now,
        };
      }),
      createdAt: before?.createdAt ?? now,
      updatedAt: now,
    };
  }
}

function definedOnly<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
