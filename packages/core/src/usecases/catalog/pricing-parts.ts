import { ErrorCodes, fail } from '../../errors';
import type { CurrencyOption, Id, LineItem, Page, Plan, Price, Product, Tenant, Tier } from '../../model';
import {
  archiveLineItem,
  archivePrice,
  deleteLineItem,
  deletePrice,
  updateLineItem,
  type LineItemChange,
} from '../../domain/pricing-parts';
import { assertAccessible } from '../../domain/tenancy';
import { heldLineItemIds } from '../../domain/subscription';
import { intervalPricingProviders, planHolds, rebilledAfterPartWrite, refuseCurrencyRemoval } from './plan-holds';
import { pageOf } from '../../support/pagination';
import type { Repositories } from '../../ports';
import type { CoreDeps } from '../deps';
import { lockedPlan } from './locks';

/** Where a pricing part sits: its plan (which carries the tenancy) and its parents' ids. */
export interface Placed<T> {
  item: T;
  plan: Plan;
  lineItemId: Id;
  priceId: Id;
  currencyOptionId: Id;
}

type PageQuery = { limit: number; after?: string; before?: string };
type Kind = 'lineItem' | 'price' | 'currencyOption' | 'tier';
type PartOf<K extends Kind> = K extends 'lineItem'
  ? LineItem
  : K extends 'price'
    ? Price
    : K extends 'currencyOption'
      ? CurrencyOption
      : Tier;

const WHAT: Record<Kind, string> = { lineItem: 'line item', price: 'price', currencyOption: 'currency option', tier: 'tier' };

/** Every part of a plan's pricing, placed, in tree order. */
function partsOf(plan: Plan) {
  const out: { lineItem: Placed<LineItem>[]; price: Placed<Price>[]; currencyOption: Placed<CurrencyOption>[]; tier: Placed<Tier>[] } = {
    lineItem: [],
    price: [],
    currencyOption: [],
    tier: [],
  };
  for (const li of plan.lineItems) {
    out.lineItem.push({ item: li, plan, lineItemId: li.id, priceId: '', currencyOptionId: '' });
    for (const p of li.prices) {
      out.price.push({ item: p, plan, lineItemId: li.id, priceId: p.id, currencyOptionId: '' });
      for (const o of p.currencyOptions) {
        out.currencyOption.push({ item: o, plan, lineItemId: li.id, priceId: p.id, currencyOptionId: o.id });
        for (const t of o.tiers) out.tier.push({ item: t, plan, lineItemId: li.id, priceId: p.id, currencyOptionId: o.id });
      }
    }
  }
  return out;
}

/**
 * A plan's line items, prices, currency options and tiers as resources of their own (the published
 * catalog API): read through their plans (a tenant's catalog is read whole: catalogs are small,
 * and a part's tenancy is its plan's), changed by pure rules and saved with their plan.
 */
export class PricingParts {
  constructor(private readonly deps: Pick<CoreDeps, 'uow' | 'clock' | 'payments' | 'freeCheckout'>) {}

  private async plansOf(r: Repositories, tenant: Tenant, planId?: Id): Promise<Plan[]> {
    if (planId) return [assertAccessible(await r.plans.get(planId), tenant, 'plan')];
    const plans: Plan[] = [];
    for (const product of await r.products.list(tenant, { includeArchived: true }))
      plans.push(...(await r.plans.listByProduct(product.id)));
    return plans.filter((p) => p.organisationId === tenant.organisationId && p.isTest === tenant.isTest);
  }

  /** A page of the tenant's parts of this kind (of one plan, or matching `search` by name or slug, when asked), oldest first. */
  async list<K extends Kind>(
    tenant: Tenant,
    kind: K,
    query: PageQuery & { planId?: Id; priceId?: Id; search?: string },
  ): Promise<Page<Placed<PartOf<K>>>> {
    return this.deps.uow.read(async (r) => {
      const placed = (await this.plansOf(r, tenant, query.planId)).flatMap((p) => partsOf(p)[kind] as Placed<PartOf<K>>[]);
      const needle = query.search?.toLowerCase();
      const kept = placed.filter(
        (x) =>
          (!query.priceId || x.priceId === query.priceId) &&
          (!needle ||
            [(x.item as Partial<LineItem>).name, (x.item as Partial<LineItem>).slug].some((v) => v?.toLowerCase().includes(needle))),
      );
      const page = pageOf(
        kept.map((x) => ({ ...x, id: x.item.id, createdAt: x.item.createdAt })),
        query,
      );
      return { ...page, items: page.items.map(({ id: _id, createdAt: _at, ...x }) => x) };
    });
  }

  /** The part in its plan: the plan decides who may see it (another organisation's: as any record of it). */
  private async find<K extends Kind>(
    r: Repositories,
    tenant: Tenant,
    kind: K,
    id: Id,
    what: string,
    locked?: Plan,
  ): Promise<Placed<PartOf<K>>> {
    const planId = locked ? locked.id : await r.plans.planOfPart(id);
    const plan = locked ?? assertAccessible(planId ? await r.plans.get(planId) : undefined, tenant, what);
    const found = (partsOf(plan)[kind] as Placed<PartOf<K>>[]).find((x) => x.item.id === id);
    return found ?? fail(ErrorCodes.NOT_FOUND, `${what} not found`);
  }

  /** One of the tenant's parts. */
  async get<K extends Kind>(tenant: Tenant, kind: K, id: Id): Promise<Placed<PartOf<K>>> {
    return this.deps.uow.read((r) => this.find(r, tenant, kind, id, WHAT[kind]));
  }

  /**
   * Applies a write to the part's plan and saves it, in one transaction: the plan is billed again by
   * its recurring prices as a save bills it (`rebilledAfterPartWrite`; `field` names what can change
   * the interval: a line item's `intervalType`).
   */
  private async change(
    tenant: Tenant,
    kind: 'lineItem' | 'price',
    id: Id,
    apply: (x: Placed<LineItem | Price>, product: Product, sold: Set<Id>, now: Date) => Plan,
    field?: string,
  ) {
    return this.deps.uow.run(async (r) => {
      // The plan and its product under their row locks (lockedPlan): the plan is saved as read, so a
      // write here never undoes an archive committed meanwhile, nor writes into a plan archived meanwhile.
      const planId = (await r.plans.planOfPart(id)) ?? fail(ErrorCodes.NOT_FOUND, `${WHAT[kind]} not found`);
      const locked = await lockedPlan(r, tenant, planId, WHAT[kind]);
      const placed = await this.find(r, tenant, kind, id, WHAT[kind], locked.plan);
      const product = locked.product ?? fail(ErrorCodes.PRODUCT_NOT_FOUND, 'product not found');
      const now = this.deps.clock.now();
      const holds = await planHolds(r, placed.plan.id, now, intervalPricingProviders(this.deps));
      const sold = new Set(holds.subscriptions.flatMap(heldLineItemIds));
      const next = rebilledAfterPartWrite(placed.plan, apply(placed, product, sold, now), holds, field);
      // Nor may it take away a currency running subscriptions are billed in (their renewals would charge 0).
      await refuseCurrencyRemoval(r, placed.plan, next, holds.subscriptions, now);
      await r.plans.save(next);
      return next;
    });
  }

  async updateLineItem(tenant: Tenant, id: Id, change: LineItemChange): Promise<Placed<LineItem>> {
    const plan = await this.change(
      tenant,
      'lineItem',
      id,
      (x, product, _sold, now) => updateLineItem(x.plan, product, id, change, now),
      'intervalType',
    );
    return { item: plan.lineItems.find((li) => li.id === id) as LineItem, plan, lineItemId: id, priceId: '', currencyOptionId: '' };
  }

  async archiveLineItem(tenant: Tenant, id: Id): Promise<void> {
    await this.change(tenant, 'lineItem', id, (x, product, _sold, now) => archiveLineItem(x.plan, product, id, now));
  }

  async deleteLineItem(tenant: Tenant, id: Id): Promise<void> {
    await this.change(tenant, 'lineItem', id, (x, product, sold, now) => deleteLineItem(x.plan, product, id, sold, now));
  }

  async archivePrice(tenant: Tenant, id: Id): Promise<void> {
    await this.change(tenant, 'price', id, (x, product, _sold, now) => archivePrice(x.plan, product, x.lineItemId, id, now));
  }

  async deletePrice(tenant: Tenant, id: Id): Promise<void> {
    await this.change(tenant, 'price', id, (x, product, sold, now) => deletePrice(x.plan, product, x.lineItemId, id, sold, now));
  }
}
