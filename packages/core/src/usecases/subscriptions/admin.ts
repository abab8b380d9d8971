import { ErrorCodes, fail, invalid } from '../../errors';
import type { Customer, Id, Subscription, SubscriptionStatus, Tenant, CheckoutItem } from '../../model';
import { assertAccessible } from '../../domain/tenancy';
import { cancelAtPeriodEnd, effectiveStatus } from '../../domain/subscription';
import { changeOwner, manageSeatGrantees, type SeatGranteeChange } from '../../domain/seat-grantees';
import { encodeCursor, PAST_END } from '../../support/pagination';
import type { Repositories } from '../../ports';
import type { CoreDeps } from '../deps';
import type { CheckoutService } from '../checkout';
import { loadOwned } from './shared';
import { subscriptionViewIn, type SubscriptionView } from './lifecycle';

/** A subscription list request: filters, and a page from the subscription `cursor` names (exclusive). */
export interface SubscriptionPageRequest {
  status?: SubscriptionStatus;
  /** The paying customer (`owner`, the checkout's `member`). */
  owner?: string;
  /** A customer by e-mail: the customer whose identifier it is. */
  email?: string;
  productId?: Id;
  planId?: Id;
  /** The id of the subscription the page starts after (in `sort` order). */
  cursor?: Id;
  take: number;
  sort: 'asc' | 'desc';
}

export interface DirectSubscriptionRequest {
  planId: Id;
  /** Who gets the first seat; null: every seat starts unassigned. */
  granteeId: string | null;
  owner: string;
  expiryDate?: Date;
  cancelAtPeriodEnd?: boolean;
  quantity?: number;
  status?: SubscriptionStatus;
  /** Other plans the subscription holds beside `planId` (checked by the caller: sellable, same interval, each once). */
  extraItems?: CheckoutItem[];
}

/**
 * Subscriptions as an integrator manages them directly (the v2/v3 interfaces): list them, create
 * one without a payment, pass one to another owner, and say who holds its seats.
 */
export class SubscriptionAdmin {
  constructor(
    private readonly deps: Pick<CoreDeps, 'uow' | 'clock' | 'ids' | 'limits'>,
    private readonly checkout: CheckoutService,
  ) {}

  /** One page of the tenant's subscriptions (as a reader must see them now), oldest or newest first. */
  async page(tenant: Tenant, q: SubscriptionPageRequest): Promise<{ subscriptions: Subscription[]; owners: Map<Id, string> }> {
    const now = this.deps.clock.now();
    return this.deps.uow.read(async (r) => {
      // The owner and the e-mail each name a customer (its identifier; members are often e-mail addresses).
      const customerIds: Id[][] = [];
      for (const value of [q.owner, q.email]) {
        if (value === undefined) continue;
        const c = await r.customers.findByValue(tenant, value);
        if (!c) return { subscriptions: [], owners: new Map<Id, string>() };
        customerIds.push([c.id]);
      }
      if (customerIds.length === 2 && customerIds[0][0] !== customerIds[1][0]) return { subscriptions: [], owners: new Map<Id, string>() };
      let from: string | undefined;
      if (q.cursor !== undefined) {
        const at = await r.subscriptions.get(q.cursor);
        if (!at || at.organisationId !== tenant.organisationId || at.isTest !== tenant.isTest)
          invalid('cursor', 'names no subscription of this list');
        from = encodeCursor(at as Subscription);
      }
      const filter = {
        statuses: q.status ? [q.status] : undefined,
        productIds: q.productId ? [q.productId] : undefined,
        planIds: q.planId ? [q.planId] : undefined,
        customerIds: customerIds[0],
      };
      const page =
        q.sort === 'asc'
          ? await r.subscriptions.page(tenant, { ...filter, limit: q.take, after: from })
          : await r.subscriptions.page(tenant, { ...filter, limit: q.take, before: from ?? PAST_END });
      const items = q.sort === 'asc' ? page.items : [...page.items].reverse();
      const owners = new Map<Id, string>();
      for (const id of new Set(items.map((s) => s.customerId))) {
        const c = await r.customers.get(id);
        if (c) owners.set(id, c.value);
      }
      return { subscriptions: items.map((s) => ({ ...s, status: effectiveStatus(s, now) })), owners };
    });
  }

  /**
   * The plans of the product a customer (`owner`) subscribes to, or a grantee holds a running
   * license of: what a pricing table shown to them marks as theirs.
   */
  async plansHeld(tenant: Tenant, productId: Id, who: { owner?: string; granteeId?: string }): Promise<Set<Id>> {
    const now = this.deps.clock.now();
    return this.deps.uow.read(async (r) => {
      const held = new Set<Id>();
      if (who.granteeId !== undefined)
        for (const l of await r.licenses.list(tenant, { granteeId: who.granteeId, productId }))
          if (l.status !== 'CANCELED' && l.status !== 'INACTIVE') held.add(l.planId);
      const customer = who.owner === undefined ? undefined : await r.customers.findByValue(tenant, who.owner);
      if (customer) {
        let after: string | undefined;
        for (;;) {
          const page = await r.subscriptions.page(tenant, { productIds: [productId], customerIds: [customer.id], limit: 200, after });
          for (const s of page.items) if (effectiveStatus(s, now) !== 'CANCELED') held.add(s.planId);
          if (!page.hasMore || !page.nextCursor) break;
          after = page.nextCursor;
        }
      }
      return held;
    });
  }

  /**
   * A subscription without payment (provider `none`), in one transaction: its customer (`owner`,
   * made when new), one seat per quantity, the first the grantee's (none: all unassigned);
   * `expiryDate` ends its first period there; `cancelAtPeriodEnd` schedules its end. The one rule
   * for every generation (v2/v3 `POST /subscriptions`, catalog `POST /api/subscriptions`).
   */
  async create(tenant: Tenant, req: DirectSubscriptionRequest): Promise<SubscriptionView> {
    const now = this.deps.clock.now();
    if (req.owner.trim() === '' || req.owner.length > 320) invalid('owner', 'must be 1 to 320 characters');
    return this.deps.uow.run(async (r) => {
      assertAccessible(await r.plans.get(req.planId), tenant, 'plan');
      let { subscription } = await this.checkout.purchaseIn(
        r,
        {
          planId: req.planId,
          member: req.owner,
          email: req.owner.includes('@') ? req.owner : null,
          granteeId: req.granteeId,
          quantity: req.quantity ?? 1,
          paymentProvider: 'none',
          paymentSubscriptionId: null,
          paymentCustomerId: null,
          periodEnd: req.expiryDate,
          extraItems: req.extraItems,
        },
        now,
      );
      if (req.status !== undefined && req.status !== subscription.status)
        invalid('status', `the plan starts ${subscription.status}: ${req.status} is not possible`);
      if (req.cancelAtPeriodEnd) {
        const seats = (await r.licenses.listBySubscription(subscription.id)).map((l) => ({ ...l, endTime: subscription.currentPeriodEnd }));
        const change = cancelAtPeriodEnd(subscription, seats, now);
        subscription = change.subscription;
        await r.subscriptions.save(subscription);
        await r.licenses.saveMany(change.licenses);
      }
      return subscriptionViewIn(r, subscription, now);
    });
  }

  /** Passes the subscription to another paying customer (created on first use). */
  async updateOwner(tenant: Tenant, id: Id, owner: string): Promise<SubscriptionView> {
    const now = this.deps.clock.now();
    return this.deps.uow.run(async (r) => {
      const s = await loadOwned(r, tenant, id, true);
      const change = changeOwner(s, await r.licenses.listBySubscription(s.id), await this.customer(r, tenant, owner, now), now);
      await r.subscriptions.save(change.subscription);
      await r.licenses.saveMany(change.licenses);
      return subscriptionViewIn(r, change.subscription, now);
    });
  }

  /** Assigns, unassigns and replaces the grantees of the subscription's seats, in order, all or none. */
  async manageSeats(tenant: Tenant, id: Id, changes: SeatGranteeChange[]): Promise<void> {
    const now = this.deps.clock.now();
    await this.deps.uow.run(async (r) => {
      const s = await loadOwned(r, tenant, id, true);
      if (effectiveStatus(s, now) === 'CANCELED') fail(ErrorCodes.SUBSCRIPTION_CANCELED, 'the subscription is canceled');
      const seats = await r.licenses.getManyForUpdate((await r.licenses.listBySubscription(s.id)).map((l) => l.id));
      await r.licenses.saveMany(manageSeatGrantees(seats, changes, now));
    });
  }

  private async customer(r: Repositories, tenant: Tenant, owner: string, now: Date): Promise<Customer> {
    if (owner.trim() === '' || owner.length > 320) invalid('owner', 'must be 1 to 320 characters');
    return r.customers.findOrCreate({
      id: this.deps.ids.newId(),
      organisationId: tenant.organisationId,
      isTest: tenant.isTest,
      value: owner,
      emailAddress: owner.includes('@') ? owner : null,
      paymentCustomerId: null,
      createdAt: now,
      updatedAt: now,
    });
  }
}
