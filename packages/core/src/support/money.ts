import type { Plan, SubscriptionStatus } from '../model';

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
export const STATUS_WORDS: Record<SubscriptionStatus, string> = {
  ACTIVE: 'Active',
  TRIALING: 'Free trial',
  PAST_DUE: 'Payment overdue',
  UNPAID: 'Unpaid',
  PAUSED: 'Paused',
  CANCELED: 'Canceled',
};

/**
 * The currencies a price, cart, checkout or plan filter may name: the currency enum of the hosted
 * service's published catalog OpenAPI document (138 upper-case ISO 4217 codes, in its order;
 * docs/reference/published-catalog-api.md §5). A fixed list, not `Intl.supportedValuesOf('currency')`:
 * that one changes with Node's ICU data and holds codes nobody is charged in (XDR, XSU, ...).
 */
export const CURRENCY_CODES: readonly string[] = Object.freeze(
  (
    'USD AED AFN ALL AMD ANG AOA ARS AUD AWG AZN BAM BBD BDT BGN BIF BMD BND BOB BRL BSD BWP BYN BZD CAD CDF CHF CLP CNY COP ' +
    'CRC CVE CZK DJF DKK DOP DZD EGP ETB EUR FJD FKP GBP GEL GIP GMD GNF GTQ GYD HKD HNL HTG HUF IDR ILS INR ISK JMD JPY KES ' +
    'KGS KHR KMF KRW KYD KZT LAK LBP LKR LRD LSL MAD MDL MGA MKD MMK MNT MOP MUR MVR MWK MXN MYR MZN NAD NGN NIO NOK NPR NZD ' +
    'PAB PEN PGK PHP PKR PLN PYG QAR RON RSD RUB RWF SAR SBD SCR SEK SGD SHP SLE SOS SRD STD SZL THB TJS TOP TRY TTD TWD TZS ' +
    'UAH UGX UYU UZS VND VUV WST XAF XCD XCG XOF XPF YER ZAR ZMW BHD KWD OMR'
  ).split(' '),
);
const CURRENCY_SET = new Set(CURRENCY_CODES);
/** Is `code` one of CURRENCY_CODES, in upper or lower case (`usd`, `USD`; not `Usd`)? */
export const isCurrencyCode = (code: string): boolean =>
  (code === code.toUpperCase() || code === code.toLowerCase()) && CURRENCY_SET.has(code.toUpperCase());
