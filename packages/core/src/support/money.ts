import type { Plan } from '../model';

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

/** The same, from minor units (cents) as stored; the currency's own decimals say how many minor units make one. */
export function formatMinorMoney(minor: number, currency: string, locale = 'en'): string {
  let digits = 2;
  try {
    digits =
      new Intl.NumberFormat(locale, { style: 'currency', currency: currency.toUpperCase() }).resolvedOptions().maximumFractionDigits ?? 2;
  } catch {
    // An unknown code: shown as cents of it.
  }
  return formatMoney(minor / 10 ** digits, currency, locale);
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
