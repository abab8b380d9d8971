import { invalid } from '../../errors';
import { isCurrencyCode } from '../../support/money';
import { MAX_QUANTITY, termSteps } from '../../domain/usage';
import { AMOUNT_SIGNIFICANT_DIGITS, exactDecimal, significantDigits } from '../../domain/usage-billing';
import type { CurrencyOption, Id, Interval, LineItem, Price, Tier, UsageTerms } from '../../model';
import type { CurrencyOptionDraft, LineItemDraft, PriceDraft } from './inputs';

/** A slug of the real catalog API's form (`^[a-z0-9_]+$`). */
const slugify = (s: string) =>
  s
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '') || 'item';

/** The meter slug a line item draft counts on: given, else what it had, else from its name. */
const meterSlugOf = (d: LineItemDraft, before: LineItem | undefined): string => d.meterSlug ?? before?.meter?.slug ?? slugify(d.name);

/** A date-time of a draft: absent keeps `fallback`, null clears it. */
export const dateOf = (property: string, raw: string | null | undefined, fallback: Date | null): Date | null => {
  if (raw === undefined) return fallback;
  if (raw === null) return null;
  const d = new Date(raw);
  return Number.isNaN(d.getTime()) ? invalid(property, 'must be a date-time') : d;
};

const USAGE_FIELDS = ['allowance', 'maxUsage', 'minUsage', 'rollover'] as const;

/** The largest amount of a price in minor units (Stripe's largest `unit_amount`). */
export const MAX_AMOUNT_MINOR = 99_999_999_999;
/** Most places a per-unit amount of a metered line item may have below the minor unit (Stripe's `unit_amount_decimal`). */
export const AMOUNT_PLACES = 12;

/**
 * An amount in minor units, or a 400 naming the field: 0..MAX_AMOUNT_MINOR, whole (checkout,
 * renewals and Stripe charge whole minor units) except a metered line item's amounts (`perUnit`:
 * its unit amounts and its tiers' unit and flat amounts), which may be fractions of the minor unit
 * as the catalog file's usage prices are (usage billing rounds each line once).
 */
const minorAmount = <T extends number | null | undefined>(property: string, value: T, perUnit: boolean): T => {
  if (value === null || value === undefined) return value;
  if (!Number.isFinite(value) || value < 0 || value > MAX_AMOUNT_MINOR)
    return invalid(property, `must be an amount in minor units from 0 to ${MAX_AMOUNT_MINOR}`);
  if (perUnit) {
    // Read as its shortest decimal text, the one usage billing prices exactly (`exactDecimal`) and
    // the API shows: at most 15 significant digits, so it is the text that was sent.
    if (exactDecimal(value).places > AMOUNT_PLACES)
      invalid(property, `must have at most ${AMOUNT_PLACES} decimal places (fractions of the minor unit)`);
    if (significantDigits(value) > AMOUNT_SIGNIFICANT_DIGITS)
      invalid(property, `must have at most ${AMOUNT_SIGNIFICANT_DIGITS} significant digits`);
  } else if (!Number.isInteger(value))
    invalid(property, 'must be a whole number of minor units (cents): fractions are kept only on a metered line item’s per-unit amounts');
  return value;
};

/**
 * A term in units as the meter's steps, or a 400 naming the field: on a whole-unit meter whole units
 * 0..MAX_QUANTITY (a JSON number or digits), on a decimal meter a decimal of at most its scale of places.
 */
function unitsOf(value: unknown, field: string, scale: number): bigint {
  if (scale) return termSteps(value, field, scale);
  let q: bigint | undefined;
  if (typeof value === 'number' && Number.isSafeInteger(value)) q = BigInt(value);
  else if (typeof value === 'string' && /^[0-9]{1,16}$/.test(value)) q = BigInt(value);
  if (q === undefined || q < 0n || q > MAX_QUANTITY) return invalid(field, `must be a whole number from 0 to ${MAX_QUANTITY}`);
  return q;
}

/**
 * The usage terms of a line item: given fields over what it had (or the defaults: no allowance,
 * no cap, no minimum, no rollover). Only a metered line item has terms. They are kept in steps of
 * its meter (`scale` decimal places; 0: whole units), as its balances count.
 */
export function usageTermsOf(
  d: Pick<LineItemDraft, 'priceType' | 'allowance' | 'maxUsage' | 'minUsage' | 'rollover'>,
  before: LineItem | undefined,
  at: string,
  scale = 0,
): UsageTerms | null {
  const given = USAGE_FIELDS.filter((f) => d[f] !== undefined);
  if (d.priceType !== 'metered') {
    if (given.length) invalid(`${at}.${given[0]}`, 'usage terms belong to a metered line item');
    return null;
  }
  const old = before?.usage && rescaled(before.usage, before.meter?.scale ?? 0, scale, at, given);
  if (given.length === 0) return old ?? null;
  const allowance = d.allowance === undefined ? (old?.allowance ?? 0n) : unitsOf(d.allowance, `${at}.allowance`, scale);
  const cap =
    d.maxUsage === undefined ? (old?.maxUsage ?? null) : d.maxUsage === null ? null : unitsOf(d.maxUsage, `${at}.maxUsage`, scale);
  const minUsage = d.minUsage === undefined ? (old?.minUsage ?? 0n) : unitsOf(d.minUsage, `${at}.minUsage`, scale);
  let rollover: UsageTerms['rollover'] = old?.rollover ?? { kind: 'none' };
  if (d.rollover === 'none' || d.rollover === 'all') rollover = { kind: d.rollover };
  else if (d.rollover !== undefined) {
    const units = unitsOf(d.rollover.upTo, `${at}.rollover.upTo`, scale);
    rollover = units === 0n ? { kind: 'none' } : { kind: 'upTo', units };
  }
  // The contract's reading: a maxUsage of 0 is no cap.
  const maxUsage = cap === 0n ? null : cap;
  if (maxUsage !== null && minUsage > maxUsage) invalid(`${at}.minUsage`, 'must not exceed maxUsage');
  return { allowance, maxUsage, minUsage, rollover };
}

/**
 * Terms a line item keeps, in steps of the meter it now counts on: moved to a meter of another
 * scale, they keep their units (exactly, or a 400 naming the term that has more places than the new
 * meter's scale, to be given again).
 */
function rescaled(t: UsageTerms, from: number, to: number, at: string, given: readonly string[]): UsageTerms {
  if (from === to) return t;
  const step = 10n ** BigInt(Math.abs(to - from));
  const move = (q: bigint, field: string): bigint => {
    // A term given anew replaces the kept one: it is not moved.
    if (given.includes(field.split('.')[0])) return q;
    const out =
      to > from
        ? q * step
        : q % step === 0n
          ? q / step
          : invalid(`${at}.${field}`, `has more decimal places than the meter's scale (${to}): give it again`);
    return out > MAX_QUANTITY ? invalid(`${at}.${field}`, `must be at most ${MAX_QUANTITY} steps of the meter: give it again`) : out;
  };
  return {
    allowance: move(t.allowance, 'allowance'),
    maxUsage: t.maxUsage === null ? null : move(t.maxUsage, 'maxUsage'),
    minUsage: move(t.minUsage, 'minUsage'),
    rollover: t.rollover.kind === 'upTo' ? { kind: 'upTo', units: move(t.rollover.units, 'rollover.upTo') } : t.rollover,
  };
}

/** A tier bound (decimal text in units with at most `scale` places, or inf) in steps of its meter; null: inf. */
const stepsOf = (upTo: string, scale: number): bigint | null => {
  if (upTo === 'inf') return null;
  const [whole, fraction = ''] = upTo.split('.');
  return BigInt(whole + fraction.padEnd(scale, '0'));
};

/** A plan's billing interval (`Plan.interval`/`length`) and the field of the price that set it. */
export interface PlanBilling {
  interval: Interval;
  length: number;
  /** The field path of the first active recurring price (`lineItems[i].prices[j]`). */
  at: string;
}

/** Recurring prices that disagree: the first price that differs (its field) and why. */
export interface MixedBilling {
  property: string;
  error: string;
}

/**
 * The billing interval a plan's line items give it, without refusing: the one (interval,
 * intervalCount) of their active recurring prices (line item recurring and not archived, price not
 * archived, with an interval), undefined when no price recurs, or `mixed` naming the first price
 * that differs. Line items and prices are named by their index (`at[i].prices[j]`).
 */
export function scanRecurringBilling(items: readonly LineItem[], at = 'lineItems'): PlanBilling | { mixed: MixedBilling } | undefined {
  let found: PlanBilling | undefined;
  for (const [i, li] of items.entries()) {
    if (li.archivedAt || li.intervalType !== 'recurring') continue;
    for (const [j, p] of li.prices.entries()) {
      if (p.archivedAt || p.interval === null) continue;
      const here = `${at}[${i}].prices[${j}]`;
      const length = p.intervalCount ?? 1;
      if (!found) found = { interval: p.interval, length, at: here };
      else if (p.interval !== found.interval || length !== found.length)
        return {
          mixed: {
            property: `${here}.${p.interval !== found.interval ? 'interval' : 'intervalCount'}`,
            error: `a plan's recurring prices share one billing interval (${found.at} is every ${found.length} ${found.interval}): make one plan per interval`,
          },
        };
    }
  }
  return found;
}

/**
 * The billing interval a plan's line items give it (`scanRecurringBilling`). Everything bills by the
 * plan's interval (checkout, renewals, license periods), so a plan of prices that disagree is a 400
 * naming the first price that differs; undefined when no price recurs (one-off or
 * metered-without-interval prices only: the plan keeps what it had). Line items and prices are
 * named by their index in the save (archived ones, appended after the saved ones, are never read).
 */
export function recurringBillingOf(items: readonly LineItem[], at = 'lineItems'): PlanBilling | undefined {
  const scanned = scanRecurringBilling(items, at);
  if (scanned && 'mixed' in scanned) return invalid(scanned.mixed.property, scanned.mixed.error);
  return scanned;
}

/**
 * Checks a price's tier bounds, given in steps of its meter (null: `inf`), in order: strictly
 * ascending and greater than 0, only the last may be `inf` (a finite last bound stays open-ended
 * when billed: every unit is billed). Billing walks the tiers in order, so a bound below an earlier
 * one would skip its tier silently. `field(i)` names tier i's bound.
 */
export function assertTierBounds(bounds: readonly (bigint | null)[], field: (i: number) => string, shown: (i: number) => string): void {
  let previous = 0n;
  for (const [i, b] of bounds.entries()) {
    if (b === null) {
      if (i !== bounds.length - 1) invalid(field(i), 'only the last tier may be inf');
      continue;
    }
    if (b <= 0n) invalid(field(i), 'must be greater than 0');
    if (i > 0 && b <= previous) invalid(field(i), `must be greater than the previous tier's upTo (${shown(i - 1)}): bounds ascend`);
    previous = b;
  }
}

/**
 * A plan's pricing as a save gives it (line items, prices, currency options, tiers), merged with what
 * the plan holds: ids are kept where the draft names them, new ones drawn for the rest.
 */
export class PlanPricing {
  constructor(private readonly id: () => Id) {}

  /** The meter slugs the metered line items of a save count on (what their terms' scales depend on). */
  meterSlugs(drafts: LineItemDraft[], current: LineItem[]): string[] {
    return drafts.flatMap((d) =>
      d.priceType === 'metered' && d.meterSlug !== null
        ? [
            meterSlugOf(
              d,
              current.find((li) => li.id === d.id),
            ),
          ]
        : [],
    );
  }

  /**
   * The line items of a save, merged with the plan's current ones: a given id updates that item in
   * place (its prices and currency options likewise), an item without id is new, and an item left
   * out is archived when a subscription references it (deleted otherwise). `scales` gives the
   * decimal places of the meters with a scale (by slug), in which their terms and tier bounds are read.
   */
  lineItems(
    drafts: LineItemDraft[],
    current: LineItem[],
    referenced: Set<Id>,
    now: Date,
    scales: ReadonlyMap<string, number> = new Map(),
  ): LineItem[] {
    // Currencies: one of the published list (support/money.ts), in upper or lower case; a currency the
    // plan already has stays accepted on a re-save even if the list does not hold it (imported, older).
    const stored = new Set(current.flatMap((li) => li.prices.flatMap((p) => p.currencyOptions.map((o) => o.currency.toLowerCase()))));
    drafts.forEach((d, i) =>
      (d.prices ?? []).forEach((p, j) =>
        p.currencyOptions.forEach((o, k) => {
          if (!isCurrencyCode(o.currency) && !stored.has(o.currency.toLowerCase()))
            invalid(
              `lineItems[${i}].prices[${j}].currencyOptions[${k}].currency`,
              'must be a currency code of the published list (e.g. USD)',
            );
        }),
      ),
    );
    const byId = new Map(current.map((li) => [li.id, li]));
    const kept = new Set<Id>();
    const saved = drafts.map((d, i) => {
      const before = d.id ? (byId.get(d.id) ?? invalid(`lineItems[${i}].id`, 'is not a line item of this plan')) : undefined;
      if (before) {
        if (kept.has(before.id)) invalid(`lineItems[${i}].id`, 'is given twice');
        kept.add(before.id);
      }
      return this.lineItem(d, before, !!before && referenced.has(before.id), `lineItems[${i}]`, now, scales);
    });
    const dropped = current
      .filter((li) => !kept.has(li.id) && referenced.has(li.id))
      .map((li) => (li.archivedAt ? li : { ...li, isActive: false, archivedAt: now, updatedAt: now }));
    return [...saved, ...dropped];
  }

  private lineItem(
    d: LineItemDraft,
    before: LineItem | undefined,
    isReferenced: boolean,
    at: string,
    now: Date,
    scales: ReadonlyMap<string, number>,
  ): LineItem {
    const min = d.minQuantity ?? before?.minQuantity ?? 1;
    const max = d.maxQuantity ?? before?.maxQuantity ?? 1;
    if (!Number.isInteger(min) || !Number.isInteger(max) || min < 0 || max < min)
      invalid(`${at}.minQuantity`, 'minQuantity and maxQuantity must be integers with 0 <= min <= max');
    const billingScheme = d.billingScheme ?? (d.priceType === 'flat_rate' ? 'flat_rate' : 'per_unit');
    // The real catalog API sends a tiers mode with every line item: it means something only when tiered.
    const tiersMode =
      billingScheme === 'tiered' ? (d.tiersMode ?? invalid(`${at}.tiersMode`, 'is required when billingScheme is tiered')) : null;
    const id = before?.id ?? this.id();
    const slug = d.slug ?? before?.slug ?? slugify(d.name);
    const meterSlug = meterSlugOf(d, before);
    const metered = d.priceType === 'metered' && d.meterSlug !== null;
    const scale = metered ? (scales.get(meterSlug) ?? 0) : 0;
    const sameMeter = before?.meter?.slug === meterSlug ? before.meter : undefined;
    const meterId = sameMeter?.id ?? this.id();
    const prices = new Map((before?.prices ?? []).map((p) => [p.id, p]));
    const keptPrices = new Set<Id>();
    const saved = (d.prices ?? []).map((p, i) => {
      const old = p.id ? (prices.get(p.id) ?? invalid(`${at}.prices[${i}].id`, 'is not a price of this line item')) : undefined;
      if (old) keptPrices.add(old.id);
      return this.price(p, old, tiersMode !== null, d.priceType === 'metered', `${at}.prices[${i}]`, now, scale);
    });
    // Prices left out stay, archived, while a subscription references the line item; else they go.
    const droppedPrices = [...prices.values()]
      .filter((p) => !keptPrices.has(p.id))
      .map((p) => (p.archivedAt ? p : { ...p, archivedAt: now, updatedAt: now }));
    return {
      id,
      name: d.name,
      slug,
      paymentProductId: before?.paymentProductId ?? `prod_${id.replace(/-/g, '').slice(0, 14)}`,
      nickname: d.nickname ?? before?.nickname ?? d.name,
      priceType: d.priceType,
      intervalType: d.intervalType ?? before?.intervalType ?? 'recurring',
      billingScheme,
      tiersMode,
      minQuantity: min,
      maxQuantity: max,
      isActive: d.isActive ?? before?.isActive ?? true,
      allowChangingQuantity: d.allowChangingQuantity ?? before?.allowChangingQuantity ?? false,
      unitLabel: d.unitLabel === undefined ? (before?.unitLabel ?? null) : d.unitLabel,
      meter: metered
        ? {
            // The meter it had only while it counts on the same slug: a line item moved to another
            // slug counts on that slug's meter (or a new one), never renames the old one (whose
            // balances, scale and other line items stay where they are).
            id: meterId,
            slug: meterSlug,
            name: d.name,
            paymentMeterId:
              sameMeter?.paymentMeterId ?? (before?.meter ? `mtr_${meterId.replace(/-/g, '').slice(0, 16)}` : `mtr_${id.slice(0, 8)}`),
            createdAt: sameMeter?.createdAt ?? now,
            updatedAt: now,
          }
        : null,
      usage: usageTermsOf(d, before, at, scale),
      prices: [...saved, ...(isReferenced ? droppedPrices : [])],
      archivedAt: dateOf(`${at}.archivedAt`, d.archivedAt, before?.archivedAt ?? null),
      createdAt: before?.createdAt ?? now,
      updatedAt: now,
    };
  }

  private price(d: PriceDraft, before: Price | undefined, tiered: boolean, metered: boolean, at: string, now: Date, scale: number): Price {
    if (d.currencyOptions.length === 0) invalid(`${at}.currencyOptions`, 'at least one currency option is required');
    const currencies = d.currencyOptions.map((o) => o.currency.toLowerCase());
    if (new Set(currencies).size !== currencies.length) invalid(`${at}.currencyOptions`, 'names a currency twice');
    let defaultIndex: number;
    if (d.defaultCurrency !== undefined) {
      defaultIndex = currencies.indexOf(d.defaultCurrency.toLowerCase());
      if (defaultIndex < 0) invalid(`${at}.defaultCurrency`, 'is not one of the currency options');
    } else {
      const marked = d.currencyOptions.flatMap((o, i) => (o.isDefault ? [i] : []));
      if (marked.length > 1) invalid(`${at}.currencyOptions`, 'at most one currency option is the default');
      defaultIndex = marked[0] ?? 0;
    }
    const id = before?.id ?? this.id();
    const oldOptions = before?.currencyOptions ?? [];
    return {
      id,
      paymentPriceId: d.paymentPriceId ?? before?.paymentPriceId ?? `price_${id.replace(/-/g, '').slice(0, 14)}`,
      interval: d.interval ?? null,
      intervalCount: d.interval ? (d.intervalCount ?? 1) : null,
      currencyOptions: d.currencyOptions.map((o, i) => {
        const old = o.id
          ? (oldOptions.find((x) => x.id === o.id) ?? invalid(`${at}.currencyOptions[${i}].id`, 'is not a currency option of this price'))
          : oldOptions.find((x) => x.currency === o.currency.toLowerCase());
        return this.currencyOption(o, old, i === defaultIndex, tiered, metered, `${at}.currencyOptions[${i}]`, now, scale);
      }),
      archivedAt: dateOf(`${at}.archivedAt`, d.archivedAt, before?.archivedAt ?? null),
      createdAt: before?.createdAt ?? now,
      updatedAt: now,
    };
  }

  private currencyOption(
    d: CurrencyOptionDraft,
    before: CurrencyOption | undefined,
    isDefault: boolean,
    tiered: boolean,
    metered: boolean,
    at: string,
    now: Date,
    scale: number,
  ): CurrencyOption {
    if (tiered && !(d.tiers && d.tiers.length)) invalid(`${at}.tiers`, 'a tiered price needs tiers');
    const oldTiers = new Map((before?.tiers ?? []).map((t) => [t.id, t]));
    const id = before?.id ?? this.id();
    const tiers = tiered ? (d.tiers ?? []) : [];
    const saved = tiers.map((t, i): Tier => {
      const old = t.id ? (oldTiers.get(t.id) ?? invalid(`${at}.tiers[${i}].id`, 'is not a tier of this currency option')) : undefined;
      // A bound is in units: a decimal meter's may have its scale of places, any other's is whole.
      if (!/^([0-9]+(\.[0-9]+)?|inf)$/.test(t.upTo)) invalid(`${at}.tiers[${i}].upTo`, 'must be a number of units or inf');
      const places = /\.([0-9]*)$/.exec(t.upTo)?.[1].length ?? 0;
      if (places > scale)
        invalid(
          `${at}.tiers[${i}].upTo`,
          scale ? `must have at most ${scale} decimal places (the meter's scale)` : 'must be a whole number of units or inf',
        );
      return {
        id: old?.id ?? this.id(),
        upTo: t.upTo,
        // A metered tier's flat amount may be a fraction too (usage billing prices it in millionths of
        // the minor unit and rounds each line; the catalog file stores such fractions), so what an
        // import stored can be saved again as it reads back.
        flatAmount: minorAmount(`${at}.tiers[${i}].flatAmount`, t.flatAmount ?? null, metered),
        unitAmount: minorAmount(`${at}.tiers[${i}].unitAmount`, t.unitAmount, metered),
        createdAt: old?.createdAt ?? now,
        updatedAt: now,
      };
    });
    assertTierBounds(
      saved.map((t) => stepsOf(t.upTo, scale)),
      (i) => `${at}.tiers[${i}].upTo`,
      (i) => saved[i].upTo,
    );
    return {
      id,
      currency: d.currency.toLowerCase(),
      unitAmount: minorAmount(`${at}.unitAmount`, d.unitAmount ?? null, metered),
      isDefault,
      // Tiers mean something only for a tiered price.
      tiers: saved,
      createdAt: before?.createdAt ?? now,
      updatedAt: now,
    };
  }
}
