import type { CurrencyOption, Interval, LineItem, Quantity, Tier, UsageTerms } from '../model';
import { formatUnits, MAX_SIGNIFICANT_DIGITS } from './usage';
import { addInterval } from './time';
import { currentPrice } from './catalog';

/**
 * The minimum of a period a balance covered in part: `minUsage` in proportion to the time it
 * covered (`from` to `to`) of one interval of the plan from the subscription's period start,
 * rounded down; the whole minimum when it covered that much or more. A balance opened at a plan
 * move, or closed when the subscription was canceled now or moved, owes the minimum of the time it
 * ran, so a period split between two plans never bills two whole minimums (a peer's minimums
 * prorate the same way).
 */
export function minimumFor(
  minUsage: Quantity,
  plan: { interval: Interval; length: number },
  span: { periodStart: Date; from: Date; to: Date },
): Quantity {
  if (minUsage === 0n) return minUsage;
  const whole = addInterval(span.periodStart, plan.interval, Math.max(1, plan.length)).getTime() - span.periodStart.getTime();
  const covered = span.to.getTime() - span.from.getTime();
  if (covered >= whole || whole <= 0) return minUsage;
  return covered <= 0 ? 0n : (minUsage * BigInt(covered)) / BigInt(whole);
}

/** One line of a period's usage invoice, in the currency's minor unit. */
export interface UsageChargeLine {
  description: string;
  /** Units this line prices, in steps of the meter (units x 10^scale). */
  quantity: Quantity;
  /** Price of one unit (minor units, may be fractional as the catalog's amounts are); null: a flat amount. */
  unitAmount: number | null;
  amount: Quantity;
}

export interface UsageCharge {
  /** Units the period is billed for: at least `minUsage`, less what grants covered. */
  billedUnits: Quantity;
  amountMinor: Quantity;
  lines: UsageChargeLine[];
}

/**
 * The exact decimal value of an amount: the digits of the shortest decimal text that names the
 * number (what JSON shows and what was sent, for any number of at most 15 significant digits) and
 * its places (`0.0000075`: 75 and 7). Never a binary fraction: a price is billed as it reads.
 */
export function exactDecimal(n: number): { digits: bigint; places: number } {
  if (!Number.isFinite(n)) throw new RangeError(`${n} is not a finite amount`);
  const m = /^(-?)([0-9]+)(?:\.([0-9]+))?(?:e([+-][0-9]+))?$/.exec(String(n)) as RegExpExecArray;
  const fraction = m[3] ?? '';
  const places = fraction.length - Number(m[4] ?? 0);
  const digits = BigInt(`${m[1]}${m[2]}${fraction}`);
  return places < 0 ? { digits: digits * 10n ** BigInt(-places), places: 0 } : { digits, places };
}

/** The significant digits of an amount's shortest decimal text (`0.0000075`: 2). */
export const significantDigits = (n: number): number => String(exactDecimal(n).digits).replace(/^-?0*/, '').length;

/** An amount as its exact decimal text, never in exponent form (`0.0000075`; Stripe's `unit_amount_decimal`). */
export const decimalText = (n: number): string => {
  const { digits, places } = exactDecimal(n);
  return formatUnits(digits, places);
};

/**
 * An amount times 10^`by` (a currency's exponent: major to minor units, or back with a negative
 * one), moved on its decimal text and never multiplied as a binary fraction: `0.000000075` dollars
 * are `0.0000075` cents. Exact whenever the result has at most 15 significant digits (as every
 * amount the catalog API and the catalog file accept has).
 */
export function shiftDecimal(n: number, by: number): number {
  const { digits, places } = exactDecimal(n);
  const to = places - by;
  return to >= 0 ? Number(formatUnits(digits, to)) : Number(digits * 10n ** BigInt(-to));
}

/** Most significant digits an amount may have to be billed as it reads (what a JSON number carries exactly). */
export const AMOUNT_SIGNIFICANT_DIGITS = MAX_SIGNIFICANT_DIGITS;

/**
 * A line's exact amount rounded half up once: steps x unit price + flat amount x 10^scale, over
 * 10^scale, each price taken at its exact decimal value (any number of places: the API keeps up to
 * 12 below the minor unit, as Stripe's `unit_amount_decimal`), so nothing is rounded before the line.
 */
const linePrice = (steps: Quantity, unitAmount: number, flatAmount: number, one: bigint): Quantity => {
  const unit = exactDecimal(unitAmount);
  const flat = exactDecimal(flatAmount);
  const places = Math.max(unit.places, flat.places);
  const at = (d: { digits: bigint; places: number }) => d.digits * 10n ** BigInt(places - d.places);
  const divisor = 10n ** BigInt(places) * one;
  return (steps * at(unit) + at(flat) * one + divisor / 2n) / divisor;
};

/** The billed units of a closed period: what no grant covered, counting the period as at least `minUsage`. */
export function billedUnits(used: Quantity, granted: Quantity, terms: Pick<UsageTerms, 'minUsage'>): Quantity {
  const counted = used > terms.minUsage ? used : terms.minUsage;
  return counted > granted ? counted - granted : 0n;
}

/**
 * The currency option a metered line item bills in: its current price's (else its first's) option
 * in `currency`, never another currency's (its amounts are not the subscription's money); undefined
 * when it has none. Only without a currency (no subscription's to bill in) is the default option taken.
 */
export function usagePriceOption(li: LineItem, currency: string | null): CurrencyOption | undefined {
  const price = currentPrice(li) ?? li.prices[0];
  if (!price) return undefined;
  if (!currency) return price.currencyOptions.find((o) => o.isDefault) ?? price.currencyOptions[0];
  const wanted = currency.toLowerCase();
  return price.currencyOptions.find((o) => o.currency.toLowerCase() === wanted);
}

/** A bound (decimal text in units, or inf) in steps of a meter of `scale`; null: inf. */
const boundOf = (upTo: string, scale: number): Quantity | null => {
  if (upTo === 'inf') return null;
  // Bounds are checked against the meter's scale when saved; places past it could only be dropped.
  const [whole, fraction = ''] = upTo.split('.');
  return BigInt(whole + fraction.slice(0, scale).padEnd(scale, '0'));
};

/**
 * A tier's upper bound in steps; null: open-ended. The last tier is open-ended whatever its bound
 * says (Stripe requires `inf` there; the published catalog API takes any bound, and so do saves
 * here): every unit is billed, none free past the last bound, and no period close fails for want of
 * a tier.
 */
const upToOf = (tiers: readonly Tier[], i: number, scale: number): Quantity | null =>
  i === tiers.length - 1 ? null : boundOf(tiers[i].upTo, scale);

/**
 * Prices `units` of a metered line item: per unit (units x unit amount), or by its tiers,
 * graduated (each tier prices the units that fall in it, plus its flat amount once reached) or
 * volume (every unit at the tier the total falls in, plus that tier's flat amount). `units` counts
 * the steps of a meter of `scale` decimal places (0: whole units); tier bounds are in units.
 */
export function usageCharge(li: LineItem, option: CurrencyOption | undefined, units: Quantity, scale = 0): UsageCharge {
  const label = li.unitLabel ?? li.meter?.slug ?? 'unit';
  const one = 10n ** BigInt(scale);
  const shown = (q: Quantity) => formatUnits(q, scale);
  const lines: UsageChargeLine[] = [];
  if (units > 0n && option) {
    const tiers = li.billingScheme === 'tiered' ? option.tiers : [];
    if (tiers.length === 0) {
      const unit = option.unitAmount ?? 0;
      lines.push({
        description: `${shown(units)} ${label} × ${li.name}`,
        quantity: units,
        unitAmount: unit,
        amount: linePrice(units, unit, 0, one),
      });
    } else if (li.tiersMode === 'volume') {
      const tier = tiers.find((_, i) => {
        const upTo = upToOf(tiers, i, scale);
        return upTo === null || units <= upTo;
      }) as Tier;
      lines.push({
        description: `${shown(units)} ${label} × ${li.name} (volume tier up to ${tier.upTo})`,
        quantity: units,
        unitAmount: tier.unitAmount,
        amount: linePrice(units, tier.unitAmount, tier.flatAmount ?? 0, one),
      });
    } else {
      let from = 0n;
      for (const [i, tier] of tiers.entries()) {
        if (from >= units) break;
        const upTo = upToOf(tiers, i, scale);
        const to = upTo === null || upTo > units ? units : upTo;
        const inTier = to - from;
        if (inTier <= 0n) continue;
        // Whole units name a tier by its first and last unit (1–500); decimal ones by where it starts (0–2.5).
        const range = scale ? `${shown(from)}–${tier.upTo}` : `${from + 1n}–${tier.upTo}`;
        lines.push({
          description: `${shown(inTier)} ${label} × ${li.name} (tier ${range})`,
          quantity: inTier,
          unitAmount: tier.unitAmount,
          amount: linePrice(inTier, tier.unitAmount, tier.flatAmount ?? 0, one),
        });
        from = to;
      }
    }
  }
  return { billedUnits: units, amountMinor: lines.reduce((s, l) => s + l.amount, 0n), lines };
}
