import { ErrorCodes, fail, invalid, isDomainError, isOutage } from '../../errors';
import { isUuid } from '../../support/text';
import type { Id, License, LineItemQuantities, Plan, Proration, Subscription, Tenant } from '../../model';
import { assertBilledAsPriced, assertPricedIn, unitAmount } from '../../domain/catalog';
import { quickCheckoutQuantity } from '../../domain/quick-checkout';
import { addPlan, removePlan, seatsOfPlan, setAddedPlanSeats } from '../../domain/subscription-plans';
import { assertCheckableGranteeId } from '../../domain/grantee-ids';
import { resolveCheckoutOptions } from '../../domain/checkout';
import type { NewSeats } from '../../domain/seats';
import { assertAccessible } from '../../domain/tenancy';
import { assertFreeWhenUnbilled, effectiveStatus } from '../../domain/subscription';
import type { PaymentProvider, PlanItemRequest, ProviderOutcome, Repositories } from '../../ports';
import type { CoreDeps } from '../deps';
import { limitsOf } from '../deps';
import { loadCurrencies } from '../catalog-queries';
import {
  afterProvider,
  billedByProvider,
  billingProviderOf,
  loadOwned,
  logLeftover,
  loadPlan,
  moveSubscriptionUsage,
  saveOutcome,
  saveSeats,
} from './shared';

/**
 * One change of a subscription's plans, as the catalog API's items body asks it (`at`: where, for
 * errors). `field`: the request's field naming an added plan, when it is not `${at}.planId` (an
 * added plan's replace: `${at}.newPlanId`).
 */
export type PlanItemStep =
  | { kind: 'add'; planId: Id; at: string; field?: string; granteeId?: string; metadata?: LineItemQuantities }
  | { kind: 'remove'; planId: Id; at: string };

/**
 * Tells `provider` that the plan added to `request.subscription` now has `request.quantity` seats:
 * the number, to a provider that keeps it (`setPlanSeats`, Stripe); else the difference from the
 * seats `request.subscription` holds of the plan, as the plan's seats added or removed
 * (`addPlan`/`removePlan` of that many: the sandbox), and nothing when there is none. A provider
 * that can do neither refuses (PAYMENT_NOT_AVAILABLE). The one implementation of the port's
 * `setPlanSeats` fallback: the use case's and the runtime's mode router's.
 */
export async function setPlanSeatsAt(
  provider: Pick<PaymentProvider, 'name' | 'addPlan' | 'removePlan' | 'setPlanSeats'>,
  request: PlanItemRequest,
): Promise<ProviderOutcome> {
  if (provider.setPlanSeats) return provider.setPlanSeats(request);
  const held = request.subscription.addedPlans.find((a) => a.planId === request.plan.id)?.quantity ?? 0;
  const delta = request.quantity - held;
  if (delta === 0) return {};
  const change = delta > 0 ? provider.addPlan : provider.removePlan;
  if (!change) return fail(ErrorCodes.PAYMENT_NOT_AVAILABLE, `subscriptions paid through ${provider.name} hold one plan`);
  return change.call(provider, { ...request, quantity: Math.abs(delta) });
}

interface Decision {
  before: Subscription;
  subscription: Subscription;
  seats: NewSeats[];
  ended: License[];
  /** What the provider is told, in order (`promoted`: the plan a removal of the first plan makes the first). */
  charges: { kind: 'add' | 'remove'; plan: Plan; quantity: number; unitAmount: number; promoted?: Plan }[];
}

/**
 * Plans added to and removed from a subscription (`PUT /api/subscriptions/:id/items`), all of a
 * request or none: decided on a plain read (a refusal changes nothing and calls no provider), told
 * to the provider outside any transaction, then decided again on the subscription's row locked
 * for update and written in one transaction, so two concurrent changes of one subscription never
 * lose one (the second decides on what the first wrote). See docs/decisions.md, "Subscriptions of
 * several plans".
 */
export class SubscriptionItems {
  constructor(
    private readonly deps: Pick<CoreDeps, 'uow' | 'clock' | 'ids' | 'payments' | 'testPayments' | 'freeCheckout' | 'limits' | 'logger'>,
  ) {}

  async change(tenant: Tenant, id: Id, steps: PlanItemStep[], proration: Proration): Promise<Subscription> {
    for (const step of steps)
      if (step.kind === 'add' && step.granteeId !== undefined) assertCheckableGranteeId(`${step.at}.grantee`, step.granteeId);
    const now = this.deps.clock.now();
    const first = await this.deps.uow.run(async (r) => {
      const d = await this.decide(r, tenant, id, steps, now, false);
      // The member the customer is, for what the provider shows (the sandbox's invoices).
      return { ...d, member: (await r.customers.get(d.before.customerId))?.value };
    });
    const provider = this.providerOf(first.before);
    const outcomes: { planId: Id; outcome: ProviderOutcome }[] = [];
    if (provider && first.charges.length && (!provider.addPlan || !provider.removePlan))
      return invalid(
        'items',
        `subscriptions paid through ${provider.name} hold one plan: replace it (action replace), or sell the plan as another subscription (POST /api/checkout)`,
      );
    // The provider refused a later plan of the request, or took the change but it could not be
    // written here (decided again on the locked row: a concurrent change made it invalid, or the
    // database failed; or, in an idempotent request, its transaction failed later): the items made
    // at the provider for the plans added are deleted again (unprorated, best effort, logged when
    // that fails, once), so the provider does not bill a plan Tollgate does not hold. A removal the
    // provider made stays made: the next re-sync ends the plan here (its recorded item is gone).
    let undone = false;
    const undoAdded = async () => {
      if (undone || !provider?.removePlan) return;
      undone = true;
      for (const o of outcomes.filter((x) => x.outcome.paymentItemId)) {
        const c = first.charges.find((x) => x.kind === 'add' && x.plan.id === o.planId);
        if (!c) continue;
        await provider
          .removePlan({
            subscription: first.before,
            plan: c.plan,
            quantity: c.quantity,
            unitAmount: c.unitAmount,
            proration: 'none',
            paymentItemId: o.outcome.paymentItemId,
            member: first.member,
          })
          .then(() =>
            // Logged for reconciliation: had the write's COMMIT landed after all (an answer in
            // doubt), the plan is held here without its item until the provider's re-sync ends it.
            this.deps.logger?.info('a plan added at the payment provider was removed there again: the local write failed', {
              subscriptionId: id,
              planId: o.planId,
              paymentItemId: o.outcome.paymentItemId,
            }),
          )
          .catch((err: unknown) =>
            this.deps.logger?.error('a plan added at the payment provider could not be removed again after the local write failed', {
              subscriptionId: id,
              planId: o.planId,
              paymentItemId: o.outcome.paymentItemId,
              error: (err as Error).message,
            }),
          );
      }
    };
    try {
      if (provider?.addPlan && provider.removePlan) {
        // The provider is told first (a refusal changes nothing here), in the request's order.
        const requestId = this.deps.ids.newId();
        for (const c of first.charges) {
          const request = {
            subscription: first.before,
            plan: c.plan,
            quantity: c.quantity,
            unitAmount: c.unitAmount,
            proration,
            requestId,
            paymentItemId: first.before.addedPlans.find((a) => a.planId === c.plan.id)?.paymentItemId ?? null,
            member: first.member,
            ...(c.promoted ? { promoted: c.promoted } : {}),
          };
          const outcome = await (c.kind === 'add' ? provider.addPlan(request) : provider.removePlan(request));
          // Made at the provider with items left over (Stripe: old metered items not deleted): written, and logged.
          logLeftover(this.deps.logger, outcome, { subscriptionId: id, planId: c.plan.id });
          outcomes.push({ planId: c.plan.id, outcome });
        }
      }
      // Once the provider was told, an outage says so (the change may be partly applied there).
      const write = () => this.write(tenant, id, steps, now, outcomes);
      return await afterProvider(this.deps.uow, outcomes.length > 0, write, undoAdded);
    } catch (e) {
      await undoAdded();
      throw e;
    }
  }

  private write(
    tenant: Tenant,
    id: Id,
    steps: PlanItemStep[],
    now: Date,
    outcomes: { planId: Id; outcome: ProviderOutcome }[],
  ): Promise<Subscription> {
    return this.deps.uow.run(async (r) => {
      // The provider's item of each plan added (Stripe's subscription item) stays with it.
      const items = new Map(outcomes.filter((o) => o.outcome.paymentItemId).map((o) => [o.planId, o.outcome.paymentItemId as string]));
      const d = await this.decide(r, tenant, id, steps, now, true, items);
      const subscription = items.size
        ? {
            ...d.subscription,
            addedPlans: d.subscription.addedPlans.map((a) => (items.has(a.planId) ? { ...a, paymentItemId: items.get(a.planId) } : a)),
          }
        : d.subscription;
      for (const o of outcomes) await saveOutcome(r, o.outcome);
      await r.subscriptions.save(subscription);
      for (const s of d.seats) await saveSeats(r, s);
      if (d.ended.length) await r.licenses.saveMany(d.ended);
      if (subscription.planId !== d.before.planId)
        // The first plan removed, the next one promoted: the subscription's usage moves to its meters.
        await moveSubscriptionUsage(r, this.deps.ids, billingProviderOf(this.deps, d.before), {
          subscription,
          from: await loadPlan(r, d.before.planId),
          to: await loadPlan(r, subscription.planId),
          now: this.deps.clock.now(),
        });
      return subscription;
    });
  }

  /** The provider that bills the subscription: none for one started without payment, or through the free checkout. */
  private providerOf(s: Subscription): Pick<PaymentProvider, 'name' | 'addPlan' | 'removePlan' | 'setPlanSeats' | 'syncPrice'> | undefined {
    return billedByProvider(s, this.deps.freeCheckout) ? this.deps.payments : undefined;
  }

  /** `made`: the provider's item of each plan this request added there (on the locked row only). */
  private async decide(
    r: Repositories,
    tenant: Tenant,
    id: Id,
    steps: PlanItemStep[],
    now: Date,
    forUpdate: boolean,
    made?: ReadonlyMap<Id, string>,
  ): Promise<Decision> {
    const before = await loadOwned(r, tenant, id, forUpdate);
    const billed = billedByProvider(before, this.deps.freeCheckout);
    const currencies = await loadCurrencies(r);
    let licenses = await r.licenses.listBySubscription(before.id);
    let s = before;
    const seats: NewSeats[] = [];
    const ended: License[] = [];
    const charges: Decision['charges'] = [];
    const added = new Set(steps.filter((x) => x.kind === 'add').map((x) => x.planId));
    const both = steps.find((x) => x.kind === 'remove' && added.has(x.planId));
    if (both) invalid('items', `the plan ${both.planId} is both added and removed`);
    // Adds first, then removes: removing the only plan and adding another in one request is a move.
    const ordered = [...steps.filter((x) => x.kind === 'add'), ...steps.filter((x) => x.kind === 'remove')];
    for (const step of ordered) {
      if (step.kind === 'add') {
        // The provider's webhook for this very add came first and its re-sync adopted the item
        // (ProviderSync's `adopt`): the plan is held with the item made for it, so the add is done.
        if (made?.has(step.planId) && s.addedPlans.some((a) => a.planId === step.planId && a.paymentItemId === made.get(step.planId)))
          continue;
        if (!isUuid(step.planId)) fail(ErrorCodes.PLAN_NOT_FOUND, 'plan not found');
        const plan = assertAccessible(await r.plans.get(step.planId), tenant, 'plan');
        const product = assertAccessible(await r.products.get(plan.productId), tenant, 'product');
        const field = step.field ?? `${step.at}.planId`;
        // No provider bills the subscription (the free checkout's, or one made without payment):
        // the sweep renews it for nothing, so a paid plan added (or moved to by a remove and an add,
        // or an added plan's replace) would never be charged. As change-plan decides (`changePlan`).
        if (!billed) assertFreeWhenUnbilled(plan, field);
        const firstPlan = await loadPlan(r, s.planId);
        // Sold in the subscription's currency, as its line items price it, or refused naming the
        // item: decided before the provider is told, not again in the write after it (the provider
        // added the plan as it was priced then).
        if (!forUpdate) {
          try {
            resolveCheckoutOptions({ currency: s.currency }, plan, product, currencies);
            assertPricedIn(plan, s.currency, currencies, field);
          } catch {
            invalid(field, `the plan is not sold in ${s.currency}, the subscription's currency`);
          }
          assertBilledAsPriced(plan, s.currency, field);
        }
        const price = unitAmount(plan, s.currency, currencies);
        const quantity = quickCheckoutQuantity(plan, step.metadata);
        const added = addPlan({
          subscription: s,
          firstPlan,
          plan,
          product,
          licenses,
          quantity,
          granteeId: step.granteeId,
          at: step.at,
          field,
          now,
          newId: () => this.deps.ids.newId(),
          maxSeats: limitsOf(this.deps).maxSeats,
        });
        s = added.subscription;
        seats.push(added.seats);
        charges.push({ kind: 'add', plan, quantity: added.added.quantity, unitAmount: price });
      } else {
        const held = step.planId === s.planId ? s.quantity : s.addedPlans.find((a) => a.planId === step.planId)?.quantity;
        const next = step.planId === s.planId && s.addedPlans.length ? await loadPlan(r, s.addedPlans[0].planId) : undefined;
        const removed = removePlan({ subscription: s, planId: step.planId, licenses, next, at: step.at, now });
        const plan = await loadPlan(r, step.planId);
        if (plan.usageBased) invalid(`${step.at}.planId`, 'a usage-based plan ends with its subscription: cancel it instead');
        // The plan promoted bills the subscription's usage from then on: one its provider cannot
        // bill (Stripe: a charging metered line item without a Stripe price) is refused before the
        // provider is told anything, as a plan change to it is.
        // Asked of the provider that bills the subscription (as the switch list does): under a live
        // Stripe key `payments` is the router, whose pick by the plan's mode may not be it (a test
        // subscription the sandbox bills).
        const why = next && !forUpdate && billed ? billingProviderOf(this.deps, before)?.unsellable?.(next, before.currency) : undefined;
        if (why && next) invalid(`${step.at}.planId`, `removing it makes ${next.displayName} the subscription's first plan: ${why}`);
        s = removed.subscription;
        const endedIds = new Set(removed.ended.map((l) => l.id));
        ended.push(...removed.ended);
        licenses = licenses.map((l) => (endedIds.has(l.id) ? (removed.ended.find((e) => e.id === l.id) as License) : l));
        charges.push({
          kind: 'remove',
          plan,
          quantity: held ?? 1,
          unitAmount: unitAmount(plan, before.currency, currencies),
          ...(next ? { promoted: next } : {}),
        });
      }
    }
    // Seats made by an earlier add are not in `licenses`: the removes after it end only seats that were there.
    return { before, subscription: s, seats, ended, charges };
  }

  /**
   * Sets the seats of a plan added to the subscription (its first plan's seats are the v1 seat
   * change): per seat only, not below the plan's minimum; fewer seats remove unassigned ones only.
   * Applied now, in one transaction; the provider is told first: its item's quantity set
   * (`setPlanSeats`, Stripe), else the difference as the plan's seats added or removed (the
   * sandbox), prorated as asked.
   */
  async setAddedSeats(tenant: Tenant, id: Id, planId: Id, quantity: number, proration: Proration): Promise<void> {
    const now = this.deps.clock.now();
    const decide = async (r: Repositories, forUpdate: boolean) => {
      const s = await loadOwned(r, tenant, id, forUpdate);
      const plan = await loadPlan(r, planId);
      const licenses = seatsOfPlan(await r.licenses.listBySubscription(s.id), planId);
      const change = setAddedPlanSeats({ subscription: s, plan, licenses, quantity, now, newId: () => this.deps.ids.newId() });
      const price = unitAmount(plan, s.currency, await loadCurrencies(r));
      // The member the customer is, for what the provider shows (the sandbox's invoices).
      const member = (await r.customers.get(s.customerId))?.value;
      return { s, plan, change, price, member };
    };
    const first = await this.deps.uow.run((r) => decide(r, false));
    if (first.change.delta === 0) return;
    const provider = this.providerOf(first.s);
    if (provider && !provider.setPlanSeats && (!provider.addPlan || !provider.removePlan))
      return invalid('quantity', `subscriptions paid through ${provider.name} hold one plan`);
    /** What the provider is told of the plan on the decided state. */
    const base = (d: typeof first) => ({
      subscription: d.s,
      plan: d.plan,
      unitAmount: d.price,
      proration,
      requestId: this.deps.ids.newId(),
      paymentItemId: d.s.addedPlans.find((a) => a.planId === planId)?.paymentItemId ?? null,
      member: d.member,
    });
    /** Tells the provider the decided change: the number (setPlanSeats, Stripe), else the difference (the sandbox). */
    const tell = async (d: typeof first): Promise<ProviderOutcome | undefined> =>
      provider ? setPlanSeatsAt(provider, { ...base(d), quantity }) : undefined;
    const outcome = await tell(first);
    const write = () =>
      this.deps.uow.run(async (r) => {
        const locked = await decide(r, true);
        // What the provider billed is kept only if it is the change made: an identical request that
        // ran meanwhile (a retry, two clients) leaves nothing to change, and its charge is not kept twice.
        if (outcome && locked.change.delta === first.change.delta) await saveOutcome(r, outcome);
        if (locked.change.delta === 0) return locked;
        await r.subscriptions.save(locked.change.subscription);
        await saveSeats(r, locked.change.added);
        if (locked.change.removed.length) await r.licenses.deleteMany(locked.change.removed.map((l) => l.id));
        return locked;
      });
    const committed = await afterProvider(this.deps.uow, provider !== undefined, write).catch(async (e: unknown) => {
      // Refused on the locked row (a seat assigned meanwhile, the subscription canceled): nothing was
      // written, so a provider that keeps the number (Stripe) is told the number held again (the
      // sandbox keeps nothing). An outage says the change may be partly applied instead.
      const setPlanSeats = provider?.setPlanSeats;
      if (setPlanSeats && isDomainError(e) && !isOutage(e)) {
        await this.deps.uow
          .run((r) => loadOwned(r, tenant, id, false))
          .then((s) => {
            const held = s.addedPlans.find((a) => a.planId === planId);
            if (!held) return;
            const paymentItemId = held.paymentItemId ?? null;
            return setPlanSeats.call(provider, { ...base(first), subscription: s, paymentItemId, quantity: held.quantity });
          })
          .catch((err: unknown) =>
            this.deps.logger?.error('added plan seats refused after the payment provider took them could not be taken back there', {
              subscriptionId: id,
              planId,
              error: String(err),
            }),
          );
      }
      throw e;
    });
    if (provider && committed.change.delta !== 0 && committed.change.delta !== first.change.delta) {
      // The seats moved between the two decisions: the provider is told the change committed, and what it bills is kept.
      await tell(committed)
        .then((o) => this.deps.uow.run((r) => saveOutcome(r, o)))
        .catch((e: unknown) =>
          this.deps.logger?.error('added plan seats re-sync with the provider failed', { subscriptionId: id, planId, error: String(e) }),
        );
    }
  }

  /**
   * Brings a subscription-plan line item to its line item's current price (published #86): the
   * provider's subscription item moves to it, unprorated, so the next invoice bills it. Providers
   * that bill each period at the plan's current price (the sandbox, the free checkout, none) have
   * nothing to move. An added plan's line item on a provider that keeps prices (Stripe) is refused:
   * only the first plan's item is moved (not built for added plans).
   */
  async syncLineItemPrice(tenant: Tenant, subscriptionId: Id, planId: Id): Promise<void> {
    const { s, plan, price } = await this.deps.uow.read(async (r) => {
      const sub = await loadOwned(r, tenant, subscriptionId, false);
      const p = await loadPlan(r, planId);
      return { s: sub, plan: p, price: unitAmount(p, sub.currency, await loadCurrencies(r)) };
    });
    const provider = this.providerOf(s);
    if (!provider?.syncPrice) return;
    if (planId !== s.planId)
      return invalid('id', `on ${provider.name} only the first plan's line item is synced: this line item is of a plan added to it`);
    if (effectiveStatus(s, this.deps.clock.now()) === 'CANCELED') return invalid('id', 'the subscription is canceled');
    const outcome = await provider.syncPrice(s, plan, price);
    await afterProvider(this.deps.uow, true, () => this.deps.uow.run((r) => saveOutcome(r, outcome)));
  }
}
