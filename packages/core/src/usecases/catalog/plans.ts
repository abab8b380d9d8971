import { ErrorCodes, fail, invalid } from '../../errors';
import type { Capability, Customer, Id, LineItem, Page, Plan, Tenant } from '../../model';
import { archivePlan, assertProductOpen } from '../../domain/catalog';
import { newPlan } from '../../domain/builders';
import { assertAccessible } from '../../domain/tenancy';
import { heldLineItemIds } from '../../domain/subscription';
import type { PlanFilterOptions, PlanListQuery, Repositories } from '../../ports';
import type { CoreDeps } from '../deps';
import type { PlanDetail, PlanDraft, PlanInput } from './inputs';
import { dateOf, PlanPricing, recurringBillingOf } from './plan-pricing';
import { intervalPricingProviders, NO_HOLDS, planHolds, refuseCurrencyRemoval, refuseIntervalChange } from './plan-holds';
import type { TierTagAdmin } from './tier-tags';
import { lockedPlan } from './locks';

/** An archived plan cannot be modified afterwards (published archivePlan): 400 naming the field that names it. */
const refuseArchivedPlan = (plan: Plan, property = 'id') => {
  if (plan.archivedAt)
    fail(ErrorCodes.PLAN_ARCHIVED, `plan ${plan.id} is archived: it cannot be modified`, [{ property, error: 'names an archived plan' }]);
};
/** An archived product is read-only, its plans with it (un-archive it with `isActive: true`). */
const refuseArchivedProduct = (product: { id: Id; archivedAt: Date | null }, property: string) =>
  assertProductOpen(product, property, `product ${product.id} is archived: it and its plans are read-only (un-archive the product first)`);

/** Plans of the catalog generation with their entitlements and pricing: create, save, change, archive, delete, list. */
export class PlanAdmin {
  private readonly pricing = new PlanPricing(() => this.deps.ids.newId());

  constructor(
    private readonly deps: Pick<CoreDeps, 'uow' | 'clock' | 'ids' | 'payments' | 'freeCheckout'>,
    private readonly tierTags: TierTagAdmin,
  ) {}

  private id = () => this.deps.ids.newId();

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

  async listPlans(tenant: Tenant, query: PlanListQuery): Promise<{ page: Page<Plan>; filterOptions: PlanFilterOptions }> {
    return this.deps.uow.run(async (r) => ({
      page: await r.plans.page(tenant, query),
      filterOptions: await r.plans.filterOptions(tenant),
    }));
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
      const { plan: current, product } = await lockedPlan(r, tenant, id);
      refuseArchivedPlan(current);
      if (product) refuseArchivedProduct(product, 'id');
      if (input.productId && input.productId !== current.productId) invalid('productId', 'a plan cannot move to another product');
      const updated: Plan = {
        ...current,
        name: input.name ?? current.name,
        active: input.isActive ?? current.active,
        trialDays: input.trialPeriodDays === undefined ? current.trialDays : input.trialPeriodDays,
        tierTag: await this.tierTags.tierTagOf(r, tenant, input, current.tierTag),
        updatedAt: this.deps.clock.now(),
      };
      await r.plans.save(updated);
      return updated;
    });
  }

  async archivePlan(tenant: Tenant, id: Id): Promise<Plan> {
    return this.deps.uow.run(async (r) => {
      const { plan, product } = await lockedPlan(r, tenant, id);
      // Not allowed once the parent product is archived (published archivePlan).
      if (product && !plan.archivedAt) refuseArchivedProduct(product, 'id');
      const archived = archivePlan(plan, this.deps.clock.now());
      await r.plans.save(archived);
      return archived;
    });
  }

  async deletePlan(tenant: Tenant, id: Id): Promise<void> {
    await this.deps.uow.run(async (r) => {
      await lockedPlan(r, tenant, id);
      if ((await r.subscriptions.countReferencing({ planId: id })) > 0)
        fail(ErrorCodes.PLAN_HAS_SUBSCRIPTIONS, 'the plan has subscriptions; archive it instead');
      await r.plans.delete(id);
    });
  }

  /**
   * Creates or replaces a plan with its entitlements (capabilities of the product, created by name
   * when new) and its line items, prices, currency options and tiers, in one transaction.
   */
  /** The decimal places of the tenant's meters with a scale among `slugs` (their terms and tier bounds are read in them). */
  private async meterScales(r: Repositories, tenant: Tenant, slugs: string[]): Promise<Map<string, number>> {
    const scales = new Map<string, number>();
    for (const slug of new Set(slugs)) {
      const scale = (await r.usage.findMeter(tenant, slug))?.scale;
      if (scale) scales.set(slug, scale);
    }
    return scales;
  }

  /**
   * A metered line item counts on the tenant's usage meter of its slug (the one `/api/meters`,
   * `/api/usage/*` and balances name), created with the line item's name when there is none. A
   * meter with decimal places keeps its scale on the line item: its terms and tiers are in it.
   */
  private async usageMeters(r: Repositories, tenant: Tenant, items: LineItem[]): Promise<LineItem[]> {
    const out: LineItem[] = [];
    for (const li of items) {
      if (!li.meter) {
        out.push(li);
        continue;
      }
      const found = await r.usage.findMeter(tenant, li.meter.slug);
      if (found) {
        const { id, slug, name, paymentMeterId, createdAt, updatedAt } = found;
        const scale = found.scale ? { scale: found.scale } : {};
        out.push({ ...li, meter: { id, slug, name, paymentMeterId, ...scale, createdAt, updatedAt } });
        continue;
      }
      await r.usage.saveMeter({ ...li.meter, ...tenant, unitLabel: li.unitLabel });
      out.push(li);
    }
    return out;
  }

  async savePlan(tenant: Tenant, draft: PlanDraft): Promise<{ plan: Plan; created: boolean }> {
    const now = this.deps.clock.now();
    return this.deps.uow.run(async (r) => {
      // `id` saves an existing plan of the caller; it never makes a plan with an id of its choosing.
      const found = draft.id ? await r.plans.get(draft.id) : undefined;
      if (draft.id && (!found || (found.organisationId === tenant.organisationId && found.isTest !== tenant.isTest)))
        fail(ErrorCodes.PLAN_NOT_FOUND, `plan ${draft.id} not found: leave id out to create a plan`, [
          { property: 'id', error: 'is not a plan of this organisation and mode' },
        ]);
      const seen = found ? assertAccessible(found, tenant, 'plan') : undefined;
      if (seen && draft.productId && seen.productId !== draft.productId) invalid('productId', 'a plan cannot move to another product');
      const productId = draft.productId ?? seen?.productId ?? (await this.onlyProduct(r, tenant));
      // The product's row lock, then the plan's (lockedPlan's order), read under them: a save never
      // writes over an archive committed meanwhile (the plan's or product's `archivedAt` is saved as read).
      const product = assertAccessible(await r.products.getForUpdate(productId), tenant, 'product');
      const existing = seen ? assertAccessible(await r.plans.getForUpdate(seen.id), tenant, 'plan') : undefined;
      if (existing) refuseArchivedPlan(existing);
      refuseArchivedProduct(product, draft.productId ? 'productId' : 'id');

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
        // A name given twice is granted once.
        if (!capabilityIds.includes(cap.id)) capabilityIds.push(cap.id);
      }
      if (capabilities !== product.capabilities) await r.products.save({ ...product, capabilities, updatedAt: now });

      const base = existing ?? newPlan(tenant, this.id(), { name: draft.name, productId: product.id }, now);
      const holds = existing ? await planHolds(r, existing.id, now, intervalPricingProviders(this.deps)) : NO_HOLDS;
      const referenced = new Set<Id>(holds.subscriptions.flatMap(heldLineItemIds));
      const priced = draft.lineItems
        ? this.pricing.lineItems(
            draft.lineItems,
            base.lineItems,
            referenced,
            now,
            await this.meterScales(r, tenant, this.pricing.meterSlugs(draft.lineItems, base.lineItems)),
          )
        : undefined;
      // The plan bills by its recurring prices' interval (checkout, renewals and license periods read
      // the plan's); a plan of one-off or metered-without-interval prices only keeps what it had.
      const billing = priced && recurringBillingOf(priced);
      const interval = billing?.interval ?? base.interval;
      const length = billing?.length ?? base.length;
      // Running subscriptions and open checkouts hold the plan's interval (a new interval is a new plan).
      if (billing && existing && (interval !== existing.interval || length !== existing.length))
        refuseIntervalChange(holds, existing, `${billing.at}.${interval !== existing.interval ? 'interval' : 'intervalCount'}`);
      const lineItems = priced ? await this.usageMeters(r, tenant, priced) : base.lineItems;
      const plan: Plan = {
        ...base,
        name: draft.name,
        active: draft.isActive ?? base.active,
        trialDays: draft.trialPeriodDays === undefined ? base.trialDays : draft.trialPeriodDays,
        tierTag: await this.tierTags.tierTagOf(r, tenant, draft, base.tierTag),
        archivedAt: dateOf('archivedAt', draft.archivedAt, base.archivedAt),
        capabilityIds: draft.entitlements ? capabilityIds : base.capabilityIds,
        interval,
        length,
        lineItems,
        updatedAt: now,
      };
      // Running subscriptions are billed in their currency: the plan keeps a price in it (its renewals would charge 0).
      if (existing && priced) await refuseCurrencyRemoval(r, existing, plan, holds.subscriptions, now, () => 'lineItems');
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
}
