import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { isCheckableGranteeId, resolveCheckoutOptions } from '@tollgate/core';
import { aPlan, aProduct, errorCodeOf as codeOf } from '@tollgate/core/testing';
import { checkoutOptionsInput, parseGrace, parseGranteeIds, parseLicenseStatusFilter } from '../src';

/** The grantee list parser as it was before its one-id shortcut: the reference for every input. */
function referenceGranteeIds(raw: string): string[] {
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
  return ids.length === 0 ? [] : [...new Set(ids)];
}

describe('edge syntax of legacy and v1', () => {
  it('parses any grantee list as the general syntax does (the one-id shortcut included)', () => {
    const text = fc.string({ unit: fc.constantFrom('a', 'b', ' ', ',', '[', ']', '"', "'", '\t', '\u00a0', '\n', 'é'), maxLength: 12 });
    fc.assert(
      fc.property(text, (raw) => {
        const want = raw.trim() === '' ? 'is required' : referenceGranteeIds(raw);
        let got: string[] | string;
        try {
          got = parseGranteeIds(raw);
        } catch (e) {
          got = codeOf(() => parseGranteeIds(raw)) === 'VALIDATION_FAILED' ? (raw.trim() === '' ? 'is required' : []) : String(e);
        }
        expect(got).toEqual(want);
      }),
      { numRuns: 5000 },
    );
    expect(parseGranteeIds('user-12345')).toEqual(['user-12345']);
  });

  it('reads back, alone and in every documented list form, each grantee id core lets be written', () => {
    // Core refuses ids the check could not read (bad-input audit: `team,user-7` sold, never granted).
    const unit = fc.constantFrom('a', 'b', ' ', ',', '[', ']', '"', "'", '\t', '\u00a0', '\n', 'é', '-', '@');
    fc.assert(
      fc.property(fc.string({ unit, minLength: 1, maxLength: 10 }), (id) => {
        if (!isCheckableGranteeId(id)) return;
        expect(parseGranteeIds(id)).toEqual([id]);
        expect(parseGranteeIds(`[${id}]`)).toEqual([id]);
        expect(parseGranteeIds(`other,${id}`)).toEqual(['other', id]);
        expect(parseGranteeIds(`[${id}, other]`)).toEqual([id, 'other']);
        expect(parseGranteeIds(`["${id}","other"]`)).toEqual([id, 'other']);
      }),
      { numRuns: 5000 },
    );
    // What the audit sold: refused at the write, because the check reads two grantees.
    expect(isCheckableGranteeId('team,user-7')).toBe(false);
    expect(parseGranteeIds('[team,user-7]')).toEqual(['team', 'user-7']);
  });

  it('parses grantee ids as a,b or [a,b] and grace as a whole number above 0', () => {
    expect(parseGranteeIds('a,b')).toEqual(['a', 'b']);
    expect(parseGranteeIds('[a, b,a]')).toEqual(['a', 'b']);
    expect(parseGranteeIds('["x"]')).toEqual(['x']);
    expect(codeOf(() => parseGranteeIds(''))).toBe('VALIDATION_FAILED');
    expect(codeOf(() => parseGranteeIds('[]'))).toBe('VALIDATION_FAILED');
    expect(codeOf(() => parseGranteeIds(undefined))).toBe('VALIDATION_FAILED');
    expect(parseGrace(undefined)).toBe(0);
    expect(parseGrace('3')).toBe(3);
    for (const bad of ['0', '-1', '1.5', 'abc', '']) expect(codeOf(() => parseGrace(bad))).toBe('CHECK_GRACE_INVALID');
  });

  it('reads the checkout option set from query strings', () => {
    const tenant = { organisationId: randomUUID(), isTest: false };
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
    const seatPlan = aPlan(product, { licenseType: 'perSeat', perSeatAmount: 3 });
    const userPlan = aPlan(product);
    const resolve = (q: Record<string, string>, plan = userPlan) =>
      resolveCheckoutOptions(checkoutOptionsInput(q), plan, product, currencies);
    expect(resolve({ currency: 'eur', quantity: '4', changeQuantity: 'true', promoCode: 'X' }, seatPlan)).toMatchObject({
      currency: 'EUR',
      quantity: 4,
      changeQuantity: true,
      promoCode: 'X',
    });
    expect(codeOf(() => resolve({ promoCode: 'X', allowPromoCode: 'true' }))).toBe('CHECKOUT_PROMO_CODE_CONFLICT');
    expect(codeOf(() => resolve({ promoCode: 'X', allowPromoCode: 'false' }))).toBe('CHECKOUT_PROMO_CODE_CONFLICT');
    expect(codeOf(() => resolve({ allowPromoCode: 'maybe' }))).toBe('VALIDATION_FAILED');
    expect(codeOf(() => resolve({ quantity: '2' }))).toBe('CHECKOUT_QUANTITY_NOT_PER_SEAT');
    expect(codeOf(() => resolve({ quantity: 'x' }, seatPlan))).toBe('CHECKOUT_QUANTITY_INVALID');
  });

  it('maps license status filters and refuses others', () => {
    expect(parseLicenseStatusFilter('canceled')).toBe('CANCELED');
    expect(parseLicenseStatusFilter(undefined)).toBeUndefined();
    expect(codeOf(() => parseLicenseStatusFilter('bogus'))).toBe('VALIDATION_FAILED');
  });
});
