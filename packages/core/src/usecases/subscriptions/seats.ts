import { ErrorCodes, fail, invalid, isDomainError, isOutage } from '../../errors';
import type { DomainEvent, Id, Plan, Proration, SeatChange, Subscription, Tenant } from '../../model';
import { addSeats, removeSeats, validateSeatChange, type NewSeats } from '../../domain/seats';
import { seatsOfPlan } from '../../domain/subscription-plans';
import { unitAmount } from '../../domain/catalog';
import type { ProviderOutcome, Repositories } from '../../ports';
import { limitsOf, type CoreDeps } from '../deps';
import { loadCurrencies } from '../catalog-queries';
import { afterProvider, billedByProvider, loadCustomer, loadOwned, loadPlan, saveOutcome, saveSeats } from './shared';

/** A seat change decided on one state of the subscription. */
interface SeatDecision {
  before: Subscription;
  subscription: Subscription;
  plan: Plan;
  added: NewSeats | null;
  removed: Id[];
  price: number;
  /** The member the customer is (the sandbox's invoices show it). */
  member: string;
}

/**
 * Seats as events: a change is checked when asked (400 before anything is queued), queued, and
 * applied by the event worker. Applying is "decide, call the provider, commit": the new quantity
 * is decided on a plain read, the provider is told it outside any transaction, then the change is
 * decided again on the locked row and written. Should the committed quantity differ from what the
 * provider was told (the state moved meanwhile), the provider is told the committed quantity.
 */
export class SeatService {
  constructor(
    private readonly deps: Pick<CoreDeps, 'uow' | 'clock' | 'ids' | 'payments' | 'freeCheckout' | 'events' | 'logger' | 'limits'>,
  ) {}

  /** Checks a seat change now and queues it as an event; returns the queued event. */
  async request(tenant: Tenant, subscriptionId: Id, change: SeatChange): Promise<DomainEvent> {
    return (await this.queue(async (r) => ({
      s: await loadOwned(r, tenant, subscriptionId, false),
      asked: change,
    }))) as DomainEvent;
  }

  /**
   * Asks for the subscription's first plan to hold `quantity` seats (the catalog API's seat PUTs,
   * the sandbox portal): queued as the change from its quantity now (read in the transaction that
   * checks and queues it), applied as the difference from its quantity then. The number held
   * already: nothing is queued (null), unless other changes of the subscription still wait (the
   * number is queued behind them, so it is what the subscription holds once they are applied).
   */
  requestQuantity(tenant: Tenant, subscriptionId: Id, quantity: number, proration: Proration): Promise<DomainEvent | null> {
    return this.queue(async (r) => {
      // Whether a change waits is read before the quantity (each statement sees what was committed
      // when it began): a change the worker commits between the two (its quantity and its event done
      // together) is then in the quantity read, never "held, and nothing waits" decided across it.
      const waiting = await r.events.hasOpen(subscriptionId);
      const s = await loadOwned(r, tenant, subscriptionId, false);
      const delta = quantity - s.quantity;
      if (!Number.isSafeInteger(delta)) invalid('quantity', 'is out of range');
      const change: SeatChange = { type: delta < 0 ? 'seats.decrement' : 'seats.increment', count: Math.abs(delta), proration, quantity };
      return { s, asked: delta !== 0 || waiting ? change : { check: change } };
    });
  }

  /**
   * Checks the change `ask` makes of the subscription it reads and queues it; `{ check }`: checked
   * (a canceled subscription, a plan not per seat are refused) but nothing queued.
   */
  private async queue(
    ask: (r: Repositories) => Promise<{ s: Subscription; asked: SeatChange | { check: SeatChange } }>,
  ): Promise<DomainEvent | null> {
    const now = this.deps.clock.now();
    const event = await this.deps.uow.run(async (r) => {
      const { s, asked } = await ask(r);
      const change = 'check' in asked ? asked.check : asked;
      // The first plan's seats (an added plan's are set through the catalog API's subscription plan).
      const [plan, licenses] = await Promise.all([
        loadPlan(r, s.planId),
        r.licenses.listBySubscription(s.id).then((ls) => seatsOfPlan(ls, s.planId)),
      ]);
      validateSeatChange(s, plan, licenses, change, now, limitsOf(this.deps).maxSeats);
      if ('check' in asked) return null;
      const e: DomainEvent = {
        id: this.deps.ids.newId(),
        organisationId: s.organisationId,
        isTest: s.isTest,
        type: change.type,
        subscriptionId: s.id,
        payload: { ...change, subscriptionId: s.id },
        status: 'queued',
        attempts: 0,
        runAt: now,
        lastError: null,
        errorCode: null,
        lockedUntil: null,
        createdAt: now,
        updatedAt: now,
      };
      await r.events.save(e);
      return e;
    });
    if (event) this.deps.events.wake();
    return event;
  }

  /**
   * Applies a change now: decide, tell the provider, commit. `finish` runs inside the committing
   * transaction (the worker marks its event done there, so the change and its event commit together).
   */
  async apply(
    subscriptionId: Id,
    asked: SeatChange,
    finish?: (r: Repositories) => Promise<void>,
    pin?: (change: SeatChange) => Promise<void>,
  ): Promise<Subscription> {
    let change = asked;
    const first = await this.deps.uow.run((r) => this.decide(r, subscriptionId, change, false));
    if (first.subscription === first.before) {
      // A quantity already held: nothing to tell anyone; the event is done.
      await this.deps.uow.run(async (r) => finish?.(r));
      return first.before;
    }
    if (change.quantity === undefined && pin) {
      // A count of seats more or fewer becomes the number it makes, kept on the event before the
      // provider is told: should the write after it be lost, the retry aims at that number, and a
      // provider re-sync that wrote it meanwhile (Stripe's update) leaves nothing to add again.
      change = { ...change, quantity: first.subscription.quantity };
      await pin(change);
    }
    const outcome = await this.tellProvider(first, change);
    // The change told is the change made only if it was decided on the same state (a quantity asked
    // for ends at the same number from any start, but what the provider billed is the difference).
    const same = (d: SeatDecision) =>
      d.before.quantity === first.before.quantity &&
      d.before.planId === first.before.planId &&
      d.subscription.quantity === first.subscription.quantity;
    // The provider has been told: an outage from here on says so (the change may be partly applied).
    const committed = await afterProvider(this.deps.uow, billedByProvider(first.before, this.deps.freeCheckout), () =>
      this.deps.uow.run(async (r) => {
        const d = await this.decide(r, subscriptionId, change, true);
        if (same(d)) await saveOutcome(r, outcome);
        await r.subscriptions.save(d.subscription);
        await r.licenses.deleteMany(d.removed);
        await saveSeats(r, d.added);
        await finish?.(r);
        return d;
      }),
    ).catch(async (e: unknown) => {
      // Refused on the locked row (the state moved: a seat assigned meanwhile, the subscription
      // canceled): nothing was written, so the provider is told the quantity held again. An outage
      // is retried by the worker instead, deciding again on the same row.
      if (isDomainError(e) && !isOutage(e)) {
        await this.deps.uow
          .run((r) => this.decide(r, subscriptionId, { ...change, type: 'seats.increment', count: 0, quantity: undefined }, false))
          .then((held) => this.tellProvider(held, change))
          .catch((err: unknown) =>
            this.deps.logger?.error('a seat change refused after the payment provider took it could not be taken back there', {
              subscriptionId,
              error: String(err),
            }),
          );
      }
      throw e;
    });
    if (!same(committed)) {
      // The state moved between the two decisions: the provider learns the quantity we committed,
      // and what it bills for the change made is kept (the first answer was not).
      await this.tellProvider(committed, change)
        .then(async (o) => {
          if (committed.subscription !== committed.before) await this.deps.uow.run((r) => saveOutcome(r, o));
        })
        .catch((e) => this.deps.logger?.error('seat quantity re-sync with the provider failed', { subscriptionId, error: String(e) }));
    }
    return committed.subscription;
  }

  private async decide(r: Repositories, subscriptionId: Id, change: SeatChange, forUpdate: boolean): Promise<SeatDecision> {
    const now = this.deps.clock.now();
    const s =
      (forUpdate ? await r.subscriptions.getForUpdate(subscriptionId) : await r.subscriptions.get(subscriptionId)) ??
      fail(ErrorCodes.SUBSCRIPTION_NOT_FOUND, 'subscription not found');
    const [plan, customer, currencies] = await Promise.all([loadPlan(r, s.planId), loadCustomer(r, s), loadCurrencies(r)]);
    const price = unitAmount(plan, s.currency, currencies);
    // A quantity asked for is the difference from the quantity now; a count is taken as it is.
    const delta =
      change.quantity === undefined ? (change.type === 'seats.increment' ? change.count : -change.count) : change.quantity - s.quantity;
    const member = customer.value;
    if (delta === 0) return { before: s, subscription: s, plan, added: null, removed: [], price, member };
    if (delta > 0) {
      const added = addSeats(s, plan, customer.value, delta, now, () => this.deps.ids.newId(), limitsOf(this.deps).maxSeats);
      return { before: s, subscription: added.subscription, plan, added: added.created, removed: [], price, member };
    }
    const removed = removeSeats(s, plan, seatsOfPlan(await r.licenses.listBySubscription(s.id), s.planId), -delta, now);
    return {
      before: s,
      subscription: removed.subscription,
      plan,
      added: null,
      removed: removed.removed.map((l) => l.id),
      price,
      member,
    };
  }

  private tellProvider(d: SeatDecision, change: SeatChange): Promise<ProviderOutcome> {
    return this.deps.payments.changeSeats(d.before, d.plan, d.subscription.quantity, change.proration, d.price, d.member);
  }
}
