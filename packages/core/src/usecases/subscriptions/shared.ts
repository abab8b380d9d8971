import { ErrorCodes, fail, outageAfter } from '../../errors';
import type { Customer, Id, Plan, Subscription, Tenant } from '../../model';
import { assertAccessible } from '../../domain/tenancy';
import type { NewSeats } from '../../domain/seats';
import { subscriptionGroup } from '../../domain/people';
import type { IdGenerator, Logger, PaymentProvider, ProviderOutcome, Repositories, UnitOfWork } from '../../ports';
import { closeSubscriptionPeriod, metersChanged, startSubscriptionUsage, usageInvoiceLines, type BilledPeriod } from '../usage/periods';

/** The tenant's subscription (locked for the unit of work with `forUpdate`). */
export async function loadOwned(r: Repositories, tenant: Tenant, id: Id, forUpdate: boolean): Promise<Subscription> {
  const s = forUpdate ? await r.subscriptions.getForUpdate(id) : await r.subscriptions.get(id);
  return assertAccessible(s, tenant, 'subscription');
}

/**
 * Locks subscriptions, in id order, until the unit of work ends. Every writer of a subscription's
 * seats holds its row lock, taken before any license lock (the seat worker, the sweeps, provider
 * sync, cancel and reactivate lock the subscription, then read and write its licenses): a grantee
 * change then waits for a seat change decided on a read of the licenses, and never lands between
 * that read and its write (a seat deleted under a new grantee, or a grantee change written over).
 */
export async function lockSubscriptions(r: Repositories, ids: Iterable<Id>): Promise<void> {
  for (const id of [...new Set(ids)].sort()) await r.subscriptions.getForUpdate(id);
}

/** Locks the subscriptions these licenses are seats of (in id order): first, before the licenses themselves. */
export async function lockSubscriptionsOf(r: Repositories, licenseIds: Id[]): Promise<void> {
  await lockSubscriptions(r, await r.licenses.subscriptionsOf(licenseIds));
}

export async function loadPlan(r: Repositories, id: Id): Promise<Plan> {
  return (await r.plans.get(id)) ?? fail(ErrorCodes.PLAN_NOT_FOUND, 'plan not found');
}

export async function loadCustomer(r: Repositories, s: Subscription): Promise<Customer> {
  return (await r.customers.get(s.customerId)) ?? fail(ErrorCodes.NOT_FOUND, 'the subscription has no customer');
}

/** Keeps what the provider asked us to keep, inside the caller's transaction. */
export async function saveOutcome(r: Repositories, outcome: ProviderOutcome | void): Promise<void> {
  for (const d of outcome?.documents ?? []) await r.billingDocuments.save(d);
}

/**
 * What the provider left undone of a change it made (`ProviderOutcome.leftover`: Stripe's old
 * metered items it did not delete after the update moved the plan), logged as an error naming the
 * items, for an operator to delete them at the provider. The change itself is written: it was made
 * there. Called as the provider answers (before the write, which may fail).
 */
export function logLeftover(logger: Logger | undefined, outcome: ProviderOutcome | void, fields: Record<string, unknown>): void {
  if (outcome?.leftover)
    logger?.error('the payment provider made the change but left items to delete by hand', {
      ...fields,
      items: outcome.leftover.items,
      reason: outcome.leftover.reason,
    });
}

/**
 * The payment provider that bills the subscription, if it is this instance's (none, the free
 * checkout: undefined): `payments`, or the provider of another name it recorded (`testPayments`,
 * `otherPayments`: the sandbox under a live Stripe key, whose router is named `stripe`): what
 * closes such a subscription's usage bills it through the sandbox, as the router sends its other
 * calls there.
 */
export const billingProviderOf = (
  deps: { payments?: PaymentProvider; testPayments?: PaymentProvider; otherPayments?: PaymentProvider[] },
  s: Subscription,
): PaymentProvider | undefined =>
  [deps.payments, deps.testPayments, ...(deps.otherPayments ?? [])].find((p) => p !== undefined && p.name === s.paymentProvider);

/**
 * A subscription ended (canceled now or at its period's end, here or at the provider, or moved to
 * another plan as a new subscription): the usage of its period closes, once (the final record's
 * key: owner, meter and `periodEnd`), and what it owes is billed through `provider` (the sandbox's
 * invoice lines; a provider that bills from the meter events it was sent has no `usageBilled`).
 * `keepGrants` (a plan change): what grants that are not the plan's were not needed is returned
 * with the billed periods, for the new subscription (startSubscriptionUsage), instead of lapsing.
 * Runs in the caller's transaction, which holds the subscription's row lock.
 */
export async function endSubscriptionUsage(
  r: Repositories,
  ids: IdGenerator,
  provider: Pick<PaymentProvider, 'usageBilled'> | undefined,
  a: { subscription: Subscription; plan: Plan; periodEnd: Date; keepGrants?: boolean; now: Date },
): Promise<BilledPeriod[]> {
  const billed = await closeSubscriptionPeriod(r, ids, { ...a, next: null });
  await billUsage(r, provider, a.subscription, a.plan, billed);
  return billed;
}

async function billUsage(
  r: Repositories,
  provider: Pick<PaymentProvider, 'usageBilled'> | undefined,
  s: Subscription,
  plan: Plan,
  billed: BilledPeriod[],
): Promise<void> {
  const lines = usageInvoiceLines(billed);
  if (!lines.length || !provider?.usageBilled) return;
  const member = (await r.customers.get(s.customerId))?.value;
  await saveOutcome(r, provider.usageBilled(s, plan, lines, member) || undefined);
}

/**
 * A subscription moved to another plan within its period (a plan change that is not usage-based,
 * through the API or at the provider, or its first plan removed and the next one promoted): it
 * still holds its usage, so each meter the two plans meter differently (`metersChanged`: one only,
 * or other terms or prices) closes at the move with the old plan's terms and is billed through
 * `provider` (once: the move's instant is the final record's key), and starts again on the new
 * plan's terms until the period's end, its allowance and cap. The customer's own credits and open
 * holds go to the new plan's balance of the meter; where the new plan does not meter it, credits
 * lapse and holds are released. Nothing rolls over (the period did not end). A meter both plans
 * meter alike is left as it is. `subscription` is the moved one and `now` read under its row
 * lock (a renewal committed while the provider was told has moved its period); runs in the
 * caller's transaction, which holds that lock.
 */
export async function moveSubscriptionUsage(
  r: Repositories,
  ids: IdGenerator,
  provider: Pick<PaymentProvider, 'usageBilled'> | undefined,
  a: { subscription: Subscription; from: Plan; to: Plan; now: Date },
): Promise<void> {
  const s = a.subscription;
  const { changed: meters, newOnly } = await metersChanged(r, ids, a.from, a.to, s.currency, a.now);
  if (!meters.size) return;
  const billed = await closeSubscriptionPeriod(r, ids, {
    subscription: s,
    plan: a.from,
    periodEnd: a.now,
    next: { start: a.now, end: s.currentPeriodEnd, plan: a.to, subscription: s },
    keepGrants: true,
    midPeriod: true,
    meters,
    now: a.now,
  });
  await billUsage(r, provider, s, a.from, billed);
  // What closed here starts again, and what only the target meters; a meter the old plan meters
  // that was closed at this very instant already (its key) is not started twice.
  const closed = new Set(billed.map((b) => b.meter.id));
  const starts = new Set([...meters].filter((m) => closed.has(m) || newOnly.has(m)));
  await startSubscriptionUsage(r, ids, s, a.to, a.now, billed, { start: a.now, meters: starts });
}

/** Writes new seat licenses batch by batch (one multi-row insert each), inside the caller's transaction. */
export async function saveSeats(r: Repositories, seats: NewSeats | null): Promise<void> {
  if (!seats) return;
  for (const batch of seats.batches()) await r.licenses.saveMany(batch);
}

/** Writes a new subscription with the group its seats go to (docs/decisions.md, "Owners, grantees and groups"). */
export async function saveNewSubscription(r: Repositories, s: Subscription): Promise<void> {
  await r.subscriptions.save(s);
  await r.people.saveGroup(subscriptionGroup(s));
}

/** Dedupes a provider's webhook event inside the transaction that applies it. */
export interface WebhookDelivery {
  provider: string;
  eventId: string;
}

/**
 * The last step of a change whose earlier step is already done (a transaction committed, or the
 * payment provider told): an outage there must not answer "nothing was changed", which the unit
 * of work says of its own transaction. The 503 keeps its code and says what was done (`done`) and
 * what to do (`then`) (`outageAfter`). Inside an idempotent request's transaction the step joins
 * it, so the transaction is told (`noteDone`) and answers the same should it fail, running `undo`.
 * See docs/decisions.md, "Changes of more than one step".
 */
export async function afterDone<T>(
  uow: UnitOfWork,
  step: { done: string; then: string; undo?: () => Promise<void> },
  work: () => Promise<T>,
): Promise<T> {
  uow.noteDone?.(step.done, step.then, step.undo);
  try {
    return await work();
  } catch (e) {
    throw outageAfter(e, step.done, step.then);
  }
}

/**
 * Whether a subscription's changes are told to a payment provider that keeps state of its own
 * (not one started without payment, nor through the free checkout).
 */
export const billedByProvider = (s: Subscription, freeCheckout: { name: string } | undefined): boolean =>
  s.paymentProvider !== 'none' && s.paymentProvider !== freeCheckout?.name;

/**
 * The write after a change was told to the payment provider (`told`: it keeps state of its own):
 * an outage then says the change may be partly applied. Otherwise the unit of work's answer stands.
 * `undo` takes back at the provider what can be, should an idempotent request's transaction fail.
 */
export const afterProvider = <T>(uow: UnitOfWork, told: boolean, work: () => Promise<T>, undo?: () => Promise<void>): Promise<T> =>
  told
    ? afterDone(
        uow,
        {
          done: 'the payment provider was told of this change',
          then: 'it may be partly applied, so read the subscription back before retrying',
          undo,
        },
        work,
      )
    : work();
