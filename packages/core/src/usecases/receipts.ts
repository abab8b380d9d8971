import type { CheckoutSession, Customer, Id, Page, Plan, Subscription, Tenant } from '../model';
import { assertAccessible } from '../domain/tenancy';
import { isUuid } from '../support/text';
import { pageInOrder } from '../support/pagination';
import type { Repositories } from '../ports';
import type { CoreDeps } from './deps';

/** A completed purchase as the published catalog API's receipt shows it. */
export interface Receipt {
  session: CheckoutSession;
  subscription: Subscription | undefined;
  /** The owner (the paying customer). */
  customer: Customer | undefined;
}

/**
 * Receipts: a tenant's completed checkouts (docs/decisions.md, "Commerce resources"), with the
 * subscription each created and its owner. Owners are named by id, as the catalog names them.
 */
export class Receipts {
  constructor(private readonly deps: Pick<CoreDeps, 'uow'>) {}

  private async complete(r: Repositories, session: CheckoutSession): Promise<Receipt> {
    const subscription = session.subscriptionId ? await r.subscriptions.get(session.subscriptionId) : undefined;
    const customer = subscription ? await r.customers.get(subscription.customerId) : await r.customers.findByValue(session, session.member);
    return { session, subscription, customer };
  }

  async list(
    tenant: Tenant,
    query: {
      limit: number;
      after?: string;
      before?: string;
      subscriptionId?: Id;
      ownerIds?: Id[];
      search?: string;
      /** Receipts that bought one of these line items (their plans'). */
      lineItemIds?: Id[];
      /** Oldest first (the default) or newest first; the cursors lead on in this order. */
      sort?: 'asc' | 'desc';
    },
  ): Promise<Page<Receipt>> {
    return this.deps.uow.read(async (r) => {
      let members: string[] | undefined;
      if (query.ownerIds) {
        members = [];
        for (const id of query.ownerIds.filter(isUuid)) {
          const c = await r.customers.get(id);
          if (c && c.organisationId === tenant.organisationId && c.isTest === tenant.isTest) members.push(c.value);
        }
      }
      let planIds: Id[] | undefined;
      if (query.lineItemIds) {
        planIds = [];
        for (const id of query.lineItemIds.filter(isUuid)) {
          const planId = await r.plans.planOfPart(id.toLowerCase());
          const plan = planId ? await r.plans.get(planId) : undefined;
          if (plan && plan.organisationId === tenant.organisationId && plan.isTest === tenant.isTest)
            if (plan.lineItems.some((li) => li.id === id.toLowerCase()) && !planIds.includes(plan.id)) planIds.push(plan.id);
        }
      }
      const { limit, after, before, subscriptionId, search } = query;
      const page = await pageInOrder(query.sort ?? 'asc', { limit, after, before }, (q) =>
        r.checkoutSessions.pageCompleted(tenant, { ...q, subscriptionId, search, members, planIds }),
      );
      const items: Receipt[] = [];
      for (const s of page.items) items.push(await this.complete(r, s));
      return { ...page, items };
    });
  }

  /**
   * One receipt, with the plan it bought and the other plans bought with it (a cart's), each with
   * its seats: their line items are the receipt's items.
   */
  async get(tenant: Tenant, id: Id): Promise<Receipt & { plan: Plan | undefined; extra: { plan: Plan; quantity: number }[] }> {
    return this.deps.uow.read(async (r) => {
      const found = await r.checkoutSessions.get(id);
      const session = assertAccessible(found?.status === 'completed' ? found : undefined, tenant, 'receipt');
      const extra: { plan: Plan; quantity: number }[] = [];
      for (const item of session.extraItems) {
        const plan = await r.plans.get(item.planId);
        if (plan) extra.push({ plan, quantity: item.quantity });
      }
      return { ...(await this.complete(r, session)), plan: await r.plans.get(session.planId), extra };
    });
  }
}
