import {
  CHECK_GRANTEES_MAX,
  DomainError,
  ErrorCodes,
  GRANTEE_ID_MAX_LENGTH,
  licenseStatusFromFilter,
  type CheckoutOptionsInput,
  type LicenseStatus,
} from '@tollgate/core';

/**
 * Edge syntax shared by legacy and v1: query-string values become the typed commands core takes.
 * Each parser throws VALIDATION_FAILED (or the domain's own code) naming the parameter.
 */

const invalid = (property: string, error: string, code: keyof typeof ErrorCodes = 'VALIDATION_FAILED'): never => {
  throw new DomainError(ErrorCodes[code], `${property} ${error}`, [{ property, error }]);
};

/** A first or last character the list syntax strips (a bracket or a quote). */
const EDGE_QUOTE_OR_BRACKET = /^["'[]|["'\]]$/;

/** A grantee id no license holds (longer than `GRANTEE_ID_MAX_LENGTH`): 400 naming `granteeIds`. */
const tooLong = (): never => invalid('granteeIds', `names a grantee id longer than ${GRANTEE_ID_MAX_LENGTH} characters`);

/**
 * `a,b`, `[a,b]`, `["a","b"]` -> the distinct, trimmed grantee ids (at least one, at most
 * `CHECK_GRANTEES_MAX`, none longer than `GRANTEE_ID_MAX_LENGTH`: what the check is asked is kept in memory).
 */
export function parseGranteeIds(raw: unknown): string[] {
  if (typeof raw !== 'string' || raw.trim() === '') return invalid('granteeIds', 'is required');
  // One plain id (the check's usual question): nothing to split, trim or unquote.
  if (!raw.includes(',') && raw === raw.trim() && !EDGE_QUOTE_OR_BRACKET.test(raw))
    return raw.length > GRANTEE_ID_MAX_LENGTH ? tooLong() : [raw];
  let text = raw.trim();
  if (text.startsWith('[') && text.endsWith(']')) text = text.slice(1, -1);
  const ids = text
    .split(',')
    .map((s) =>
      s
        .trim()
        .replace(/^["']|["']$/g, '')
        .trim(),
    )
    .filter((s) => s.length > 0);
  if (ids.length === 0) invalid('granteeIds', 'names no grantee');
  if (ids.some((id) => id.length > GRANTEE_ID_MAX_LENGTH)) tooLong();
  const distinct = [...new Set(ids)];
  if (distinct.length > CHECK_GRANTEES_MAX) invalid('granteeIds', `names more than ${CHECK_GRANTEES_MAX} grantees`);
  return distinct;
}

/** `grace`: absent is 0 days; otherwise a whole number greater than 0. */
export function parseGrace(raw: unknown): number {
  if (raw === undefined || raw === null) return 0;
  const text = String(raw).trim();
  if (!/^[+-]?\d+$/.test(text) || Number(text) <= 0 || !Number.isSafeInteger(Number(text))) {
    invalid('grace', 'must be an integer greater than 0', 'CHECK_GRACE_INVALID');
  }
  return Number(text);
}

/** `true` / `false` (absent or empty: undefined). */
export function parseBool(name: string, raw: string | undefined): boolean | undefined {
  if (raw === undefined || raw === '') return undefined;
  if (raw === 'true') return true;
  if (raw === 'false') return false;
  return invalid(name, 'must be true or false');
}

/** The checkout option set's query strings as the typed input core resolves. */
export function checkoutOptionsInput(q: Record<string, string | undefined>): CheckoutOptionsInput {
  let quantity: number | undefined;
  if (q.quantity !== undefined) {
    if (!/^\d+$/.test(q.quantity)) invalid('quantity', 'must be a whole number', 'CHECKOUT_QUANTITY_INVALID');
    quantity = Number(q.quantity);
  }
  const out: CheckoutOptionsInput = {
    promoCode: q.promoCode,
    allowPromoCode: parseBool('allowPromoCode', q.allowPromoCode),
    customerEmail: q.customerEmail,
    customerId: q.customerId,
    currency: q.currency,
    automaticTax: parseBool('automaticTax', q.automaticTax),
    quantity,
    changeQuantity: parseBool('changeQuantity', q.changeQuantity),
  };
  // Absent stays absent: core tells "not given" from "false" (promoCode excludes allowPromoCode).
  return Object.fromEntries(Object.entries(out).filter(([, v]) => v !== undefined)) as CheckoutOptionsInput;
}

/** The license status of a list filter value (`active`, `canceled`, ...); 400 for anything else. */
export function parseLicenseStatusFilter(raw: unknown): LicenseStatus | undefined {
  if (raw === undefined) return undefined;
  const status = typeof raw === 'string' ? licenseStatusFromFilter(raw) : undefined;
  if (!status) return invalid('status', 'must be one of active, canceled, evaluation, scheduled, trialing, inactive');
  return status;
}

/** `expand=a,b` (or `[a,b]`) against the allowed values; an unknown one is named in a 400. */
export function parseExpandList(raw: unknown, allowed: readonly string[]): string[] {
  if (raw === undefined || raw === '') return [];
  if (typeof raw !== 'string') return invalid('expand', 'must be a comma-separated string');
  const values = raw
    .replace(/^\[|\]$/g, '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const unknown = values.filter((v) => !allowed.includes(v));
  if (unknown.length) {
    throw new DomainError(
      ErrorCodes.VALIDATION_FAILED,
      `expand: unknown value(s) ${unknown.join(', ')}; allowed: ${allowed.join(', ')}`,
      unknown.map((u) => ({ property: 'expand', error: `unknown value ${u}` })),
    );
  }
  return values;
}
