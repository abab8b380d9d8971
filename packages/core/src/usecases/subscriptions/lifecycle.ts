import { startSubscriptionUsage } from '../usage/periods';
import { ErrorCodes, fail, invalid, isDomainError, isOutage } from '../../errors';
import type {
  BillingDocument,
  Currency,
  Customer,
  Id,
  License,
  PaymentIntegration,
  Plan,
  Product,
  Proration,
  Subscription,
  Tenant,
} from '../../model';
import {
  assertRunning,
  cancelAtPeriodEnd,
  cancelNow,
  assertSeatsCarry,
  changePlan,
  effectiveStatus,
  reactivate,
  enableRenewal,
  PLAN_CHANGE_FIELD,
  type PlanChange,
  type SubscriptionChange,
} from '../../domain/subscription';
import { assertBilledAsPriced, assertPricedIn, unitAmount } from '../../domain/catalog';
import { assertAccessible } from '../../domain/tenancy';
import type { InvoiceList, ProviderOutcome, ProviderPaymentMethod, Repositories } from '../../ports';
import { providerOf, type CoreDeps } from '../deps';
import { loadCurrencies } from '../catalog-queries';
import {
  afterProvider,
  billedByProvider,
  loadCustomer,
  loadOwned,
  loadPlan,
  saveNewSubscription,
  saveOutcome,
  endSubscriptionUsage,
  moveSubscriptionUsage,
  billingProviderOf,
  logLeftover,
} from './shared';

export interface SubscriptionView {
  /** As a reader must see it now (a due scheduled cancellation shows as CANCELED). */
  subscription: Subscription;
  plan: Plan;
  product: Product;
  customer: Customer | undefined;
  currencies: ReadonlyMap<Id, Currency>;
  integration: PaymentIntegration | undefined;
}

/**
 * The subscription as every generation shows it, read in the transaction `r`: a write that answers
 * with it builds it in its own transaction, so nothing is read after the commit (a read then could
 * fail in an outage and answer 503 for a change that was made).
 */
export async function subscriptionViewIn(r: Repositories, s: Subscription, now: Date): Promise<SubscriptionView> {
  const [plan, product, customer, currencies] = await Promise.all([
    loadPlan(r, s.planId),
    r.products.get(s.productId),
    r.customers.get(s.customerId),
    loadCurrencies(r),
  ]);
  if (!product) return fail(ErrorCodes.PRODUCT_NOT_FOUND, 'product not found');
  const integration = product.paymentIntegrationId ? await r.paymentIntegrations.get(product.paymentIntegrationId) : undefined;
  return { subscription: { ...s, status: effectiveStatus(s, now) }, plan, product, customer, currencies, integration };
}

/**
 * A subscription's life as its owner drives it: read, change plan, cancel, reactivate, links.
 *
 * Changes follow "decide, call the provider, commit": the change is decided from a plain read (no
 * lock), the payment provider is called outside any transaction, then the change is decided again
 * on the row locked for update and written. If the state moved in between, the second decision
 * wins (or refuses); the provider, told the first, is re-synced by its webhook (Stripe) or keeps no
 * state of its own (sandbox). See docs/decisions.md, "No provider call under a row lock".
 */
export class SubscriptionLifecycle {
  constructor(private readonly deps: Pick<CoreDeps, 'uow' | 'clock' | 'ids' | 'payments' | 'testPayments' | 'freeCheckout' | 'logger'>) {}

  async get(tenant: Tenant, id: Id): Promise<SubscriptionView> {
    const now = this.deps.clock.now();
    return this.deps.uow.run(async (r) => subscriptionViewIn(r, await loadOwned(r, tenant, id, false), now));
  }

  /**
   * Moves to another plan of the same product (usage-based: cancels and starts a new subscription).
   * `field`: the request's field naming the plan, which its refusals name (v1, v2, v3: `planUuid`).
   */
  async changePlan(
    tenant: Tenant,
    id: Id,
    planId: Id,
    proration: Proration,
    field: string = PLAN_CHANGE_FIELD,
  ): Promise<PlanChange & { view: SubscriptionView }> {
    const now = this.deps.clock.now();
    /**
     * The change decided on the subscription as read (plainly, or locked for the write) at `now`;
     * `selling`: the target's prices and what the provider can do are checked (before the provider
     * is told, not again after it).
     */
    const decide = async (r: Repositories, s: Subscription, now: Date, selling: boolean) => {
      const target = assertAccessible(await r.plans.get(planId), tenant, 'plan');
      const [currentPlan, targetProduct, licenses, currencies] = await Promise.all([
        loadPlan(r, s.planId),
        r.products.get(target.productId),
        r.licenses.listBySubscription(s.id),
        loadCurrencies(r),
      ]);
      if (!targetProduct) return fail(ErrorCodes.PRODUCT_NOT_FOUND, 'product not found');
      const change = this.decideMove({ s, licenses, currentPlan, target, targetProduct, currencies, proration, now, selling, field });
      return { s, change, currentPlan, target, currencies };
    };
    const first = await this.deps.uow.run(async (r) => {
      const s = await loadOwned(r, tenant, id, false);
      // The member the customer is, for what the provider shows (the sandbox's invoice).
      return { ...(await decide(r, s, now, true)), member: (await r.customers.get(s.customerId))?.value };
    });
    const billing = billingProviderOf(this.deps, first.s);
    // A subscription no provider bills (the free checkout's; it moves only to a plan that charges
    // nothing) has nothing at a provider to move or cancel: the payment provider is not called
    // (Stripe would refuse a subscription it does not bill, the sandbox would invoice it).
    const billed = billedByProvider(first.s, this.deps.freeCheckout);
    let outcome: ProviderOutcome | void;
    if (!billed) {
      outcome = undefined;
    } else if (first.change.kind === 'moved') {
      outcome = await this.deps.payments.changePlan({
        subscription: first.s,
        from: first.currentPlan,
        to: first.target,
        proration,
        fromUnitAmount: unitAmount(first.currentPlan, first.s.currency, first.currencies),
        toUnitAmount: unitAmount(first.target, first.s.currency, first.currencies),
        member: first.member,
      });
      // Made at the provider; what it could not delete (Stripe: the old plan's metered items) is an operator's.
      logLeftover(this.deps.logger, outcome, { subscriptionId: id, planId });
    } else {
      await this.deps.payments.cancel(first.s, 'now');
    }
    // The provider has been told: an outage from here on says so (the change may be partly applied).
    return afterProvider(this.deps.uow, billed, () =>
      this.deps.uow.run(async (r) => {
        const locked = await loadOwned(r, tenant, id, true);
        // The change is decided at the instant the provider was told it (decided again later, a
        // period that ended meanwhile would refuse what the provider already did); its usage closes
        // at an instant read under the lock: a renewal committed while the provider was told has
        // moved the period, and a close before it would end a period before it began.
        const at = this.deps.clock.now();
        if (first.change.kind === 'moved' && locked.planId === planId) {
          // The provider's webhook for this very move may have been applied first (its re-sync follows
          // a plan switched at the provider): the subscription is on the target already, which is done.
          // Canceled meanwhile, it is refused as the plain change would be.
          assertRunning(locked, now);
          await saveOutcome(r, outcome);
          const licenses = await r.licenses.listBySubscription(locked.id);
          return { kind: 'moved' as const, subscription: locked, licenses, proration, view: await subscriptionViewIn(r, locked, now) };
        }
        const { change, currentPlan, target } = await decide(r, locked, now, false);
        // The provider was told the kind of change decided first (a move, or the old subscription
        // canceled): a concurrent change that made the other kind right (the subscription moved onto
        // or off a usage-based plan meanwhile) is not written as that kind behind its back.
        if (change.kind !== first.change.kind)
          fail(
            ErrorCodes.CONFLICT,
            `the subscription changed while its plan change was made, and the payment provider was told it as a ${first.change.kind === 'moved' ? 'move' : 'cancellation'}: read the subscription back before retrying`,
          );
        if (change.kind === 'moved') {
          // What the provider billed (the sandbox's proration invoice) is kept only for the change it
          // was told: one decided again from another plan or seat count (a change committed
          // meanwhile) is not the change billed, as for seats (`SeatService.apply`).
          if (locked.planId === first.s.planId && locked.quantity === first.s.quantity) await saveOutcome(r, outcome);
          await r.subscriptions.save(change.subscription);
          await r.licenses.saveMany(change.licenses);
          // The subscription still holds its usage: the meters the two plans meter differently close
          // here (billed at the old plan's terms) and start again on the target's.
          await moveSubscriptionUsage(r, this.deps.ids, billing, {
            subscription: change.subscription,
            from: currentPlan,
            to: target,
            now: at,
          });
        } else {
          await r.subscriptions.save(change.canceled);
          await saveNewSubscription(r, change.created);
          await r.licenses.saveMany([...change.canceledLicenses, ...change.createdLicenses]);
          // The old subscription's usage closes here, once (its final record's key), and is billed;
          // the new one starts its own period on the target plan's meters.
          // Credits of the customer's own (purchased, promotion, adjustment) go with it until they expire.
          const closed = await endSubscriptionUsage(r, this.deps.ids, billing, {
            // As it ran (a trial's usage is not billed), not as the change leaves it (canceled).
            subscription: locked,
            plan: first.currentPlan,
            periodEnd: at,
            keepGrants: true,
            now: at,
          });
          await startSubscriptionUsage(r, this.deps.ids, change.created, first.target, now, closed);
        }
        // The moved (or the new) subscription as the answer shows it, from this transaction.
        return { ...change, view: await subscriptionViewIn(r, change.kind === 'moved' ? change.subscription : change.created, now) };
      }),
    );
  }

  async cancel(tenant: Tenant, id: Id, when: 'now' | 'end'): Promise<Subscription> {
    return this.changeWithProvider(
      tenant,
      id,
      (s, licenses, now) => (when === 'now' ? cancelNow(s, licenses, now) : cancelAtPeriodEnd(s, licenses, now)),
      (s) => this.deps.payments.cancel(s, when),
      // Canceled now: the period's usage so far is final and billed (at its end: by the sweep).
      when === 'now'
        ? async (r, s, now) => {
            await endSubscriptionUsage(r, this.deps.ids, billingProviderOf(this.deps, s), {
              subscription: s,
              plan: await loadPlan(r, s.planId),
              periodEnd: now,
              now,
            });
          }
        : undefined,
    );
  }

  async reactivate(tenant: Tenant, id: Id): Promise<Subscription> {
    return this.changeWithProvider(tenant, id, reactivate, (s) => this.deps.payments.reactivate(s));
  }

  /**
   * Auto-renew on: a scheduled cancellation taken back (as `reactivate`); a subscription that renews
   * already is left as it is, also when that is so only on the locked row (two identical requests
   * at once: the second finds the first's change made, and answers as a repeat does).
   */
  async enableRenewal(tenant: Tenant, id: Id): Promise<Subscription> {
    return this.changeWithProvider(tenant, id, enableRenewal, (s) => this.deps.payments.reactivate(s));
  }

  /** Decide on a plain read, tell the provider (only when something changes), decide again on the locked row and write. */
  private async changeWithProvider(
    tenant: Tenant,
    id: Id,
    decide: (
      s: Subscription,
      licenses: Awaited<ReturnType<Repositories['licenses']['listBySubscription']>>,
      now: Date,
    ) => SubscriptionChange,
    tellProvider: (s: Subscription) => Promise<void>,
    /** What else a change written does, in its transaction (given the subscription before it). */
    written?: (r: Repositories, before: Subscription, now: Date) => Promise<void>,
  ): Promise<Subscription> {
    const now = this.deps.clock.now();
    const first = await this.deps.uow.run(async (r) => {
      const s = await loadOwned(r, tenant, id, false);
      return { s, change: decide(s, await r.licenses.listBySubscription(s.id), now) };
    });
    const write = () =>
      this.deps.uow.run(async (r) => {
        const s = await loadOwned(r, tenant, id, true);
        // Decided again at the instant the provider was told (a period that ended meanwhile would
        // refuse, say, a reactivation the provider already made); what else it does (a cancellation's
        // usage close) at an instant read under the lock, after a renewal that committed meanwhile.
        const change = decide(s, await r.licenses.listBySubscription(s.id), now);
        if (change.subscription === s) return s;
        await r.subscriptions.save(change.subscription);
        await r.licenses.saveMany(change.licenses);
        await written?.(r, s, this.deps.clock.now());
        return change.subscription;
      });
    // Nothing to change on what was read (already so): answered as read. Deciding again on the locked
    // row could find a change made meanwhile to take back (a cancellation scheduled by a concurrent
    // request) and write it without the provider being told; a change is only ever written after it.
    if (first.change.subscription === first.s) return first.s;
    await tellProvider(first.s);
    // The provider has been told: an outage from here on says so (the change may be partly applied).
    return afterProvider(this.deps.uow, billedByProvider(first.s, this.deps.freeCheckout), write);
  }

  /**
   * The plan change of `s` to `target` as change-plan decides it, or its refusal (thrown): the
   * domain's rules (`changePlan`: sellable, same product, running, not held, a free subscription
   * only to a free plan, ...), the seats carried and, when `selling` (before the provider is
   * told; and for the switch list), the target's prices and what the subscription's providers do.
   */
  private decideMove(a: {
    s: Subscription;
    licenses: License[];
    currentPlan: Plan;
    target: Plan;
    targetProduct: Product;
    currencies: ReadonlyMap<Id, Currency>;
    proration: Proration;
    now: Date;
    selling: boolean;
    field: string;
  }): PlanChange {
    const { s, currentPlan: from, target: to, field } = a;
    const change = changePlan({
      subscription: s,
      licenses: a.licenses,
      currentPlan: from,
      target: to,
      targetProduct: a.targetProduct,
      proration: a.proration,
      now: a.now,
      newId: () => this.deps.ids.newId(),
      billed: billedByProvider(s, this.deps.freeCheckout),
      field,
    });
    assertSeatsCarry(s, to, field);
    if (!a.selling) return change;
    // Sold in the subscription's currency, with its seats: else the target would cost nothing, or be billed by the wrong count.
    assertPricedIn(to, s.currency, a.currencies, field);
    assertBilledAsPriced(to, s.currency, field);
    const billing = billingProviderOf(this.deps, s);
    if (change.kind === 'replaced' && billing && !billing.renewedBySweep)
      // The change starts a new subscription here, and only a provider whose renewals Tollgate makes
      // (the sandbox, the free checkout) bills one started that way: on Stripe the old one would be
      // canceled and the new one never billed.
      invalid(
        field,
        `a usage-based plan change starts a new subscription, which ${billing.name} would not bill: cancel this subscription and check out the new plan`,
      );
    // A target the provider cannot bill as priced (Stripe: a charging metered line item without a
    // Stripe price) is refused before it is told, and left out of the switch list.
    const unsellable = billing?.unsellable?.(to, s.currency);
    if (unsellable) invalid(field, unsellable);
    // The provider whose renewals the subscription follows (the free checkout's too, which bills none).
    const renewer = providerOf(this.deps, s);
    if (renewer?.renewedBySweep && (from.interval !== to.interval || from.length !== to.length))
      // A change of billing interval starts a new period at the provider (Stripe resets the cycle
      // and prorates); a provider whose renewals Tollgate makes keeps the period and would prorate
      // each plan's price per its own period, billing a yearly price for the rest of a month.
      invalid(
        field,
        `${to.displayName} is billed every ${to.length} ${to.interval}(s) and the subscription every ${from.length} ${from.interval}(s): ${renewer.name === 'none' ? 'the free checkout' : renewer.name} does not change billing intervals; cancel this subscription and check out the new plan`,
      );
    return change;
  }

  /**
   * The plans a subscriber may switch to (the v1 switch list, the sandbox portal's buttons): the
   * public plans on sale (active, not archived) of the subscription's product, billed on its
   * interval and length, that change-plan would accept (`decideMove`, the very rules: not the
   * plans it holds, seats that fit, priced in its currency, a free subscription only free plans,
   * none its payment provider cannot sell).
   * A canceled subscription has none.
   */
  async switchablePlans(tenant: Tenant, id: Id): Promise<{ plans: Plan[]; product: Product; currencies: ReadonlyMap<Id, Currency> }> {
    const now = this.deps.clock.now();
    return this.deps.uow.run(async (r) => {
      const s = await loadOwned(r, tenant, id, false);
      const [plans, product, currencies, currentPlan] = await Promise.all([
        r.plans.listByProduct(s.productId),
        r.products.get(s.productId),
        loadCurrencies(r),
        loadPlan(r, s.planId),
      ]);
      if (!product) return fail(ErrorCodes.PRODUCT_NOT_FOUND, 'product not found');
      const accepted = (target: Plan): boolean => {
        try {
          this.decideMove({
            s,
            licenses: [],
            currentPlan,
            target,
            targetProduct: product,
            currencies,
            proration: 'none',
            now,
            selling: true,
            field: PLAN_CHANGE_FIELD,
          });
          return true;
        } catch (e) {
          if (isDomainError(e) && !isOutage(e)) return false;
          throw e;
        }
      };
      const listed = plans.filter(
        (p) =>
          p.visibility === 'public' && p.active && p.interval === currentPlan.interval && p.length === currentPlan.length && accepted(p),
      );
      return { plans: listed, product, currencies };
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
    return (
      (await this.deps.payments.paymentMethod(s, customer, stored)) ?? fail(ErrorCodes.NOT_FOUND, 'the subscription has no payment method')
    );
  }

  async link(tenant: Tenant, id: Id, kind: 'updatePayment' | 'portal' | 'cancel'): Promise<{ url: string }> {
    const { s, customer } = await this.deps.uow.run(async (r) => {
      const sub = await loadOwned(r, tenant, id, false);
      return { s: sub, customer: await loadCustomer(r, sub) };
    });
    if (kind === 'portal') return this.deps.payments.portalLink(s, customer);
    if (effectiveStatus(s, this.deps.clock.now()) === 'CANCELED') fail(ErrorCodes.SUBSCRIPTION_CANCELED, 'the subscription is canceled');
    return kind === 'updatePayment' ? this.deps.payments.updatePaymentLink(s, customer) : this.deps.payments.cancelLink(s, customer);
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
}
