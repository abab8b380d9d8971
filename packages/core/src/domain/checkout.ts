import { ErrorCodes, fail } from '../errors';
import type { Currency, Plan, Product } from '../model';
import { isPerSeat, minimumSeats } from './catalog';

/** The checkout option set shared by pricing-table, plan and checkout-link operations (raw query strings). */
export interface CheckoutOptionsInput {
  promoCode?: string;
  allowPromoCode?: string;
  customerEmail?: string;
  customerId?: string;
  currency?: string;
  automaticTax?: string;
  quantity?: string;
  changeQuantity?: string;
}

export interface CheckoutOptions {
  promoCode: string | null;
  allowPromoCode: boolean;
  customerEmail: string | null;
  customerId: string | null;
  /** Short name of the currency to charge in. */
  currency: string;
  automaticTax: boolean;
  quantity: number;
  /** The customer may choose the seat count, not below the plan minimum. */
  changeQuantity: boolean;
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

function parseBool(name: string, raw: string | undefined): boolean {
  if (raw === undefined || raw === '') return false;
  if (raw === 'true') return true;
  if (raw === 'false') return false;
  return fail(ErrorCodes.VALIDATION_FAILED, `${name} must be true or false`, [{ property: name, error: 'must be true or false' }]);
}

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
    fail(ErrorCodes.CHECKOUT_INVALID_URL, `${name} must be an http or https URL`, [{ property: name, error: 'must be an http or https URL' }]);
  }
  return raw;
}

/**
 * Rules: `promoCode` and `allowPromoCode` exclude each other; `customerEmail` is an e-mail;
 * `currency` is one of the product's (default: the product's default); `quantity` and
 * `changeQuantity` only on per-seat plans and never below the plan minimum.
 */
export function resolveCheckoutOptions(
  input: CheckoutOptionsInput,
  plan: Plan,
  product: Product,
  currencies: ReadonlyMap<string, Currency>,
): CheckoutOptions {
  const allowPromoCode = parseBool('allowPromoCode', input.allowPromoCode);
  if (input.promoCode && input.allowPromoCode !== undefined) {
    fail(ErrorCodes.CHECKOUT_PROMO_CODE_CONFLICT, 'promoCode cannot be used together with allowPromoCode', [{ property: 'allowPromoCode', error: 'cannot be used together with promoCode' }]);
  }
  if (input.customerEmail !== undefined && !EMAIL.test(input.customerEmail)) {
    fail(ErrorCodes.CHECKOUT_INVALID_EMAIL, 'customerEmail must be an e-mail address', [{ property: 'customerEmail', error: 'must be an e-mail address' }]);
  }
  const productCurrencies = product.currencies.map((pc) => ({ ...pc, currency: currencies.get(pc.currencyId) }));
  let currency: string;
  if (input.currency !== undefined) {
    const wanted = input.currency.toUpperCase();
    const found = productCurrencies.find((pc) => pc.currency?.shortName.toUpperCase() === wanted);
    if (!found) {
      return fail(ErrorCodes.CHECKOUT_CURRENCY_NOT_SUPPORTED, `the product is not sold in ${input.currency}`, [{ property: 'currency', error: 'is not a currency of the product' }]);
    }
    currency = wanted;
  } else {
    const def = productCurrencies.find((pc) => pc.isDefault) ?? productCurrencies[0];
    currency = def?.currency?.shortName ?? 'USD';
  }
  const min = minimumSeats(plan);
  let quantity = isPerSeat(plan) ? min : 1;
  if (input.quantity !== undefined) {
    if (!isPerSeat(plan)) fail(ErrorCodes.CHECKOUT_QUANTITY_NOT_PER_SEAT, 'quantity applies to per-seat plans only', [{ property: 'quantity', error: 'applies to per-seat plans only' }]);
    if (!/^\d+$/.test(input.quantity)) fail(ErrorCodes.CHECKOUT_QUANTITY_INVALID, 'quantity must be a whole number', [{ property: 'quantity', error: 'must be a whole number' }]);
    quantity = Number(input.quantity);
    if (quantity < min) fail(ErrorCodes.CHECKOUT_QUANTITY_BELOW_MINIMUM, `quantity must be at least ${min}`, [{ property: 'quantity', error: `must be at least ${min}` }]);
  }
  const changeQuantity = parseBool('changeQuantity', input.changeQuantity);
  if (changeQuantity && !isPerSeat(plan)) {
    fail(ErrorCodes.CHECKOUT_QUANTITY_NOT_PER_SEAT, 'changeQuantity applies to per-seat plans only', [{ property: 'changeQuantity', error: 'applies to per-seat plans only' }]);
  }
  return {
    promoCode: input.promoCode || null,
    allowPromoCode,
    customerEmail: input.customerEmail ?? null,
    customerId: input.customerId || null,
    currency,
    automaticTax: parseBool('automaticTax', input.automaticTax),
    quantity,
    changeQuantity,
  };
}
