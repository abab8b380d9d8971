import type { CurrencyOption, LineItem, Quantity, Tier, UsageTerms } from '../model';

/** One line of a period's usage invoice, in the currency's minor unit. */
export interface UsageChargeLine {
  description: string;
  /** Units this line prices. */
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

/** Amounts are priced in millionths of a minor unit, then rounded half up: exact for any catalog amount. */
const SCALE = 1_000_000n;
const scaled = (amount: number) => BigInt(Math.round(amount * 1_000_000));
const rounded = (micro: bigint) => (micro + SCALE / 2n) / SCALE;

/** The billed units of a closed period: what no grant covered, counting the period as at least `minUsage`. */
export function billedUnits(used: Quantity, granted: Quantity, terms: Pick<UsageTerms, 'minUsage'>): Quantity {
  const counted = used > terms.minUsage ? used : terms.minUsage;
  return counted > granted ? counted - granted : 0n;
}

/** The currency option of a metered line item's current price in `currency` (else its default). */
export function usagePriceOption(li: LineItem, currency: string | null): CurrencyOption | undefined {
  const price = li.prices.find((p) => !p.archivedAt) ?? li.prices[0];
  if (!price) return undefined;
  const wanted = currency?.toLowerCase();
  return (
    price.currencyOptions.find((o) => o.currency === wanted) ?? price.currencyOptions.find((o) => o.isDefault) ?? price.currencyOptions[0]
  );
}

const upToOf = (t: Tier): Quantity | null => (t.upTo === 'inf' ? null : BigInt(t.upTo));

/**
 * Prices `units` of a metered line item: per unit (units x unit amount), or by its tiers,
 * graduated (each tier prices the units that fall in it, plus its flat amount once reached) or
 * volume (every unit at the tier the total falls in, plus that tier's flat amount).
 */
export function usageCharge(li: LineItem, option: CurrencyOption | undefined, units: Quantity): UsageCharge {
  const label = li.unitLabel ?? li.meter?.slug ?? 'unit';
  const lines: UsageChargeLine[] = [];
  if (units > 0n && option) {
    const tiers = li.billingScheme === 'tiered' ? option.tiers : [];
    if (tiers.length === 0) {
      const unit = option.unitAmount ?? 0;
      lines.push({
        description: `${units} ${label} × ${li.name}`,
        quantity: units,
        unitAmount: unit,
        amount: rounded(units * scaled(unit)),
      });
    } else if (li.tiersMode === 'volume') {
      const tier = tiers.find((t) => {
        const upTo = upToOf(t);
        return upTo === null || units <= upTo;
      }) as Tier;
      const micro = units * scaled(tier.unitAmount) + scaled(tier.flatAmount ?? 0);
      lines.push({
        description: `${units} ${label} × ${li.name} (volume tier up to ${tier.upTo})`,
        quantity: units,
        unitAmount: tier.unitAmount,
        amount: rounded(micro),
      });
    } else {
      let from = 0n;
      for (const tier of tiers) {
        if (from >= units) break;
        const upTo = upToOf(tier);
        const to = upTo === null || upTo > units ? units : upTo;
        const inTier = to - from;
        if (inTier <= 0n) continue;
        const micro = inTier * scaled(tier.unitAmount) + scaled(tier.flatAmount ?? 0);
        lines.push({
          description: `${inTier} ${label} × ${li.name} (tier ${from + 1n}–${tier.upTo})`,
          quantity: inTier,
          unitAmount: tier.unitAmount,
          amount: rounded(micro),
        });
        from = to;
      }
    }
  }
  return { billedUnits: units, amountMinor: lines.reduce((s, l) => s + l.amount, 0n), lines };
}
