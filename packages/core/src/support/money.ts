import type { Plan } from '../model';

/** Currencies without a minor unit (Stripe's zero-decimal list). */
const ZERO_DECIMAL = new Set([
  'BIF',
  'CLP',
  'DJF',
  'GNF',
  'JPY',
  'KMF',
  'KRW',
  'MGA',
  'PYG',
  'RWF',
  'UGX',
  'VND',
  'VUV',
  'XAF',
  'XOF',
  'XPF',
]);

/** Currencies whose minor unit is a thousandth (ISO 4217; Stripe counts them in thousandths too). */
const THREE_DECIMAL = new Set(['BHD', 'JOD', 'KWD', 'OMR', 'TND']);

/** Digits after the decimal point of a currency's major unit. */
export const currencyExponent = (shortName: string): number => {
  const code = shortName.toUpperCase();
  return ZERO_DECIMAL.has(code) ? 0 : THREE_DECIMAL.has(code) ? 3 : 2;
};

/**
 * An amount in major units as a customer reads it (`$12.00`, `€11.00`, `¥1,500`): the one money
 * formatter of every customer page (Intl.NumberFormat), so the pricing page and checkout agree.
 */
export function formatMoney(major: number, currency: string, locale = 'en'): string {
  try {
    return new Intl.NumberFormat(locale, { style: 'currency', currency: currency.toUpperCase() }).format(major);
  } catch {
    return `${currency.toUpperCase()} ${major}`;
  }
}

/**
 * The same, from minor units as stored and billed: the currency's exponent is the one billing uses
 * (`currencyExponent`, Stripe's), so a page never shows another amount than the one charged.
 */
export function formatMinorMoney(minor: number, currency: string, locale = 'en'): string {
  return formatMoney(minor / 10 ** currencyExponent(currency), currency, locale);
}

type PricedPlan = Pick<Plan, 'licenseType' | 'interval' | 'length'>;

/** "per seat per month", "per 3 months": what one price buys, in words. */
export function pricePeriod(plan: PricedPlan): string {
  const seat = plan.licenseType === 'perSeat' ? 'per seat ' : '';
  return plan.length > 1 ? `${seat}every ${plan.length} ${plan.interval}s` : `${seat}per ${plan.interval}`;
}

/**
 * The terms a customer should read before paying, beside the price: the minimum seats of a
 * per-seat plan, and free days (an evaluation, or a trial). Empty when there are none.
 */
export function planTerms(plan: Pick<Plan, 'licenseType' | 'perSeatAmount' | 'evaluation' | 'evalDays' | 'trialDays'>): string[] {
  const terms: string[] = [];
  if (plan.licenseType === 'perSeat' && plan.perSeatAmount > 1) terms.push(`minimum ${plan.perSeatAmount} seats`);
  // An evaluation is a free license the vendor grants before a purchase; a trial delays the first charge.
  if (plan.evaluation && plan.evalDays > 0) terms.push(`${plan.evalDays}-day free evaluation available`);
  if (plan.trialDays) terms.push(`${plan.trialDays}-day free trial`);
  return terms;
}

/** A subscription status in plain words (the portal never shows `ACTIVE`). */
export const STATUS_WORDS: Record<string, string> = {
  ACTIVE: 'Active',
  TRIALING: 'Free trial',
  PAST_DUE: 'Payment overdue',
  CANCELED: 'Canceled',
};
