import type { Id, License, Plan, Subscription } from '../../model';
import { NewSeats, seatLicense } from '../../domain/seats';
import { addPlan, billsAsPlan, matchProviderItems, removePlan, syncAddedPlanSeats } from '../../domain/subscription-plans';
import { changePlan, holdsPlan, renew, syncWithProvider, type ProviderItem, type ProviderSnapshot } from '../../domain/subscription';
import { isUuid } from '../../support/text';
import { isPerSeat } from '../../domain/catalog';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Repositories } from '../../ports';
import { ErrorCodes, fail, isDomainError } from '../../errors';
import { limitsOf, type CoreDeps } from '../deps';
import { endSubscriptionUsage, loadCustomer, loadPlan, moveSubscriptionUsage, saveSeats, type WebhookDelivery } from './shared';
import { closeSubscriptionPeriod, startSubscriptionUsage } from '../usage/periods';
import { loadCurrencies } from '../catalog-queries';

export type SyncResult = 'applied' | 'duplicate' | 'unknown';

/** How many times a fetch of the provider's subscription is made again when another change landed meanwhile. */
export const SYNC_ATTEMPTS = 4;
/** The pause before the n-th fetch again: n times this. */
const SYNC_PAUSE_MS = 10;

/** Thrown inside the sync's transaction (rolled back) when the subscription changed since the fetch began. */
class ChangedSinceFetch extends Error {}

/** The payment provider's truth (re-fetched after its webhook) applied to our copy, once per delivery. */
export class ProviderSync {
  constructor(private readonly deps: Pick<CoreDeps, 'uow' | 'clock' | 'ids' | 'limits' | 'logger'>) {}

  /**
   * Status, period, scheduled cancellation and seats as the provider reports them. 'unknown': no
   * such subscription here. A provider that lists its items (Stripe) has them told apart by plan
   * (`matchProviderItems`): the first plan's seats follow its item, each added plan's its own; an
   * added plan whose item the provider removed ends with its seats; an item that names a plan of
   * the organisation the subscription does not hold, at that plan's price (made by a plan's add
   * whose write was lost) is adopted as that added plan (`adopt`); any other item no plan claims is logged and left.
   */
  async sync(
    paymentSubscriptionId: string,
    snapshot: ProviderSnapshot,
    delivery?: WebhookDelivery,
    fetchedAfter?: { revision: string | null },
  ): Promise<SyncResult> {
    return this.fromProvider(paymentSubscriptionId, delivery, async (r, s, now) => {
      if (fetchedAfter && fetchedAfter.revision !== ((await r.subscriptions.revision(s.id)) ?? null)) throw new ChangedSinceFetch();
      const [held, customer, heldLicenses] = await Promise.all([
        loadPlan(r, s.planId),
        loadCustomer(r, s),
        r.licenses.listBySubscription(s.id),
      ]);
      const maxSeats = limitsOf(this.deps).maxSeats;
      const plans = new Map<Id, Plan>([[held.id, held]]);
      if (snapshot.items) for (const a of s.addedPlans) plans.set(a.planId, await loadPlan(r, a.planId));
      const match = snapshot.items ? matchProviderItems(s, plans, snapshot.items, snapshot.itemsComplete !== false) : undefined;
      const unclaimed = new Set<ProviderItem>(match?.unknown ?? []);
      // The first plan's item at another plan's price: the plan was changed at the provider (every
      // item given, so that the first plan's is not a guess).
      const moved =
        match && snapshot.itemsComplete !== false && match.first
          ? await this.followPlanChange(r, s, held, heldLicenses, snapshot, match.first, now)
          : { subscription: s, plan: held, licenses: heldLicenses };
      const { plan, licenses } = moved;
      // The first plan's quantity: its own item's (no item left for it: its seats stay as they are).
      const quantity = match ? (match.first?.quantity ?? s.quantity) : snapshot.quantity;
      const newSeats = (sub: Subscription, count: number) =>
        new NewSeats(seatLicense(sub, plan, customer.value, '', now), count, () => this.deps.ids.newId());
      const out = syncWithProvider(moved.subscription, licenses, { ...snapshot, quantity }, now, newSeats, maxSeats);
      let sub = out.subscription;
      let saved = out.saved;
      const removed = [...out.removed];
      const added = [out.added];
      if (match && sub.status !== 'CANCELED') {
        for (const [planId, itemId] of match.learnt)
          sub = { ...sub, addedPlans: sub.addedPlans.map((a) => (a.planId === planId ? { ...a, paymentItemId: itemId } : a)) };
        for (const [planId, item] of match.added) {
          const held = sub.addedPlans.find((a) => a.planId === planId);
          const live = saved.filter((l) => l.planId === planId);
          if (!held || (held.quantity === item.quantity && live.length === Math.min(item.quantity, maxSeats))) continue;
          const change = syncAddedPlanSeats({
            subscription: sub,
            plan: plans.get(planId) as Plan,
            licenses: live,
            quantity: item.quantity,
            now,
            newId: () => this.deps.ids.newId(),
            maxSeats,
          });
          sub = change.subscription;
          added.push(change.added);
          const gone = new Set(change.removed.map((l) => l.id));
          removed.push(...change.removed);
          saved = saved.filter((l) => !gone.has(l.id));
        }
        for (const planId of match.gone) {
          // Removed at the provider: the plan and its seats end now, as a removal through the API.
          const ended = removePlan({ subscription: sub, planId, licenses: saved, at: 'items', now });
          sub = ended.subscription;
          const byId = new Map<string, License>(ended.ended.map((l) => [l.id, l]));
          saved = saved.map((l) => byId.get(l.id) ?? l);
        }
        for (const item of match.unknown) {
          const adopted = await this.adopt(r, sub, saved, item, now);
          if (!adopted) continue;
          // Adopted, or refused and logged as an error (it names a plan here): not logged again below.
          unclaimed.delete(item);
          if (adopted === 'refused') continue;
          sub = adopted.subscription;
          added.push(adopted.seats);
        }
      }
      for (const item of unclaimed)
        this.deps.logger?.info('provider subscription item of no plan here, left as it is', {
          subscriptionId: s.id,
          paymentSubscriptionId,
          itemId: item.id,
          priceId: item.priceId,
        });
      await r.subscriptions.save(sub);
      await r.licenses.deleteMany(removed.map((l) => l.id));
      await r.licenses.saveMany(saved);
      for (const a of added) await saveSeats(r, a);
      // The provider ended the subscription or renewed it: the ended period's usage closes here, once
      // (its key), whichever of its events comes first (Stripe sends the subscription's update at a
      // renewal before the paid invoice, which then finds the period moved); the provider bills it
      // from the meter events it was sent. A renewal is a period that starts later (at the old end,
      // or now: a trial ended early, a plan of another interval); a period end moved within its
      // period (a trial extended) is not. A subscription canceled here that the provider revived (a
      // reactivation whose event came late) starts its usage again.
      if (s.status !== 'CANCELED' && sub.status === 'CANCELED')
        // The period it ended in is the one held before this sync (a snapshot may renew and end it at
        // once), closed at its end or now when that is sooner (ended within it): a subscription the
        // provider revives in the same period then closes its usage again at the period's end.
        await endSubscriptionUsage(r, this.deps.ids, undefined, {
          subscription: s,
          plan,
          periodEnd: now < s.currentPeriodEnd ? now : s.currentPeriodEnd,
          now,
        });
      else if (s.status === 'CANCELED' && sub.status !== 'CANCELED') await startSubscriptionUsage(r, this.deps.ids, sub, plan, now);
      else if (sub.status !== 'CANCELED' && sub.currentPeriodStart > s.currentPeriodStart) {
        // The ended period was the plan held before a switch at the provider that came with the
        // renewal (a change scheduled for the period's end): its meters close, what the customer
        // keeps goes to the new plan's, which start their period.
        const closed = await closeSubscriptionPeriod(r, this.deps.ids, {
          subscription: s,
          plan: held,
          periodEnd: s.currentPeriodEnd,
          next: { start: sub.currentPeriodStart, end: sub.currentPeriodEnd, plan, subscription: sub },
          keepGrants: plan.id !== held.id,
          now,
        });
        if (plan.id !== held.id) await startSubscriptionUsage(r, this.deps.ids, sub, plan, now, closed);
      } else if (sub.status !== 'CANCELED' && plan.id !== held.id)
        // A switch within the period: the meters the two plans meter differently close now (the
        // provider bills them from the meter events it was sent) and start again on the new plan.
        await moveSubscriptionUsage(r, this.deps.ids, undefined, { subscription: sub, from: held, to: plan, now });
    });
  }

  /**
   * Fetches the provider's subscription (`fetch`) and applies it (sync), never over a newer one.
   * Two webhooks of one subscription run at once (Stripe sends them concurrently, in any order): a
   * snapshot fetched before another sync committed may be older than the one that sync applied,
   * and written after it would put the older state back. So the subscription row's revision is
   * read before the fetch, and the snapshot is applied only if nothing changed it since (checked under
   * its row lock); otherwise it is fetched again after a short pause (SYNC_ATTEMPTS in all,
   * then a 409 CONFLICT, which the provider's webhook retries). Applied snapshots are thus fetched in the order they commit.
   */
  async syncFetched(
    paymentSubscriptionId: string,
    fetch: () => Promise<ProviderSnapshot>,
    delivery?: WebhookDelivery,
  ): Promise<SyncResult> {
    for (let attempt = 1; ; attempt++) {
      const revision = await this.deps.uow.read(async (r) => {
        const found = await r.subscriptions.findByPaymentId(paymentSubscriptionId);
        return (found && (await r.subscriptions.revision(found.id))) ?? null;
      });
      const snapshot = await fetch();
      try {
        return await this.sync(paymentSubscriptionId, snapshot, delivery, { revision });
      } catch (e) {
        if (!(e instanceof ChangedSinceFetch)) throw e;
        if (attempt === SYNC_ATTEMPTS)
          fail(ErrorCodes.CONFLICT, 'the subscription kept changing while it was read from the payment provider; retry');
        // Deliveries that landed together take turns (each round one applies): a short pause between them.
        await sleep(SYNC_PAUSE_MS * attempt);
      }
    }
  }

  /**
   * An item the provider bills that names a plan (`planId`, Stripe's `metadata.tollgatePlan`) of the
   * subscription's organisation and mode which the subscription does not hold: a plan's add whose
   * write here was lost after the provider made its item (a crash, or an outage whose removal again
   * failed). It is adopted only when it bills what Tollgate would bill for that plan (`billsAsPlan`:
   * the plan's provider price, else its amount per seat in the subscription's currency on its
   * interval) and the rules of an add hold (not usage-based, the subscription's interval, the seat
   * minimum, the seat maximum; not that the plan be sellable now: `adopting`). It is then recorded
   * as the completed add would have recorded it (the item's id and seats; the seats go to the
   * subscription group's members, as an add without a grantee gives them), since that is what the
   * customer pays for and what the vendor asked (docs/decisions.md, "Items Stripe bills whose write
   * was lost" and "Review of the adoption"). A name alone is never trusted.
   * undefined: the item names no plan of this organisation and mode (the caller logs it, `info`).
   * 'refused': it names one but is left (a plan held already: billed twice; another price; a
   * usage-based plan; an add the rules refuse), logged here as an error for an operator.
   */
  private async adopt(
    r: Repositories,
    s: Subscription,
    licenses: License[],
    item: ProviderItem,
    now: Date,
  ): Promise<{ subscription: Subscription; seats: NewSeats } | 'refused' | undefined> {
    const planId = item.planId;
    if (!planId || !isUuid(planId)) return undefined;
    const named = await r.plans.get(planId);
    if (!named || named.organisationId !== s.organisationId || named.isTest !== s.isTest) return undefined;
    const refuse = (reason: string): 'refused' => {
      this.deps.logger?.error(
        'provider subscription item naming a plan here not adopted: the provider bills what the subscription does not hold',
        {
          subscriptionId: s.id,
          paymentSubscriptionId: s.paymentSubscriptionId,
          itemId: item.id,
          priceId: item.priceId,
          planId,
          quantity: item.quantity,
          reason,
        },
      );
      return 'refused';
    };
    // A second item of a plan held (an add retried before its webhook landed): the provider bills the
    // plan twice. Left for an operator to remove at the provider (never removed here: it may be the
    // one the customer's seats are on).
    if (holdsPlan(s, planId)) return refuse('the subscription holds this plan already: the provider bills it twice');
    const plan = await loadPlan(r, planId);
    if (plan.usageBased) return refuse('a usage-based plan is sold as a subscription of its own, never added to one');
    const unlike = billsAsPlan(item, plan, s.currency, await loadCurrencies(r));
    if (unlike) return refuse(`the item does not bill what the plan costs: ${unlike}`);
    // A plan not sold per seat is billed once a period: an item of another quantity bills it 0 or
    // several times (its add records one seat whatever the item says).
    if (!isPerSeat(plan) && item.quantity !== 1)
      return refuse(`the plan is not sold per seat, and the item bills it ${item.quantity} times`);
    const [product, firstPlan] = await Promise.all([r.products.get(plan.productId), loadPlan(r, s.planId)]);
    if (!product) return refuse("the plan's product could not be read");
    try {
      const done = addPlan({
        subscription: s,
        firstPlan,
        plan,
        product,
        licenses,
        quantity: item.quantity,
        at: 'items',
        now,
        newId: () => this.deps.ids.newId(),
        maxSeats: limitsOf(this.deps).maxSeats,
        // Every rule of an add but that the plan be sellable now (the add was decided when it was).
        adopting: true,
      });
      const subscription = {
        ...done.subscription,
        addedPlans: done.subscription.addedPlans.map((a) => (a.id === done.added.id ? { ...a, paymentItemId: item.id } : a)),
      };
      this.deps.logger?.info('provider subscription item of a plan not held here adopted: its add was not written here', {
        subscriptionId: s.id,
        planId,
        itemId: item.id,
        quantity: done.added.quantity,
      });
      return { subscription, seats: done.seats };
    } catch (e) {
      if (isDomainError(e)) return refuse(e.message);
      throw e;
    }
  }

  /**
   * A plan changed at the provider (Stripe's dashboard, or its customer portal where a customer
   * switches prices): the first plan's item bills the provider price (`providerPlanId`) of another
   * plan of the subscription's product, or (a price of no plan here: an inline price) names another
   * plan of the product (`planId`, written by Tollgate's own plan change whose write was lost) and
   * bills what that plan costs (`billsAsPlan`; otherwise logged as an error and left), so
   * the subscription moves to that plan here too, as a plan change through the API moves it (its
   * first plan's seats follow; nothing prorated here, the provider billed it). Followed only
   * between plans that are not usage-based (a usage-based change starts a new subscription, which
   * the provider did not) and when the move is allowed (the target sellable, the subscription
   * running); otherwise logged and left.
   */
  private async followPlanChange(
    r: Repositories,
    s: Subscription,
    plan: Plan,
    licenses: License[],
    snapshot: ProviderSnapshot,
    item: ProviderItem,
    now: Date,
  ): Promise<{ subscription: Subscription; plan: Plan; licenses: License[] }> {
    const unchanged = { subscription: s, plan, licenses };
    const priceId = item.priceId;
    if (!priceId || priceId === plan.providerPlanId || s.status === 'CANCELED' || snapshot.status === 'CANCELED') return unchanged;
    const all = await r.plans.listByProduct(s.productId);
    const others = all.filter((p) => p.id !== plan.id && !s.addedPlans.some((a) => a.planId === p.id));
    // A price of a plan wins over the plan the item names (a switch in the provider's portal keeps
    // the item's metadata); the name counts only for a price of no plan here (an inline price).
    const priced = all.some((p) => p.providerPlanId === priceId);
    const byPrice = others.find((p) => p.providerPlanId === priceId);
    const found = byPrice ?? (!priced && item.planId ? others.find((p) => p.id === item.planId) : undefined);
    // An inline price Tollgate made for the plan held: nothing moved.
    if (!found && !priced && item.planId === plan.id) return unchanged;
    // Whole, as a plan change loads it (its features and line items: the usage it meters).
    const target = found && (await loadPlan(r, found.id));
    const leave = (reason: string) => {
      this.deps.logger?.info('plan changed at the payment provider, not followed', {
        subscriptionId: s.id,
        planId: plan.id,
        providerPlanId: priceId,
        targetPlanId: target?.id ?? null,
        reason,
      });
      return unchanged;
    };
    // A plan sold at an inline price (made per checkout) shows another price every time: only a plan
    // with a provider price of its own tells a switch, to a price of no plan of the product here.
    if (!target)
      return plan.providerPlanId || item.planId ? leave('the price is no plan of the product (another product, or none here)') : unchanged;
    // Found by the item's name alone: followed only when the item bills what the plan costs (a name
    // edited at the provider, or an item at $0 or at a cheaper plan's price, is no upgrade here).
    const unlike = byPrice
      ? undefined
      : target.usageBased
        ? 'a usage-based plan is never moved to by a plan change here'
        : billsAsPlan(item, target, s.currency, await loadCurrencies(r));
    if (unlike) {
      this.deps.logger?.error(
        'plan changed at the payment provider by the name on its item only, not followed: the item does not bill what the plan costs',
        {
          subscriptionId: s.id,
          paymentSubscriptionId: s.paymentSubscriptionId,
          itemId: item.id,
          priceId,
          planId: plan.id,
          targetPlanId: target.id,
          reason: unlike,
        },
      );
      return unchanged;
    }
    if (plan.usageBased || target.usageBased) return leave('a usage-based plan change starts a new subscription here');
    const product = await r.products.get(s.productId);
    if (!product) return unchanged;
    try {
      const change = changePlan({
        subscription: s,
        licenses,
        currentPlan: plan,
        target,
        targetProduct: product,
        proration: 'none',
        now,
        newId: () => this.deps.ids.newId(),
        // Switched at the provider: the provider bills it.
        billed: true,
      });
      if (change.kind !== 'moved') return leave('not a move');
      return { subscription: change.subscription, plan: target, licenses: change.licenses };
    } catch (e) {
      if (isDomainError(e)) return leave(e.message);
      throw e;
    }
  }

  /** A paid invoice for a new period: the subscription and its licenses run to `periodEnd`. */
  async renew(paymentSubscriptionId: string, periodStart: Date, periodEnd: Date, delivery?: WebhookDelivery): Promise<SyncResult> {
    return this.fromProvider(paymentSubscriptionId, delivery, async (r, s, now) => {
      if (s.status === 'CANCELED' || periodEnd <= s.currentPeriodEnd) return;
      const change = renew(s, await r.licenses.listBySubscription(s.id), periodStart, periodEnd, now);
      await r.subscriptions.save(change.subscription);
      await r.licenses.saveMany(change.licenses);
      // The ended period's usage becomes final (the provider bills it from the meter events it was
      // sent); the next period starts from the allowance plus rollover. Once per period, as in the sweep.
      const plan = await loadPlan(r, s.planId);
      await closeSubscriptionPeriod(r, this.deps.ids, {
        subscription: s,
        plan,
        periodEnd: s.currentPeriodEnd,
        next: { start: periodStart, end: periodEnd, plan, subscription: change.subscription },
        now,
      });
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
}
