import { ErrorCodes, fail, invalid } from '../errors';
import type { LineItem, Plan, Price, Product } from '../model';
import { currencyExponent } from '../support/money';

/** Billing's digits of a currency (defined beside the money formatter, which shows the same). */
export { currencyExponent };

export const isArchived = (r: { archivedAt: Date | null }): boolean => r.archivedAt !== null;

export function archiveProduct(product: Product, now: Date): Product {
  if (product.archivedAt) fail(ErrorCodes.PRODUCT_ARCHIVED, 'product is already archived');
  return { ...product, archivedAt: now, updatedAt: now };
}

export function archivePlan(plan: Plan, now: Date): Plan {
  if (plan.archivedAt) fail(ErrorCodes.PLAN_ARCHIVED, 'plan is already archived');
  return { ...plan, archivedAt: now, updatedAt: now };
}

/**
 * An archived product is read-only (published archiveProduct), and what belongs to it: 400
 * PRODUCT_ARCHIVED with `message`, naming `property` with `error`.
 */
export function assertProductOpen(
  product: Pick<Product, 'archivedAt'>,
  property: string,
  message: string,
  error = 'is of an archived product',
): void {
  if (product.archivedAt) fail(ErrorCodes.PRODUCT_ARCHIVED, message, [{ property, error }]);
}

/** A plan can be bought or moved to only while it and its product are not archived. */
export function assertPlanSellable(plan: Plan, product: Product): void {
  if (plan.archivedAt) fail(ErrorCodes.PLAN_ARCHIVED, 'the plan is archived');
  if (product.archivedAt) fail(ErrorCodes.PLAN_ARCHIVED, "the plan's product is archived");
  if (plan.productId !== product.id) fail(ErrorCodes.PLAN_NOT_IN_PRODUCT, 'the plan belongs to another product');
}

/**
 * A new sale (a checkout link, a cart's item, a checkout of several plans) also needs the plan on
 * sale: `active: false` takes a plan off sale without archiving it. What a vendor does on purpose
 * (licenses, adoptions, moves, adding a plan to a subscription) and a checkout completing keep to
 * `assertPlanSellable` (docs/decisions.md, "Inactive plans are not sold").
 */
export function assertPlanOnSale(plan: Plan, product: Product): void {
  assertPlanSellable(plan, product);
  if (!plan.active) fail(ErrorCodes.PLAN_NOT_ON_SALE, `the plan ${plan.displayName || plan.name} is not on sale (active: false)`);
}

/** A line item that meters usage now: metered, on a meter, not archived (what makes a plan usage-based). */
export const isLiveMeteredLine = (li: LineItem): boolean => li.priceType === 'metered' && !!li.meter && !li.archivedAt;

/** The price a line item bills with now: its first one not archived. */
export const currentPrice = (li: LineItem): Price | undefined => li.prices.find((p) => !p.archivedAt);

/**
 * A plan priced by its line items alone (saved through the catalog API's `plans/save`, without the
 * legacy plan currencies a catalog file gives): its seats, currencies and amounts are its line items'.
 */
export const pricedByLineItems = (plan: Plan): boolean => plan.currencies.length === 0 && plan.lineItems.length > 0;

/** The active per-seat line item of a plan priced by its line items, if any. */
const seatLineItem = (plan: Plan) =>
  pricedByLineItems(plan) ? plan.lineItems.find((li) => li.priceType === 'per_seat' && !li.archivedAt) : undefined;

export const isPerSeat = (plan: Plan): boolean => plan.licenseType === 'perSeat' || seatLineItem(plan) !== undefined;

/** Minimum seats: the plan's `perSeatAmount` (or its per-seat line item's minimum), at least 1. */
export const minimumSeats = (plan: Plan): number => Math.max(1, Math.floor(seatLineItem(plan)?.minQuantity ?? (plan.perSeatAmount || 1)));

/** The currencies (upper case) a plan priced by its line items is sold in: those of its active prices. */
export function lineItemCurrencies(plan: Plan): string[] {
  if (!pricedByLineItems(plan)) return [];
  const out = new Set<string>();
  for (const li of plan.lineItems.filter((l) => !l.archivedAt))
    for (const p of li.prices.filter((x) => !x.archivedAt)) for (const o of p.currencyOptions) out.add(o.currency.toUpperCase());
  return [...out];
}

/**
 * A line-item plan's price per seat (per-seat plans: the per-seat line item's) or per period (the
 * flat-rate line items' together) in a currency, minor units, from each line item's first active price.
 */
function lineItemAmount(plan: Plan, currency: string): number {
  const amountOf = (li: Plan['lineItems'][number]) =>
    currentPrice(li)?.currencyOptions.find((o) => o.currency.toUpperCase() === currency)?.unitAmount ?? 0;
  const seat = seatLineItem(plan);
  if (seat) return amountOf(seat);
  return plan.lineItems.filter((li) => !li.archivedAt && li.priceType === 'flat_rate').reduce((sum, li) => sum + amountOf(li), 0);
}

/** A product is paid when any of its plans is. */
export const isPaidProduct = (plans: Plan[]): boolean => plans.some((p) => p.pricingType === 'paid');

/** The legacy/v1 status of a product or plan: CANCELLED iff archived. */
export const legacyStatus = (r: { archivedAt: Date | null }): 'ACTIVE' | 'CANCELLED' => (r.archivedAt ? 'CANCELLED' : 'ACTIVE');

export const toMajor = (minor: number, currency: string): number => minor / 10 ** currencyExponent(currency);
/**
 * A price in major units as whole minor units, exactly: an amount with more places than the
 * currency's minor unit (`12.345` dollars, `10.5` yen) is a RangeError, never rounded (callers
 * check it first, naming the field). The product is read back to the same number, which holds
 * exactly when the amount is a whole number of minor units.
 */
export const toMinor = (major: number, currency: string): number => {
  const minor = Math.round(major * 10 ** currencyExponent(currency));
  if (!Number.isSafeInteger(minor) || toMajor(minor, currency) !== major)
    throw new RangeError(`${major} ${currency.toUpperCase()} is not a whole number of minor units`);
  return minor;
};

/**
 * Whether a metered line item charges for usage in a currency (by short name): false when its
 * price has options that charge (a price above 0) but none in it (the period close bills usage in the subscription's currency
 * only: sold in another, the meter would go unbilled); a line item without a price, or whose price
 * has no option at all, meters without charging in any currency.
 */
export function usagePricedIn(li: LineItem, currency: string): boolean {
  const options = (currentPrice(li) ?? li.prices[0])?.currencyOptions ?? [];
  // A meter priced at 0 in every currency it names (a catalog file's free meter) bills nothing anywhere.
  return !options.some(currencyOptionCharges) || options.some((o) => o.currency.toUpperCase() === currency.toUpperCase());
}

/** Whether a currency option charges anything: a unit amount or a tier's unit or flat amount above 0. */
export const currencyOptionCharges = (o: LineItem['prices'][number]['currencyOptions'][number]): boolean =>
  (o.unitAmount ?? 0) > 0 || o.tiers.some((t) => t.unitAmount > 0 || (t.flatAmount ?? 0) > 0);

/**
 * Whether the plan can be sold in a currency (by short name): a free plan when each of its meters
 * that charges is priced in it (always, without such meters); one priced by
 * its line items when every active line item's current price has an option in it (the metered
 * ones too: their usage is billed in it); any other when it has a plan currency of that name and
 * every metered line item that charges for usage has a price in it too (a catalog file's plan:
 * `prices` in dollars and yen with usage priced in dollars alone is sold in dollars only).
 * Sold in a currency it has no price in, a paid plan would cost nothing (`unitAmount` is 0 there),
 * and a meter would go unbilled (the period close never bills one currency's amounts in another).
 */
export function pricedIn(plan: Plan, currency: string, currencies: ReadonlyMap<string, { shortName: string }>): boolean {
  const wanted = currency.toUpperCase();
  // A free plan costs nothing in any currency, but a meter of it that charges bills in its own only.
  if (plan.pricingType === 'free') return plan.lineItems.filter(isLiveMeteredLine).every((li) => usagePricedIn(li, wanted));
  if (!pricedByLineItems(plan))
    return (
      plan.currencies.some((c) => currencies.get(c.currencyId)?.shortName.toUpperCase() === wanted) &&
      plan.lineItems.filter(isLiveMeteredLine).every((li) => usagePricedIn(li, wanted))
    );
  const options = plan.lineItems
    .filter((li) => !li.archivedAt)
    .map((li) => currentPrice(li)?.currencyOptions)
    .filter((o) => o !== undefined);
  return options.length > 0 && options.every((o) => o.some((x) => x.currency.toUpperCase() === wanted));
}

/** Refuses a paid plan in a currency it has no price in (400 naming `property`). */
export function assertPricedIn(
  plan: Plan,
  currency: string,
  currencies: ReadonlyMap<string, { shortName: string }>,
  property: string,
): void {
  if (!pricedIn(plan, currency, currencies))
    fail(ErrorCodes.CHECKOUT_CURRENCY_NOT_SUPPORTED, `the plan ${plan.displayName} has no price in ${currency.toUpperCase()}`, [
      { property, error: `the plan ${plan.displayName} has no price in ${currency.toUpperCase()}` },
    ]);
}

/** A line item's current price's option in a currency (by short name, any case), if any. */
const optionIn = (li: LineItem, currency: string) =>
  currentPrice(li)?.currencyOptions.find((o) => o.currency.toUpperCase() === currency.toUpperCase());

/**
 * Why a paid plan priced by its line items would not be billed in a currency as its line items
 * price it there (what each charges in another currency does not matter), naming
 * the first line item billing would drop or repeat; undefined when it would be (and for any other
 * plan). Billing charges a plan's price per seat (its per-seat line item's) or per period (its
 * flat-rate line items' together) every period, and meters' usage at the period's close (see
 * `lineItemAmount`, docs/decisions.md "Fees Tollgate cannot bill yet"), so:
 * - a one-off fee (a set-up fee, a lifetime price) would be charged every period;
 * - a fee beside the per-seat line item (a base fee, a second per-seat price) would not be charged;
 * - a seat or flat price by tiers would be charged its plain amount.
 */
export function unbilledLine(plan: Plan, currency: string): string | undefined {
  if (plan.pricingType === 'free' || !pricedByLineItems(plan)) return undefined;
  const seat = seatLineItem(plan);
  for (const li of plan.lineItems) {
    const o = optionIn(li, currency);
    const charges = !!o && ((o.unitAmount ?? 0) > 0 || o.tiers.some((t) => t.unitAmount > 0 || (t.flatAmount ?? 0) > 0));
    if (li.archivedAt || li.priceType === 'metered' || !charges) continue;
    if (o.tiers.length > 0) return `its line item ${li.slug} is priced by tiers, which Tollgate bills on metered line items only`;
    if (li.intervalType === 'one_off')
      return `its line item ${li.slug} is a one-off fee, which Tollgate would charge every period (one-off prices are not sold yet)`;
    if (seat && li !== seat)
      return `its line item ${li.slug} would not be charged: beside a per-seat line item (${seat.slug}) Tollgate charges that line item alone`;
  }
  return undefined;
}

/**
 * Refuses to sell a plan Tollgate would not bill as its line items price it (`unbilledLine`): a 400
 * naming `property`, where the plan is sold (checkout, cart, added plan, plan change), never where
 * a payment completes.
 */
export function assertBilledAsPriced(plan: Plan, currency: string, property: string): void {
  const why = unbilledLine(plan, currency);
  if (why) invalid(property, `the plan ${plan.displayName} cannot be sold: ${why}`);
}

/** The plan's price per seat per period in a currency (by short name), minor units; 0 when free or not priced in it. */
export function unitAmount(plan: Plan, currency: string, currencies: ReadonlyMap<string, { shortName: string }>): number {
  if (plan.pricingType === 'free') return 0;
  const wanted = currency.toUpperCase();
  if (pricedByLineItems(plan)) return lineItemAmount(plan, wanted);
  return plan.currencies.find((c) => currencies.get(c.currencyId)?.shortName.toUpperCase() === wanted)?.amountMinor ?? 0;
}
