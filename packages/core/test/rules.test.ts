import { randomUUID } from 'node:crypto';
import {
  addInterval,
  archivePlan,
  archiveProduct,
  compareKeys,
  assertPricedIn,
  currencyExponent,
  formatMinorMoney,
  formatMoney,
  decodeCursor,
  encodeCursor,
  isPaidProduct,
  legacyStatus,
  minimumSeats,
  pageOf,
  pricedIn,
  prorate,
  resolveCheckoutOptions,
  toMajor,
  toMinor,
} from '../src';
import { aPlan, aProduct, at, T0, errorCodeOf } from '../src/testing';

const codeOf = errorCodeOf;
const tenant = { organisationId: randomUUID(), isTest: false };

describe('catalog rules', () => {
  it('archives a product or plan once', () => {
    const p = archiveProduct(aProduct(tenant), at(1));
    expect(p.archivedAt).toEqual(at(1));
    expect(legacyStatus(p)).toBe('CANCELLED');
    expect(codeOf(() => archiveProduct(p, at(2)))).toBe('PRODUCT_ARCHIVED');
    const plan = archivePlan(aPlan(p), at(1));
    expect(codeOf(() => archivePlan(plan, at(2)))).toBe('PLAN_ARCHIVED');
    expect(legacyStatus(aPlan(p))).toBe('ACTIVE');
  });
  it('derives paid products, minimum seats and money units', () => {
    const p = aProduct(tenant);
    expect(isPaidProduct([aPlan(p, { pricingType: 'free' })])).toBe(false);
    expect(isPaidProduct([aPlan(p, { pricingType: 'free' }), aPlan(p)])).toBe(true);
    expect(minimumSeats(aPlan(p, { perSeatAmount: 0 }))).toBe(1);
    expect(minimumSeats(aPlan(p, { perSeatAmount: 5 }))).toBe(5);
    expect(currencyExponent('jpy')).toBe(0);
    expect(toMinor(12.34, 'USD')).toBe(1234);
    expect(toMajor(1234, 'USD')).toBe(12.34);
    expect(toMinor(500, 'JPY')).toBe(500);
    // Three-decimal currencies count thousandths (ISO 4217, Stripe): 12.345 KWD is 12 345 fils, not 1 235.
    expect(currencyExponent('kwd')).toBe(3);
    expect(toMinor(12.345, 'KWD')).toBe(12345);
    expect(toMajor(12345, 'BHD')).toBe(12.345);
    expect(formatMinorMoney(12345, 'KWD')).toBe(formatMoney(12.345, 'KWD'));
    expect(formatMinorMoney(1500, 'JPY')).toBe('¥1,500');
  });
  it('adds calendar months in UTC, clamping to the month end', () => {
    expect(addInterval(new Date('2026-01-31T00:00:00Z'), 'month', 1).toISOString()).toBe('2026-02-28T00:00:00.000Z');
    expect(addInterval(new Date('2024-02-29T00:00:00Z'), 'year', 1).toISOString()).toBe('2025-02-28T00:00:00.000Z');
    expect(addInterval(T0, 'week', 2)).toEqual(at(14 * 86_400_000));
  });
});

describe('proration', () => {
  const base = {
    fromUnitAmount: 1000,
    toUnitAmount: 3000,
    fromQuantity: 1,
    toQuantity: 1,
    periodStart: at(0),
    periodEnd: at(100),
    now: at(25),
  };
  it('credits the unused old price and charges the new one for the rest of the period', () => {
    expect(prorate({ ...base, mode: 'create_prorations' })).toEqual({
      credit: -750,
      charge: 2250,
      net: 1500,
      invoiceNow: false,
      remaining: 0.75,
    });
    expect(prorate({ ...base, mode: 'always_invoice' }).invoiceNow).toBe(true);
  });
  it('charges nothing with mode none or once the period is over', () => {
    expect(prorate({ ...base, mode: 'none' }).net).toBe(0);
    expect(prorate({ ...base, now: at(100), mode: 'create_prorations' }).net).toBe(0);
  });
  it('prorates seat changes by quantity', () => {
    expect(prorate({ ...base, toUnitAmount: 1000, toQuantity: 3, mode: 'create_prorations' }).net).toBe(1500);
  });
});

describe('checkout option set', () => {
  const usd = { id: randomUUID(), shortName: 'USD', longName: 'US Dollar', symbol: '$' };
  const eur = { id: randomUUID(), shortName: 'EUR', longName: 'Euro', symbol: '€' };
  const currencies = new Map([
    [usd.id, usd],
    [eur.id, eur],
  ]);
  const product = {
    ...aProduct(tenant),
    currencies: [
      { currencyId: eur.id, isDefault: false },
      { currencyId: usd.id, isDefault: true },
    ],
  };
  const prices = [
    { currencyId: usd.id, amountMinor: 1000, paymentPlanId: 'p_usd' },
    { currencyId: eur.id, amountMinor: 900, paymentPlanId: 'p_eur' },
  ];
  const seatPlan = aPlan(product, { licenseType: 'perSeat', perSeatAmount: 3, currencies: prices });
  const userPlan = aPlan(product, { currencies: prices });

  it('defaults to the product default currency and the plan minimum seats', () => {
    expect(resolveCheckoutOptions({}, seatPlan, product, currencies)).toMatchObject({
      currency: 'USD',
      quantity: 3,
      allowPromoCode: false,
      changeQuantity: false,
    });
    expect(
      resolveCheckoutOptions({ currency: 'eur', quantity: 4, changeQuantity: true, promoCode: 'X' }, seatPlan, product, currencies),
    ).toMatchObject({ currency: 'EUR', quantity: 4, changeQuantity: true, promoCode: 'X' });
  });
  it('refuses promoCode with allowPromoCode, a bad e-mail and an unknown currency', () => {
    expect(codeOf(() => resolveCheckoutOptions({ promoCode: 'X', allowPromoCode: true }, userPlan, product, currencies))).toBe(
      'CHECKOUT_PROMO_CODE_CONFLICT',
    );
    expect(codeOf(() => resolveCheckoutOptions({ customerEmail: 'nope' }, userPlan, product, currencies))).toBe('CHECKOUT_INVALID_EMAIL');
    expect(codeOf(() => resolveCheckoutOptions({ currency: 'GBP' }, userPlan, product, currencies))).toBe(
      'CHECKOUT_CURRENCY_NOT_SUPPORTED',
    );
  });
  it('never sells a paid plan in a currency it has no price in: refused when asked, another of its prices by default', () => {
    const usdOnly = aPlan(product, { currencies: [prices[0]] });
    const eurOnly = aPlan(product, { currencies: [prices[1]] });
    expect(pricedIn(usdOnly, 'EUR', currencies)).toBe(false);
    expect(codeOf(() => assertPricedIn(usdOnly, 'eur', currencies, 'currency'))).toBe('CHECKOUT_CURRENCY_NOT_SUPPORTED');
    expect(pricedIn(usdOnly, 'usd', currencies)).toBe(true);
    expect(resolveCheckoutOptions({}, eurOnly, product, currencies).currency).toBe('EUR');
    expect(pricedIn(aPlan(product), 'USD', currencies)).toBe(false);
    // A free plan needs no price.
    expect(pricedIn(aPlan(product, { pricingType: 'free' }), 'EUR', currencies)).toBe(true);
  });
  it('allows quantity only on per-seat plans and never below the minimum', () => {
    expect(codeOf(() => resolveCheckoutOptions({ quantity: 2 }, userPlan, product, currencies))).toBe('CHECKOUT_QUANTITY_NOT_PER_SEAT');
    expect(codeOf(() => resolveCheckoutOptions({ changeQuantity: true }, userPlan, product, currencies))).toBe(
      'CHECKOUT_QUANTITY_NOT_PER_SEAT',
    );
    expect(codeOf(() => resolveCheckoutOptions({ quantity: 2 }, seatPlan, product, currencies))).toBe('CHECKOUT_QUANTITY_BELOW_MINIMUM');
    expect(codeOf(() => resolveCheckoutOptions({ quantity: 1.5 }, seatPlan, product, currencies))).toBe('CHECKOUT_QUANTITY_INVALID');
    expect(codeOf(() => resolveCheckoutOptions({ quantity: 10_001 }, seatPlan, product, currencies))).toBe('SEATS_LIMIT_EXCEEDED');
  });
});

describe('keyset pagination', () => {
  const rows = Array.from({ length: 5 }, (_, i) => ({ id: `id${i}`, createdAt: at(i) }));
  it('pages forward and back with stable cursors', () => {
    const p1 = pageOf(rows, { limit: 2 });
    expect(p1.items.map((r) => r.id)).toEqual(['id0', 'id1']);
    expect(p1.previousCursor).toBeNull();
    const p2 = pageOf([...rows, { id: 'new', createdAt: at(-1) }], { limit: 2, after: p1.nextCursor as string });
    expect(p2.items.map((r) => r.id)).toEqual(['id2', 'id3']);
    const p3 = pageOf(rows, { limit: 2, after: p2.nextCursor as string });
    expect(p3).toMatchObject({ hasMore: false, nextCursor: null });
    expect(pageOf(rows, { limit: 2, before: p3.previousCursor as string }).items.map((r) => r.id)).toEqual(['id2', 'id3']);
  });
  it('round-trips cursors and refuses forged ones', () => {
    const k = { id: 'x', createdAt: T0 };
    expect(compareKeys(decodeCursor(encodeCursor(k)), k)).toBe(0);
    expect(codeOf(() => decodeCursor('garbage'))).toBe('VALIDATION_FAILED');
  });
});
