import { ErrorCodes, fail, invalid, isDomainError, outageAfter } from '../../errors';
import { assertPlanSellable, isPerSeat, minimumSeats } from '../../domain/catalog';
import type { Customer, Id, LineItem, Page, Plan, Subscription, SubscriptionLineItem, SubscriptionStatus, Tenant } from '../../model';
import { effectiveStatus, heldPlanIds } from '../../domain/subscription';
import { assertAccessible } from '../../domain/tenancy';
import { assertCheckableGranteeId } from '../../domain/grantee-ids';
import type { Repositories } from '../../ports';
import type { CoreDeps } from '../deps';
import type { SubscriptionAdmin } from './admin';
import type { SubscriptionLifecycle, SubscriptionView } from './lifecycle';
import { loadOwned } from './shared';
import { pageInOrder } from '../../support/pagination';
import { isUuid } from '../../support/text';

/**
 * One plan a subscription holds, as the catalog API's subscription plan: the first has the
 * subscription's id, an added one its own (docs/decisions.md, "Subscriptions of several plans").
 */
export interface SubscriptionPlanPart {
  id: Id;
  planId: Id;
  plan: Plan | undefined;
  seats: number;
  lineItemIds: Id[];
  createdAt: Date;
  updatedAt: Date;
}

/** A subscription as the catalog API shows it: with its owner (the paying customer), its first plan and every plan it holds. */
export interface SubscriptionRecord {
  /** As a reader must see it now (a due scheduled cancellation shows as CANCELED). */
  subscription: Subscription;
  customer: Customer | undefined;
  /** Its first plan (what legacy, v1, v2 and v3 show). */
  plan: Plan | undefined;
  /** Every plan it holds, the first first. */
  plans: SubscriptionPlanPart[];
}

/** The filters of the catalog's subscription list, as typed values (the edge parsed them). */
export interface SubscriptionFilter {
  limit: number;
  after?: string;
  before?: string;
  /** The owner's value (the member who pays). */
  owner?: string;
  id?: Id;
  productIds?: Id[];
  planIds?: Id[];
  statuses?: SubscriptionStatus[];
  /** Oldest first (the default) or newest first; the cursors lead on in this order. */
  sort?: 'asc' | 'desc';
  /** Part of the owner's value or e-mail (any case), or a subscription's whole id. */
  search?: string;
  /** Subscriptions to a plan with this price (of one of its line items). */
  priceId?: Id;
  /** Subscriptions to a plan with a price the payment provider knows by this id. */
  paymentPriceId?: string;
}

export interface ServiceOnlyInput {
  plans: { planId: Id; metadata?: Record<string, { quantity: number }> }[];
  owner: string;
  grantee?: string;
  interval: string;
  intervalCount: number;
  cancelAtPeriodEnd?: boolean;
  /** Ends the first period here (must lie in the future). */
  expiryDate?: Date;
}

/** Both filters at once (absent: no filter). */
const intersect = (a: Id[] | undefined, b: Id[]): Id[] => (a === undefined ? b : a.filter((x) => b.includes(x)));

export type BatchAction = 'cancel' | 'enable-auto-renew' | 'disable-auto-renew' | 'delete';

export interface BatchResult {
  total: number;
  succeeded: number;
  failed: number;
  skipped: number;
  results: { id: Id; status: 'succeeded' | 'failed' | 'skipped'; reason?: string }[];
}

/**
 * The catalog API's subscriptions: a filtered, paged list, a read with owner and plan, auto-renew
 * (a scheduled cancellation and its reversal), deletion in test mode and actions in batches. The
 * rules of each change are the lifecycle's; this module finds, checks tenancy and reports.
 */
export class SubscriptionDirectory {
  constructor(
    private readonly deps: Pick<CoreDeps, 'uow' | 'clock' | 'payments'>,
    private readonly lifecycle: SubscriptionLifecycle,
    private readonly admin: SubscriptionAdmin,
  ) {}

  /**
   * A subscription without payment (published `createSalableOnlySubscription`): the owner (a
   * customer, made when new) holds the plan, `grantee` gets the first seat; it renews by itself
   * with nothing to bill (the `none` provider) until canceled or `expiryDate`. Several plans make
   * one subscription holding each (the first first; "Subscriptions of several plans"); each plan's
   * interval must be the one asked. The rule itself is `SubscriptionAdmin.create`'s.
   */
  async createServiceOnly(tenant: Tenant, input: ServiceOnlyInput): Promise<SubscriptionView> {
    if (input.plans.length === 0) invalid('plans', 'must hold at least one plan');
    if (input.grantee !== undefined) assertCheckableGranteeId('grantee', input.grantee);
    const plans = await this.deps.uow.read(async (r) => {
      const out: Plan[] = [];
      for (const [i, { planId }] of input.plans.entries()) {
        if (!isUuid(planId)) fail(ErrorCodes.PLAN_NOT_FOUND, 'plan not found');
        const p = assertAccessible(await r.plans.get(planId), tenant, 'plan');
        const product = assertAccessible(await r.products.get(p.productId), tenant, 'product');
        assertPlanSellable(p, product);
        if (out.some((x) => x.id === p.id)) invalid(`plans[${i}].planId`, 'is named twice: a subscription holds a plan once');
        if (i > 0 && p.usageBased) invalid(`plans[${i}].planId`, 'a usage-based plan is a subscription of its own');
        out.push(p);
      }
      return out;
    });
    for (const plan of plans)
      if (input.interval !== plan.interval || input.intervalCount !== plan.length)
        invalid('interval', `must be the plans': ${plan.displayName} is billed every ${plan.length} ${plan.interval}(s)`);
    const quantities = plans.map((plan, i) => {
      const asked = Object.values(input.plans[i].metadata ?? {}).map((m) => m.quantity);
      const quantity = isPerSeat(plan) ? Math.max(minimumSeats(plan), ...asked) : 1;
      if (!Number.isSafeInteger(quantity)) invalid(`plans[${i}].metadata`, 'a quantity must be a whole number');
      return quantity;
    });
    return this.admin.create(tenant, {
      planId: plans[0].id,
      owner: input.owner,
      granteeId: input.grantee ?? null,
      quantity: quantities[0],
      expiryDate: input.expiryDate,
      cancelAtPeriodEnd: input.cancelAtPeriodEnd,
      extraItems: plans
        .slice(1)
        .map((p, i) => ({ planId: p.id, quantity: quantities[i + 1], granteeId: input.grantee ?? null, groupId: null })),
    });
  }

  async list(tenant: Tenant, f: SubscriptionFilter): Promise<Page<SubscriptionRecord>> {
    const none: Page<SubscriptionRecord> = { items: [], hasMore: false, nextCursor: null, previousCursor: null };
    return this.deps.uow.read(async (r) => {
      let customerIds: Id[] | undefined;
      if (f.owner !== undefined) {
        const owner = await r.customers.findByValue(tenant, f.owner);
        customerIds = owner ? [owner.id] : [];
      }
      let ids = f.id ? [f.id] : undefined;
      if (f.search !== undefined) {
        if (isUuid(f.search)) ids = intersect(ids, [f.search.toLowerCase()]);
        else customerIds = intersect(customerIds, await this.customersMatching(r, tenant, f.search));
      }
      let planIds = f.planIds;
      if (f.priceId !== undefined || f.paymentPriceId !== undefined) {
        const selling = (await this.plansOf(r, tenant)).filter((p) =>
          p.lineItems.some((li) =>
            li.prices.some(
              (price) =>
                (f.priceId === undefined || price.id === f.priceId) &&
                (f.paymentPriceId === undefined || price.paymentPriceId === f.paymentPriceId),
            ),
          ),
        );
        planIds = intersect(
          planIds,
          selling.map((p) => p.id),
        );
      }
      if ([customerIds, ids, planIds].some((x) => x?.length === 0)) return none;
      const page = await pageInOrder(f.sort ?? 'asc', { limit: f.limit, after: f.after, before: f.before }, (q) =>
        r.subscriptions.page(tenant, {
          ...q,
          customerIds,
          planIds,
          productIds: f.productIds,
          statuses: f.statuses,
          ids,
        }),
      );
      return { ...page, items: await this.records(r, page.items) };
    });
  }

  /** The ids of the tenant's customers whose value or e-mail holds `search`. */
  private async customersMatching(r: Repositories, tenant: Tenant, search: string): Promise<Id[]> {
    const out: Id[] = [];
    let after: string | undefined;
    for (;;) {
      const page = await r.customers.page(tenant, { limit: 500, after, search });
      out.push(...page.items.map((c) => c.id));
      if (!page.hasMore || !page.nextCursor) return out;
      after = page.nextCursor;
    }
  }

  /** Every plan of the tenant (archived ones too: a subscription may still hold one). */
  private async plansOf(r: Repositories, tenant: Tenant): Promise<Plan[]> {
    const plans: Plan[] = [];
    for (const product of await r.products.list(tenant, { includeArchived: true }))
      plans.push(...(await r.plans.listByProduct(product.id)));
    return plans.filter((p) => p.organisationId === tenant.organisationId && p.isTest === tenant.isTest);
  }

  /** The subscriptions of one customer (an owner's expansion): the first `limit`, and whether there are more. */
  async ofCustomers(tenant: Tenant, customerIds: Id[], limit: number): Promise<Map<Id, { items: SubscriptionRecord[]; hasMore: boolean }>> {
    const out = new Map<Id, { items: SubscriptionRecord[]; hasMore: boolean }>();
    await this.deps.uow.read(async (r) => {
      for (const id of customerIds) {
        const page = await r.subscriptions.page(tenant, { limit, customerIds: [id] });
        out.set(id, { items: await this.records(r, page.items), hasMore: page.hasMore });
      }
    });
    return out;
  }

  /** A subscription's line item (a subscription-plan line item) with its subscription and the plan's line item. */
  async lineItem(
    tenant: Tenant,
    id: Id,
  ): Promise<{ item: SubscriptionLineItem; record: SubscriptionRecord; part: SubscriptionPlanPart; lineItem: LineItem | undefined }> {
    return this.deps.uow.read(async (r) => {
      const item = assertAccessible(await r.subscriptions.getLineItem(id), tenant, 'subscription plan line item');
      const [record] = await this.records(r, [await loadOwned(r, tenant, item.subscriptionId, false)]);
      const part = record.plans.find((p) => p.lineItemIds.includes(item.lineItemId)) ?? record.plans[0];
      return { item, record, part, lineItem: part.plan?.lineItems.find((li) => li.id === item.lineItemId) };
    });
  }

  /** The line items of each subscription plan of these subscriptions, by subscription plan id (the tenant's; others are skipped). */
  async lineItemsOf(tenant: Tenant, records: SubscriptionRecord[]): Promise<Map<Id, SubscriptionLineItem[]>> {
    return this.deps.uow.read(async (r) => {
      const out = new Map<Id, SubscriptionLineItem[]>();
      for (const { subscription, plans } of records) {
        const items = (await r.subscriptions.lineItems(subscription.id)).filter(
          (l) => l.organisationId === tenant.organisationId && l.isTest === tenant.isTest,
        );
        for (const part of plans)
          out.set(
            part.id,
            items.filter((l) => part.lineItemIds.includes(l.lineItemId)),
          );
      }
      return out;
    });
  }

  async get(tenant: Tenant, id: Id): Promise<SubscriptionRecord> {
    return this.deps.uow.read(async (r) => (await this.records(r, [await loadOwned(r, tenant, id, false)]))[0]);
  }

  /**
   * Auto-renew off schedules the cancellation at the period's end; on removes a scheduled one. A
   * setting already so is no change (a repeated PUT answers as the first did), as the batch skips it.
   */
  async setAutoRenew(tenant: Tenant, id: Id, enabled: boolean): Promise<Subscription> {
    return enabled ? this.lifecycle.enableRenewal(tenant, id) : this.lifecycle.cancel(tenant, id, 'end');
  }

  /** Removes a test-mode subscription for good (a running one is canceled with the provider first). */
  async delete(tenant: Tenant, id: Id): Promise<void> {
    // Tenancy first (unknown 404, foreign 403), then the mode rule.
    const s = await this.deps.uow.read((r) => loadOwned(r, tenant, id, false));
    if (!s.isTest)
      fail(ErrorCodes.VALIDATION_FAILED, 'subscriptions can be deleted in test mode only (use a test key)', [
        { property: 'id', error: 'names a live subscription: only test-mode subscriptions can be deleted' },
      ]);
    const remove = () =>
      this.deps.uow.run(async (r) => {
        await loadOwned(r, tenant, id, true);
        await r.subscriptions.delete(id);
      });
    if (effectiveStatus(s, this.deps.clock.now()) === 'CANCELED') return remove();
    // Canceled first (the provider told, committed here); a delete the outage then refuses says so.
    await this.lifecycle.cancel(tenant, id, 'now');
    // Not a step outside the transaction: inside an idempotent request's, the cancel rolls back with the delete.
    await remove().catch((e: unknown) => {
      throw outageAfter(e, 'the subscription was canceled', 'retry the delete to remove it');
    });
  }

  /**
   * One action on up to 100 subscriptions. Every id is checked first (unknown 404, another
   * organisation's 403: nothing is done); then each is acted on alone, and the answer says which
   * succeeded, which failed (and why) and which were skipped (already so).
   */
  async batch(tenant: Tenant, action: BatchAction, ids: Id[]): Promise<BatchResult> {
    const unique = [...new Set(ids)];
    const found = await this.deps.uow.read(async (r) => {
      const out: Subscription[] = [];
      for (const id of unique) out.push(assertAccessible(await r.subscriptions.get(id), tenant, `subscription ${id}`));
      return out;
    });
    if (action === 'delete' && !tenant.isTest)
      fail(ErrorCodes.VALIDATION_FAILED, 'subscriptions can be deleted in test mode only (use a test key)', [
        { property: 'action', error: 'delete is for test mode only' },
      ]);
    const now = this.deps.clock.now();
    const results: BatchResult['results'] = [];
    for (const s of found) {
      const status = effectiveStatus(s, now);
      const skip =
        (action === 'cancel' && status === 'CANCELED') ||
        (action === 'disable-auto-renew' && (status === 'CANCELED' || s.cancelAtPeriodEnd)) ||
        (action === 'enable-auto-renew' && status !== 'CANCELED' && !s.cancelAtPeriodEnd);
      if (skip) {
        results.push({ id: s.id, status: 'skipped', reason: status === 'CANCELED' ? 'already canceled' : 'already so' });
        continue;
      }
      try {
        if (action === 'cancel') await this.lifecycle.cancel(tenant, s.id, 'now');
        else if (action === 'delete') await this.delete(tenant, s.id);
        else await this.setAutoRenew(tenant, s.id, action === 'enable-auto-renew');
        results.push({ id: s.id, status: 'succeeded' });
      } catch (e) {
        if (!isDomainError(e)) throw e;
        results.push({ id: s.id, status: 'failed', reason: e.message });
      }
    }
    const count = (st: string) => results.filter((x) => x.status === st).length;
    return { total: results.length, succeeded: count('succeeded'), failed: count('failed'), skipped: count('skipped'), results };
  }

  private async records(r: Repositories, subs: Subscription[]): Promise<SubscriptionRecord[]> {
    const now = this.deps.clock.now();
    const plans = new Map((await r.plans.getMany([...new Set(subs.flatMap(heldPlanIds))])).map((p) => [p.id, p]));
    const customers = new Map<Id, Customer | undefined>();
    for (const id of new Set(subs.map((s) => s.customerId))) customers.set(id, await r.customers.get(id));
    return subs.map((s) => ({
      subscription: { ...s, status: effectiveStatus(s, now) },
      customer: customers.get(s.customerId),
      plan: plans.get(s.planId),
      plans: [
        {
          id: s.id,
          planId: s.planId,
          plan: plans.get(s.planId),
          seats: s.quantity,
          lineItemIds: s.lineItemIds,
          createdAt: s.createdAt,
          updatedAt: s.updatedAt,
        },
        ...s.addedPlans.map((a) => ({
          id: a.id,
          planId: a.planId,
          plan: plans.get(a.planId),
          seats: a.quantity,
          lineItemIds: a.lineItemIds,
          createdAt: a.createdAt,
          updatedAt: a.updatedAt,
        })),
      ],
    }));
  }

  /** A subscription plan by its id: a subscription's (its first plan) or an added plan's. */
  async getPlan(tenant: Tenant, id: Id): Promise<{ record: SubscriptionRecord; part: SubscriptionPlanPart }> {
    return this.deps.uow.read(async (r) => {
      const subscriptionId = (await r.subscriptions.get(id)) ? id : await r.subscriptions.subscriptionOfPlan(id);
      if (!subscriptionId) return fail(ErrorCodes.NOT_FOUND, 'subscription plan not found');
      const [record] = await this.records(r, [await loadOwned(r, tenant, subscriptionId, false)]);
      return { record, part: record.plans.find((p) => p.id === id) as SubscriptionPlanPart };
    });
  }
}
