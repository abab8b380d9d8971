import { ErrorCodes, fail } from '../errors';
import type { Customer, DomainEvent, Id, Plan, Product, Proration, Subscription, Tenant } from '../model';
import { assertAccessible } from '../domain/tenancy';
import { addSeats, removeSeats, validateSeatChange } from '../domain/seats';
import { cancelAtPeriodEnd, cancelNow, changePlan, effectiveStatus, periodEndReached, reactivate, renew, syncWithProvider, type PlanChange, type ProviderSnapshot } from '../domain/subscription';
import { seatLicense } from '../domain/seats';
import { unitAmount } from '../domain/catalog';
import { addInterval } from '../domain/time';
import type { InvoiceList, ProviderOutcome, ProviderPaymentMethod, Repositories } from '../ports';
import type { CoreDeps } from './deps';
import { loadCurrencies } from './catalog-queries';
import type { BillingDocument, Currency, PaymentIntegration } from '../model';

export interface SubscriptionView {
  /** As a reader must see it now (a due scheduled cancellation shows as CANCELED). */
  subscription: Subscription;
  plan: Plan;
  product: Product;
  customer: Customer | undefined;
  currencies: ReadonlyMap<Id, Currency>;
  integration: PaymentIntegration | undefined;
}

export type SeatChange = { increment: number } | { decrement: number };

async function loadOwned(r: Repositories, tenant: Tenant, id: Id, forUpdate: boolean): Promise<Subscription> {
  const s = forUpdate ? await r.subscriptions.getForUpdate(id) : await r.subscriptions.get(id);
  return assertAccessible(s, tenant, ErrorCodes.SUBSCRIPTION_NOT_FOUND, 'subscription');
}

async function loadPlan(r: Repositories, id: Id): Promise<Plan> {
  return (await r.plans.get(id)) ?? fail(ErrorCodes.PLAN_NOT_FOUND, 'plan not found');
}

/** Keeps what the provider asked us to keep, inside the caller's transaction. */
export async function saveOutcome(r: Repositories, outcome: ProviderOutcome | void): Promise<void> {
  for (const d of outcome?.documents ?? []) await r.billingDocuments.save(d);
}

/** Dedupes a provider's webhook event inside the transaction that applies it. */
export interface WebhookDelivery {
  provider: string;
  eventId: string;
}

export type SyncResult = 'applied' | 'duplicate' | 'unknown';

async function loadCustomer(r: Repositories, s: Subscription): Promise<Customer> {
  return (await r.customers.get(s.customerId)) ?? fail(ErrorCodes.NOT_FOUND, 'the subscription has no customer');
}

/** Subscription use cases of v1: read, change plan, cancel, reactivate, links, seats. */
export class SubscriptionService {
  constructor(private readonly deps: CoreDeps) {}

  async get(tenant: Tenant, id: Id): Promise<SubscriptionView> {
    const now = this.deps.clock.now();
    return this.deps.uow.run(async (r) => {
      const s = await loadOwned(r, tenant, id, false);
      const [plan, product, customer, currencies] = await Promise.all([loadPlan(r, s.planId), r.products.get(s.productId), r.customers.get(s.customerId), loadCurrencies(r)]);
      if (!product) return fail(ErrorCodes.PRODUCT_NOT_FOUND, 'product not found');
      const integration = product.paymentIntegrationId ? await r.paymentIntegrations.get(product.paymentIntegrationId) : undefined;
      return { subscription: { ...s, status: effectiveStatus(s, now) }, plan, product, customer, currencies, integration };
    });
  }

  /** Moves to another plan of the same product (usage-based: cancels and starts a new subscription). */
  async changePlan(tenant: Tenant, id: Id, planId: Id, proration: Proration): Promise<PlanChange> {
    const now = this.deps.clock.now();
    return this.deps.uow.run(async (r) => {
      const s = await loadOwned(r, tenant, id, true);
      const target = assertAccessible(await r.plans.get(planId), tenant, ErrorCodes.PLAN_NOT_FOUND, 'plan');
      const [currentPlan, targetProduct, licenses, currencies] = await Promise.all([
        loadPlan(r, s.planId), r.products.get(target.productId), r.licenses.listBySubscription(s.id), loadCurrencies(r),
      ]);
      if (!targetProduct) return fail(ErrorCodes.PRODUCT_NOT_FOUND, 'product not found');
      const change = changePlan({ subscription: s, licenses, currentPlan, target, targetProduct, proration, now, newId: () => this.deps.ids.newId() });
      if (change.kind === 'moved') {
        await saveOutcome(r, await this.deps.payments.changePlan({
          subscription: s, from: currentPlan, to: target, proration,
          fromUnitAmount: unitAmount(currentPlan, s.currency, currencies), toUnitAmount: unitAmount(target, s.currency, currencies),
        }));
        await r.subscriptions.save(change.subscription);
        await r.licenses.saveMany(change.licenses);
      } else {
        await this.deps.payments.cancel(s, 'now');
        await r.subscriptions.save(change.canceled);
        await r.subscriptions.save(change.created);
        await r.licenses.saveMany([...change.canceledLicenses, ...change.createdLicenses]);
      }
      return change;
    });
  }

  async cancel(tenant: Tenant, id: Id, when: 'now' | 'end'): Promise<Subscription> {
    const now = this.deps.clock.now();
    return this.deps.uow.run(async (r) => {
      const s = await loadOwned(r, tenant, id, true);
      const licenses = await r.licenses.listBySubscription(s.id);
      const change = when === 'now' ? cancelNow(s, licenses, now) : cancelAtPeriodEnd(s, licenses, now);
      if (change.subscription !== s) await this.deps.payments.cancel(s, when);
      await r.subscriptions.save(change.subscription);
      await r.licenses.saveMany(change.licenses);
      return change.subscription;
    });
  }

  async reactivate(tenant: Tenant, id: Id): Promise<Subscription> {
    const now = this.deps.clock.now();
    return this.deps.uow.run(async (r) => {
      const s = await loadOwned(r, tenant, id, true);
      const change = reactivate(s, await r.licenses.listBySubscription(s.id), now);
      await this.deps.payments.reactivate(s);
      await r.subscriptions.save(change.subscription);
      await r.licenses.saveMany(change.licenses);
      return change.subscription;
    });
  }

  /** Plans of the same product the subscription can switch to: active, not archived, not the current one. */
  async switchablePlans(tenant: Tenant, id: Id): Promise<{ plans: Plan[]; product: Product; currencies: ReadonlyMap<Id, Currency> }> {
    return this.deps.uow.run(async (r) => {
      const s = await loadOwned(r, tenant, id, false);
      const [plans, product, currencies] = await Promise.all([r.plans.listByProduct(s.productId), r.products.get(s.productId), loadCurrencies(r)]);
      if (!product) return fail(ErrorCodes.PRODUCT_NOT_FOUND, 'product not found');
      return { plans: plans.filter((p) => p.id !== s.planId && p.active && !p.archivedAt && !product.archivedAt), product, currencies };
    });
  }

  async invoices(tenant: Tenant, id: Id): Promise<InvoiceList> {
    const { s, stored } = await this.deps.uow.run(async (r) => {
      const sub = await loadOwned(r, tenant, id, false);
      return { s: sub, stored: await r.billingDocuments.list(sub.id, 'invoice') };
    });
    return this.deps.payments.listInvoices(s, stored);
  }

  async paymentMethod(tenant: Tenant, id: Id): Promise<ProviderPaymentMethod> {
    const { s, customer, stored } = await this.deps.uow.run(async (r) => {
      const sub = await loadOwned(r, tenant, id, false);
      return { s: sub, customer: await loadCustomer(r, sub), stored: await r.billingDocuments.list(sub.id, 'payment_method') };
    });
    return (await this.deps.payments.paymentMethod(s, customer, stored)) ?? fail(ErrorCodes.NOT_FOUND, 'the subscription has no payment method');
  }

  /**
   * Applies the provider's truth about a subscription (re-fetched after a webhook), once per
   * delivery. 'unknown' when we have no subscription with that provider id.
   */
  async syncFromProvider(paymentSubscriptionId: string, snapshot: ProviderSnapshot, delivery?: WebhookDelivery): Promise<SyncResult> {
    return this.fromProvider(paymentSubscriptionId, delivery, async (r, s, now) => {
      const [plan, customer, licenses] = await Promise.all([loadPlan(r, s.planId), loadCustomer(r, s), r.licenses.listBySubscription(s.id)]);
      const out = syncWithProvider(s, licenses, snapshot, now, (sub) => seatLicense(sub, plan, customer.value, this.deps.ids.newId(), now));
      await r.subscriptions.save(out.subscription);
      await r.licenses.deleteMany(out.removed.map((l) => l.id));
      await r.licenses.saveMany(out.saved);
    });
  }

  /** A paid invoice for a new period: the subscription and its licenses run to `periodEnd`. */
  async renewFromProvider(paymentSubscriptionId: string, periodStart: Date, periodEnd: Date, delivery?: WebhookDelivery): Promise<SyncResult> {
    return this.fromProvider(paymentSubscriptionId, delivery, async (r, s, now) => {
      if (s.status === 'CANCELED' || periodEnd <= s.currentPeriodEnd) return;
      const change = renew(s, await r.licenses.listBySubscription(s.id), periodStart, periodEnd, now);
      await r.subscriptions.save(change.subscription);
      await r.licenses.saveMany(change.licenses);
    });
  }

  /** One provider update in one transaction: the delivery recorded once, the subscription locked. */
  private fromProvider(
    paymentSubscriptionId: string,
    delivery: WebhookDelivery | undefined,
    apply: (r: Repositories, s: Subscription, now: Date) => Promise<void>,
  ): Promise<SyncResult> {
    const now = this.deps.clock.now();
    return this.deps.uow.run(async (r) => {
      if (delivery && !(await r.webhookEvents.record(delivery.provider, delivery.eventId, now))) return 'duplicate';
      const found = await r.subscriptions.findByPaymentId(paymentSubscriptionId);
      if (!found) return 'unknown';
      await apply(r, (await r.subscriptions.getForUpdate(found.id)) as Subscription, now);
      return 'applied';
    });
  }

  async link(tenant: Tenant, id: Id, kind: 'updatePayment' | 'portal' | 'cancel'): Promise<{ url: string }> {
    const { s, customer } = await this.withCustomer(tenant, id);
    if (kind === 'portal') return this.deps.payments.portalLink(s, customer);
    if (effectiveStatus(s, this.deps.clock.now()) === 'CANCELED') fail(ErrorCodes.SUBSCRIPTION_CANCELED, 'the subscription is canceled');
    return kind === 'updatePayment' ? this.deps.payments.updatePaymentLink(s, customer) : this.deps.payments.cancelLink(s, customer);
  }

  private async withCustomer(tenant: Tenant, id: Id) {
    return this.deps.uow.run(async (r) => {
      const s = await loadOwned(r, tenant, id, false);
      return { s, customer: await loadCustomer(r, s) };
    });
  }

  /**
   * Checks a seat change now (400 before anything is queued) and queues it as an event; the event
   * worker applies it. Returns the queued event.
   */
  async requestSeatChange(tenant: Tenant, id: Id, change: SeatChange, proration: Proration): Promise<DomainEvent> {
    const now = this.deps.clock.now();
    const event = await this.deps.uow.run(async (r) => {
      const s = await loadOwned(r, tenant, id, false);
      const [plan, licenses] = await Promise.all([loadPlan(r, s.planId), r.licenses.listBySubscription(s.id)]);
      validateSeatChange(s, plan, licenses, change, now);
      const payload =
        'increment' in change
          ? ({ type: 'seats.increment', subscriptionId: s.id, count: change.increment, proration } as const)
          : ({ type: 'seats.decrement', subscriptionId: s.id, count: change.decrement, proration } as const);
      const e: DomainEvent = {
        id: this.deps.ids.newId(),
        organisationId: s.organisationId,
        isTest: s.isTest,
        type: payload.type,
        subscriptionId: s.id,
        payload,
        status: 'queued',
        attempts: 0,
        runAt: now,
        lastError: null,
        createdAt: now,
        updatedAt: now,
      };
      await r.events.save(e);
      return e;
    });
    this.deps.events.wake();
    return event;
  }

  /**
   * Applies a seat change inside the caller's unit of work, with the subscription row locked, so
   * concurrent changes never lose an update.
   */
  async applySeatChange(r: Repositories, subscriptionId: Id, change: SeatChange, proration: Proration): Promise<Subscription> {
    const now = this.deps.clock.now();
    const s = (await r.subscriptions.getForUpdate(subscriptionId)) ?? fail(ErrorCodes.SUBSCRIPTION_NOT_FOUND, 'subscription not found');
    const [plan, customer, currencies] = await Promise.all([loadPlan(r, s.planId), loadCustomer(r, s), loadCurrencies(r)]);
    const price = unitAmount(plan, s.currency, currencies);
    if ('increment' in change) {
      const added = addSeats(s, plan, customer.value, change.increment, now, () => this.deps.ids.newId());
      await saveOutcome(r, await this.deps.payments.changeSeats(s, plan, added.subscription.quantity, proration, price));
      await r.subscriptions.save(added.subscription);
      await r.licenses.saveMany(added.created);
      return added.subscription;
    }
    const licenses = await r.licenses.listBySubscription(s.id);
    const removed = removeSeats(s, plan, licenses, change.decrement, now);
    await saveOutcome(r, await this.deps.payments.changeSeats(s, plan, removed.subscription.quantity, proration, price));
    await r.subscriptions.save(removed.subscription);
    await r.licenses.deleteMany(removed.removed.map((l) => l.id));
    return removed.subscription;
  }

  /** The organisation and mode of a subscription, for hosted pages that a signed link authorises. */
  async tenantOf(id: Id): Promise<Tenant> {
    const s = await this.deps.uow.run((r) => r.subscriptions.get(id));
    if (!s) return fail(ErrorCodes.SUBSCRIPTION_NOT_FOUND, 'subscription not found');
    return { organisationId: s.organisationId, isTest: s.isTest };
  }

  /** Keeps documents a provider made outside a use case (the sandbox's replaced card). */
  async keepDocuments(tenant: Tenant, id: Id, documents: BillingDocument[]): Promise<void> {
    await this.deps.uow.run(async (r) => {
      const s = await loadOwned(r, tenant, id, false);
      await saveOutcome(r, { documents: documents.map((d) => ({ ...d, subscriptionId: s.id, organisationId: s.organisationId })) });
    });
  }

  /**
   * The sweep, for providers that do not bill renewals themselves (sandbox, free): a running
   * subscription whose period ended moves on by whole periods, with its licenses. Returns how many.
   */
  async sweepRenewals(limit = 100): Promise<number> {
    const now = this.deps.clock.now();
    const providers = [this.deps.payments, this.deps.freeCheckout].filter((p) => p?.renewedBySweep).map((p) => (p as { name: string }).name);
    if (providers.length === 0) return 0;
    const due = await this.deps.uow.run((r) => r.subscriptions.listDueForRenewal(now, providers, limit));
    let done = 0;
    for (const id of due) {
      await this.deps.uow.run(async (r) => {
        const s = await r.subscriptions.getForUpdate(id);
        if (!s || s.status === 'CANCELED' || s.cancelAtPeriodEnd || now < s.currentPeriodEnd) return;
        const plan = await loadPlan(r, s.planId);
        let start = s.currentPeriodEnd;
        let end = addInterval(start, plan.interval, plan.length);
        while (end <= now) {
          start = end;
          end = addInterval(start, plan.interval, plan.length);
        }
        const change = renew(s, await r.licenses.listBySubscription(s.id), start, end, now);
        await r.subscriptions.save(change.subscription);
        await r.licenses.saveMany(change.licenses);
        const provider = [this.deps.payments, this.deps.freeCheckout].find((p) => p?.name === s.paymentProvider);
        const outcome = provider?.renewedBySweep?.(change.subscription, plan, unitAmount(plan, s.currency, await loadCurrencies(r)));
        if (outcome) await saveOutcome(r, outcome);
        done++;
      });
    }
    return done;
  }

  /** The sweep: cancels subscriptions whose scheduled cancellation is due. Returns how many. */
  async sweepCancellations(limit = 100): Promise<number> {
    const now = this.deps.clock.now();
    const due = await this.deps.uow.run((r) => r.subscriptions.listDueForCancellation(now, limit));
    let done = 0;
    for (const id of due) {
      await this.deps.uow.run(async (r) => {
        const s = await r.subscriptions.getForUpdate(id);
        if (!s || !s.cancelAtPeriodEnd || s.status === 'CANCELED' || now < s.currentPeriodEnd) return;
        const change = periodEndReached(s, await r.licenses.listBySubscription(s.id), now);
        await r.subscriptions.save(change.subscription);
        await r.licenses.saveMany(change.licenses);
        done++;
      });
    }
    return done;
  }
}
