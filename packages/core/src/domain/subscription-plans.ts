import { ErrorCodes, fail, invalid } from '../errors';
import type { AddedPlan, Id, License, Plan, Product, Subscription } from '../model';
import { assertPlanSellable, isPerSeat, minimumSeats, pricedIn, unbilledLine, unitAmount } from './catalog';
import { DEFAULT_MAX_SEATS } from './limits';
import { NewSeats } from './new-seats';
import { seatHolders } from './people';
import { assertSeatTotal, seatLicense } from './seats';
import { effectiveStatus, heldPlanIds, holdsPlan, type ProviderItem } from './subscription';

/**
 * A subscription of several plans (the catalog API's subscription plans, issue #20): plans are
 * added to and removed from a running subscription with `PUT /api/subscriptions/:id/items`. The
 * first plan stays the subscription's own (`planId`, `quantity`, `lineItemIds`: what legacy, v1,
 * v2 and v3 show); the others are `addedPlans`. A plan's seats are the subscription's licenses of
 * that plan. Pure: the use case loads, calls these, and writes what they return.
 */

const isOpen = (l: License) => l.status !== 'CANCELED';

/** The seats (licenses) of one plan of the subscription. */
export const seatsOfPlan = (licenses: License[], planId: Id): License[] => licenses.filter((l) => l.planId === planId);

export interface AddPlanInput {
  subscription: Subscription;
  /** The plan the subscription holds first (its interval is the subscription's). */
  firstPlan: Plan;
  plan: Plan;
  product: Product;
  /** Every license of the subscription: its group's members get the new plan's seats. */
  licenses: License[];
  /** Seats asked (a per-seat plan's `metadata` quantity); absent: the plan's minimum, grown to the members. */
  quantity?: number;
  /** Who gets the first seat (absent: the subscription group's members, one seat each). */
  granteeId?: string;
  /** Who get the seats, one each, in order (a purchase for a group's members); wins over `granteeId`. */
  grantees?: readonly string[];
  /** Where in the request the item is (`items[2]`), for the errors. */
  at: string;
  /** The request's field naming the plan, when it is not `${at}.planId` (a replace's `newPlanId`). */
  field?: string;
  now: Date;
  newId: () => Id;
  maxSeats?: number;
  /**
   * A plan a checkout's completion adds (a cart's, paid at the provider): the rules of the sale
   * (sellable, not usage-based, the cart's interval, the seat minimum) held when its session was
   * made; only what keeps the subscription whole (tenant, each plan once, seat bounds) is checked.
   */
  completing?: boolean;
  /**
   * An item the provider bills at the plan's own price whose add was not written here (the
   * re-sync's adoption, `billsAsPlan` checked first): every rule of a sale holds (not usage-based,
   * the subscription's interval, the seat minimum) but that the plan and its product be sellable
   * now: the add was decided when they were, and an archive since ends new sales, not what the
   * customer is billed for (docs/decisions.md, "Review of the adoption").
   */
  adopting?: boolean;
}

/**
 * Adds a plan to a running subscription: sellable, not usage-based (a usage plan meters a
 * subscription of its own), not held already, billed on the subscription's interval. Its seats
 * go to the subscription group's members (or the named grantee), as many as there are seats.
 */
export function addPlan(input: AddPlanInput): { subscription: Subscription; added: AddedPlan; seats: NewSeats } {
  const { subscription: s, plan, firstPlan, at, now } = input;
  const field = input.field ?? `${at}.planId`;
  if (effectiveStatus(s, now) === 'CANCELED') invalid(`${at}.action`, 'the subscription is canceled: plans cannot be added to it');
  const sale = !input.completing;
  if (sale && !input.adopting) assertPlanSellable(plan, input.product);
  else if (plan.productId !== input.product.id) invalid(field, 'names no plan');
  if (plan.organisationId !== s.organisationId || plan.isTest !== s.isTest) invalid(field, 'names no plan');
  if (holdsPlan(s, plan.id))
    invalid(
      field,
      `the subscription holds this plan already (its seats: PUT /api/subscription-plans/${subscriptionPlanIdOf(s, plan.id)}/seats)`,
    );
  if (sale && plan.usageBased) invalid(field, 'a usage-based plan is sold as a subscription of its own (POST /api/checkout)');
  if (sale && (plan.interval !== firstPlan.interval || plan.length !== firstPlan.length))
    invalid(
      field,
      `the plan is billed every ${plan.length} ${plan.interval}(s) and the subscription every ${firstPlan.length} ${firstPlan.interval}(s): sell it as another subscription`,
    );
  const members = input.grantees ?? (input.granteeId !== undefined ? [input.granteeId] : seatHolders(input.licenses));
  // At completion the seats are those paid for, whatever the plan's minimum is now.
  const min = sale ? minimumSeats(plan) : 1;
  let quantity = 1;
  if (isPerSeat(plan)) {
    if (input.quantity !== undefined && (!Number.isInteger(input.quantity) || input.quantity < min))
      invalid(`${at}.metadata`, `the plan needs at least ${min} seat(s)`);
    quantity = input.quantity ?? Math.max(min, members.length);
  }
  const total = s.quantity + s.addedPlans.reduce((n, a) => n + a.quantity, 0) + quantity;
  assertSeatTotal(total, input.maxSeats ?? DEFAULT_MAX_SEATS);
  const added: AddedPlan = {
    id: input.newId(),
    planId: plan.id,
    quantity,
    lineItemIds: plan.lineItems.map((li) => li.id),
    createdAt: now,
    updatedAt: now,
  };
  const subscription = { ...s, addedPlans: [...s.addedPlans, added], updatedAt: now };
  const template: License = {
    ...seatLicense(subscription, plan, input.licenses[0]?.purchaser ?? '', '', now),
    productId: plan.productId,
    planId: plan.id,
  };
  return { subscription, added, seats: new NewSeats(template, quantity, input.newId, members) };
}

/**
 * Removes a plan from a running subscription: its seats end now. Removing the only plan would end
 * the subscription (400: cancel it instead). Removing the first plan makes the first added plan
 * the first (`next`: that plan, loaded by the caller): its subscription plan takes the
 * subscription's id.
 */
export function removePlan(input: {
  subscription: Subscription;
  planId: Id;
  licenses: License[];
  /** The first added plan, when the first plan is the one removed. */
  next?: Plan;
  at: string;
  now: Date;
}): { subscription: Subscription; ended: License[] } {
  const { subscription: s, planId, at, now } = input;
  if (effectiveStatus(s, now) === 'CANCELED') invalid(`${at}.action`, 'the subscription is canceled: its plans change no more');
  if (!holdsPlan(s, planId)) invalid(`${at}.planId`, 'is not a plan of this subscription');
  if (heldPlanIds(s).length === 1)
    invalid(
      `${at}.action`,
      `removing the only plan of a subscription would end it: cancel it instead (POST /api/subscriptions/${s.id}/cancel now, or PUT /api/subscriptions/${s.id}/auto-renew?status=disable at the end of its period), or add another plan in the same request to move to it`,
    );
  const ended = seatsOfPlan(input.licenses, planId)
    .filter(isOpen)
    .map((l) => ({ ...l, status: 'CANCELED' as const, cancelAtPeriodEnd: false, endTime: now, updatedAt: now }));
  if (planId !== s.planId)
    return { subscription: { ...s, addedPlans: s.addedPlans.filter((a) => a.planId !== planId), updatedAt: now }, ended };
  const [first, ...rest] = s.addedPlans;
  const next = input.next;
  if (!next || next.id !== first.planId) return invalid(`${at}.planId`, 'the plan to hold first could not be read');
  return {
    subscription: {
      ...s,
      planId: first.planId,
      productId: next.productId,
      type: next.licenseType,
      quantity: first.quantity,
      lineItemIds: first.lineItemIds,
      addedPlans: rest,
      updatedAt: now,
    },
    ended,
  };
}

/** The id of the subscription plan that holds `planId`: the subscription's own for its first plan. */
export function subscriptionPlanIdOf(s: Subscription, planId: Id): Id {
  return planId === s.planId ? s.id : (s.addedPlans.find((a) => a.planId === planId)?.id ?? s.id);
}

/** An added plan's seats brought to `quantity` (set by the vendor, or synced from the provider). */
export interface AddedPlanSeats {
  subscription: Subscription;
  plan: Plan;
  /** The plan's open seats (licenses). */
  licenses: License[];
  quantity: number;
  now: Date;
  newId: () => Id;
  maxSeats?: number;
}

/**
 * The seats of a plan added to the subscription set to `quantity`: per seat only, not below the
 * plan's minimum; more seats are added unassigned, fewer remove unassigned ones (newest first),
 * never one a grantee holds (400 `SEATS_EXCEED_UNASSIGNED`).
 */
export function setAddedPlanSeats(input: AddedPlanSeats): {
  subscription: Subscription;
  delta: number;
  added: NewSeats | null;
  removed: License[];
} {
  const { subscription: s, plan, quantity, now } = input;
  const held = s.addedPlans.find((a) => a.planId === plan.id);
  if (!held) return invalid('id', 'is not a plan added to this subscription');
  if (effectiveStatus(s, now) === 'CANCELED') invalid('quantity', 'the subscription is canceled');
  const delta = quantity - held.quantity;
  if (delta === 0) return { subscription: s, delta, added: null, removed: [] };
  if (!isPerSeat(plan)) invalid('quantity', 'seats can change only on a per-seat plan');
  if (quantity < minimumSeats(plan)) fail(ErrorCodes.SEATS_BELOW_MINIMUM, `the plan needs at least ${minimumSeats(plan)} seat(s)`);
  const subscription = {
    ...s,
    addedPlans: s.addedPlans.map((a) => (a.id === held.id ? { ...a, quantity, updatedAt: now } : a)),
    updatedAt: now,
  };
  if (delta > 0) {
    assertSeatTotal(s.quantity + s.addedPlans.reduce((n, a) => n + a.quantity, 0) + delta, input.maxSeats ?? DEFAULT_MAX_SEATS);
    const template: License = {
      ...seatLicense(s, plan, input.licenses[0]?.purchaser ?? '', '', now),
      productId: plan.productId,
      planId: plan.id,
    };
    return { subscription, delta, added: new NewSeats(template, delta, input.newId), removed: [] };
  }
  const free = input.licenses.filter((l) => isOpen(l) && l.granteeId === null);
  if (free.length < -delta)
    fail(ErrorCodes.SEATS_EXCEED_UNASSIGNED, `only ${free.length} unassigned seat(s) can be removed; unassign licenses first`);
  const removed = [...free].sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime() || (a.id < b.id ? 1 : -1)).slice(0, -delta);
  return { subscription, delta, added: null, removed };
}

/** A provider's subscription items told apart by the plan each bills (see `matchProviderItems`). */
export interface ProviderItemMatch {
  /** The first plan's item; absent when none is left for it. */
  first?: ProviderItem;
  /** Each added plan's item, by plan id. */
  added: Map<Id, ProviderItem>;
  /** Added plans whose recorded item the provider no longer has: removed at the provider. */
  gone: Id[];
  /** Added plans whose item was found by its price: their item id is now known. */
  learnt: Map<Id, string>;
  /** Items no plan of the subscription claims: left as they are. */
  unknown: ProviderItem[];
}

/**
 * Tells a provider subscription's items apart by plan (docs/decisions.md, "Subscriptions of
 * several plans"): an added plan's item is the one of its recorded id, else the one whose price is
 * the plan's provider price (`providerPlanId`), else the one naming the plan (`planId`); the first
 * plan's is the one of its provider price, else the one naming it, else the first item no added plan took
 * that names no plan, else the first item no added plan took (the provider's first item, as before several plans). An
 * added plan whose recorded item is gone was removed at the provider (only when the provider gave
 * every item: `complete`). What no plan claims is unknown.
 */
export function matchProviderItems(
  s: Subscription,
  plans: ReadonlyMap<Id, Plan>,
  items: readonly ProviderItem[],
  complete = true,
): ProviderItemMatch {
  const taken = new Set<string>();
  const added = new Map<Id, ProviderItem>();
  const learnt = new Map<Id, string>();
  const gone: Id[] = [];
  for (const a of s.addedPlans) {
    if (!a.paymentItemId) continue;
    const item = items.find((i) => i.id === a.paymentItemId);
    if (item) {
      added.set(a.planId, item);
      taken.add(item.id);
    } else if (complete) gone.push(a.planId);
  }
  for (const a of s.addedPlans) {
    if (a.paymentItemId) continue;
    const price = plans.get(a.planId)?.providerPlanId;
    // By its provider price, else by the plan the item names (an inline price Tollgate made for it).
    const item =
      (price ? items.find((i) => !taken.has(i.id) && i.priceId === price) : undefined) ??
      items.find((i) => !taken.has(i.id) && i.planId === a.planId);
    if (!item) continue;
    added.set(a.planId, item);
    learnt.set(a.planId, item.id);
    taken.add(item.id);
  }
  const firstPrice = plans.get(s.planId)?.providerPlanId;
  const first =
    (firstPrice ? items.find((i) => !taken.has(i.id) && i.priceId === firstPrice) : undefined) ??
    items.find((i) => !taken.has(i.id) && i.planId === s.planId) ??
    // An item naming another plan (an orphaned add, listed first) is not the first plan's when one naming none is left.
    items.find((i) => !taken.has(i.id) && !i.planId) ??
    items.find((i) => !taken.has(i.id));
  if (first) taken.add(first.id);
  return { first, added, gone, learnt, unknown: items.filter((i) => !taken.has(i.id)) };
}

/**
 * An added plan's seats brought to the provider's quantity for its item, as the first plan's are
 * (`syncWithProvider`): unassigned seats added, or unassigned ones removed newest first; an
 * assigned seat is never removed, so the seats may stay above a lowered quantity until unassigned.
 */
export function syncAddedPlanSeats(input: AddedPlanSeats): { subscription: Subscription; added: NewSeats | null; removed: License[] } {
  const { subscription: s, plan, quantity, now } = input;
  const subscription = {
    ...s,
    addedPlans: s.addedPlans.map((a) => (a.planId === plan.id ? { ...a, quantity, updatedAt: now } : a)),
    updatedAt: now,
  };
  const live = input.licenses.filter((l) => isOpen(l) && l.planId === plan.id);
  const wanted = Math.min(quantity, input.maxSeats ?? DEFAULT_MAX_SEATS);
  if (wanted > live.length) {
    const template: License = {
      ...seatLicense(subscription, plan, live[0]?.purchaser ?? input.licenses[0]?.purchaser ?? '', '', now),
      productId: plan.productId,
      planId: plan.id,
    };
    return { subscription, added: new NewSeats(template, wanted - live.length, input.newId), removed: [] };
  }
  const removed = live
    .filter((l) => l.granteeId === null)
    .sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime() || (a.id < b.id ? 1 : -1))
    .slice(0, Math.max(0, live.length - quantity));
  return { subscription, added: null, removed };
}

/**
 * Why an item the provider bills is not what Tollgate bills for `plan` on a subscription in
 * `currency` (undefined when it is): the plan's provider price (`providerPlanId`), else an inline
 * price of the plan's amount per seat (`unitAmount`) in that currency on the plan's interval. A
 * plan Tollgate would not sell in the currency (no price in it, line items it would not bill as
 * priced) matches no item. The re-sync trusts the plan an item names (`planId`) only when it holds:
 * a name alone would let an item at $0, or at a cheaper plan's price, be taken as the plan.
 */
export function billsAsPlan(
  item: ProviderItem,
  plan: Plan,
  currency: string,
  currencies: ReadonlyMap<string, { shortName: string }>,
): string | undefined {
  const wanted = currency.toUpperCase();
  if (!pricedIn(plan, wanted, currencies)) return `the plan has no price in ${wanted}`;
  const unbilled = unbilledLine(plan, wanted);
  if (unbilled) return unbilled;
  if (plan.providerPlanId)
    return item.priceId === plan.providerPlanId ? undefined : `the item's price ${item.priceId} is not the plan's (${plan.providerPlanId})`;
  const amount = unitAmount(plan, wanted, currencies);
  if (item.currency?.toUpperCase() !== wanted || item.unitAmount !== amount)
    return `the item bills ${item.unitAmount ?? 'an unknown amount'} ${item.currency?.toUpperCase() ?? '(no currency)'} per seat, the plan ${amount} ${wanted}`;
  if (item.interval !== plan.interval || item.intervalCount !== plan.length)
    return `the item bills every ${item.intervalCount ?? '?'} ${item.interval ?? '?'}(s), the plan every ${plan.length} ${plan.interval}(s)`;
  return undefined;
}
