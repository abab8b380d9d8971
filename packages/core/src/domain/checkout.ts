import { ErrorCodes, fail } from '../errors';
import type { CheckoutOptions, CheckoutOptionsInput, Currency, Plan, Product } from '../model';
import { isPerSeat, lineItemCurrencies, minimumSeats, pricedIn } from './catalog';
import { DEFAULT_MAX_SEATS } from './limits';
import { assertSeatTotal } from './seats';

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/**
 * An absolute http(s) URL, returned normalised (`URL.href`): what is kept and later sent in a
 * `Location` header or to a provider is what was checked, never the raw text (whose CR/LF the URL
 * parser drops and whose non-ASCII characters it encodes, but a header refuses).
 */
export function assertAbsoluteUrl(name: string, raw: unknown): string {
  if (typeof raw !== 'string' || raw === '') {
    return fail(ErrorCodes.VALIDATION_FAILED, `${name} is required`, [{ property: name, error: 'is required' }]);
  }
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return fail(ErrorCodes.CHECKOUT_INVALID_URL, `${name} must be an absolute URL`, [{ property: name, error: 'must be an absolute URL' }]);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    fail(ErrorCodes.CHECKOUT_INVALID_URL, `${name} must be an http or https URL`, [
      { property: name, error: 'must be an http or https URL' },
    ]);
  }
  return url.href;
}

/**
 * Rules: `promoCode` and `allowPromoCode` exclude each other; `customerEmail` is an e-mail;
 * `currency` is one of the product's (default: the product's default); `quantity` and
 * `changeQuantity` only on per-seat plans and never below the plan minimum. `allowPromoCode` and
 * `automaticTax` left out of the request follow the product's settings.
 */
export function resolveCheckoutOptions(
  input: CheckoutOptionsInput,
  plan: Plan,
  product: Product,
  currencies: ReadonlyMap<string, Currency>,
  maxSeats = DEFAULT_MAX_SEATS,
): CheckoutOptions {
  // Unset in the request: the product's settings decide (a promo code given excludes the field).
  const allowPromoCode = input.allowPromoCode ?? (input.promoCode ? false : product.settings.allowPromoCodes);
  if (input.promoCode && input.allowPromoCode !== undefined) {
    fail(ErrorCodes.CHECKOUT_PROMO_CODE_CONFLICT, 'promoCode cannot be used together with allowPromoCode', [
      { property: 'allowPromoCode', error: 'cannot be used together with promoCode' },
    ]);
  }
  if (input.customerEmail !== undefined && !EMAIL.test(input.customerEmail)) {
    fail(ErrorCodes.CHECKOUT_INVALID_EMAIL, 'customerEmail must be an e-mail address', [
      { property: 'customerEmail', error: 'must be an e-mail address' },
    ]);
  }
  const productCurrencies = product.currencies.map((pc) => ({ ...pc, currency: currencies.get(pc.currencyId) }));
  // A plan priced by its line items is also sold in the currencies of its prices.
  const planCurrencies = lineItemCurrencies(plan);
  let currency: string;
  if (input.currency !== undefined) {
    const wanted = input.currency.toUpperCase();
    const found =
      productCurrencies.find((pc) => pc.currency?.shortName.toUpperCase() === wanted) ?? planCurrencies.find((c) => c === wanted);
    if (!found) {
      return fail(ErrorCodes.CHECKOUT_CURRENCY_NOT_SUPPORTED, `the product is not sold in ${input.currency}`, [
        { property: 'currency', error: 'is not a currency of the product' },
      ]);
    }
    currency = wanted;
  } else {
    // The product's default currency, else the first the plan has a price in (a paid plan is never sold for nothing).
    const def = productCurrencies.find((pc) => pc.isDefault) ?? productCurrencies[0];
    const candidates = [def, ...productCurrencies]
      .map((pc) => pc?.currency?.shortName)
      .filter((c): c is string => c !== undefined)
      .concat(planCurrencies);
    currency = candidates.find((c) => pricedIn(plan, c, currencies)) ?? candidates[0] ?? 'USD';
  }
  const min = minimumSeats(plan);
  let quantity = isPerSeat(plan) ? min : 1;
  if (input.quantity !== undefined) {
    if (!isPerSeat(plan))
      fail(ErrorCodes.CHECKOUT_QUANTITY_NOT_PER_SEAT, 'quantity applies to per-seat plans only', [
        { property: 'quantity', error: 'applies to per-seat plans only' },
      ]);
    if (!Number.isSafeInteger(input.quantity) || input.quantity < 0)
      fail(ErrorCodes.CHECKOUT_QUANTITY_INVALID, 'quantity must be a whole number', [
        { property: 'quantity', error: 'must be a whole number' },
      ]);
    quantity = input.quantity;
    if (quantity < min)
      fail(ErrorCodes.CHECKOUT_QUANTITY_BELOW_MINIMUM, `quantity must be at least ${min}`, [
        { property: 'quantity', error: `must be at least ${min}` },
      ]);
    assertSeatTotal(quantity, maxSeats);
  }
  const changeQuantity = input.changeQuantity ?? false;
  if (changeQuantity && !isPerSeat(plan)) {
    fail(ErrorCodes.CHECKOUT_QUANTITY_NOT_PER_SEAT, 'changeQuantity applies to per-seat plans only', [
      { property: 'changeQuantity', error: 'applies to per-seat plans only' },
    ]);
  }
  return {
    promoCode: input.promoCode || null,
    allowPromoCode,
    customerEmail: input.customerEmail ?? null,
    customerId: input.customerId || null,
    currency,
    automaticTax: input.automaticTax ?? product.settings.automaticTax,
    quantity,
    changeQuantity,
  };
}
