/**
 * JSON Schemas of the catalog's response bodies that several resources share (the envelopes, a
 * product, a plan and its pricing). Each route module declares the rest beside its handlers.
 */
import { bool, date, int, ndate, str, uuid } from '@tollgate/http';

const nstr = { type: ['string', 'null'] } as const;
const num = { type: 'number' } as const;

/** An object whose `properties` are all required and `optional` ones may be there (an `expand`). */
export const object = (properties: Record<string, unknown>, optional: Record<string, unknown> = {}) => ({
  type: 'object',
  properties: { ...properties, ...optional },
  required: Object.keys(properties),
  additionalProperties: false,
});

/** `{type: 'object', data}`. */
export const objectOf = (data: object) => object({ type: { const: 'object' }, data });

/** A page of a list: `{type: 'list', data, nextCursor, previousCursor, hasMore}` (and `extra` members). */
export const listOf = (item: object, extra: Record<string, unknown> = {}) =>
  object({
    type: { const: 'list' },
    data: { type: 'array', items: item },
    nextCursor: nstr,
    previousCursor: nstr,
    hasMore: bool,
    ...extra,
  });

/** A list inside a record (its first items, and where the rest are). */
export const nestedListOf = (item: object) =>
  object({ type: { const: 'list' }, data: { type: 'array', items: item }, hasMore: bool, path: str });

export const catalogErrorSchema = object({
  title: str,
  detail: nstr,
  errors: { anyOf: [{ type: 'array', items: object({ property: str, message: str }) }, { type: 'null' }] },
});

const recordProps = { id: uuid, organisation: uuid };
const stamps = { createdAt: date, updatedAt: date };

export const productProps = { ...recordProps, name: str, isActive: bool, archivedAt: ndate, ...stamps };
export const productSchema = object(productProps);

export const settingsSchema = object({
  id: uuid,
  organisation: uuid,
  successUrl: nstr,
  cancelUrl: nstr,
  allowPromoCodes: bool,
  automaticTax: bool,
  collectBillingAddress: bool,
  collectShippingAddress: bool,
  cardPrefillPreference: { enum: ['none', 'always', 'choice'] },
  pastDueEntitlements: bool,
  productId: uuid,
  ...stamps,
});

export const planProps = {
  ...recordProps,
  name: str,
  isActive: bool,
  productId: uuid,
  tierTagId: { anyOf: [uuid, { type: 'null' }] },
  trialPeriodDays: { type: ['integer', 'null'] },
  archivedAt: ndate,
  ...stamps,
};
export const planSchema = object(planProps);

export const tierTagSchema = object({ id: uuid, name: str, organisation: uuid, ...stamps });

export const tierSchema = object({
  ...recordProps,
  upTo: str,
  flatAmount: { type: ['number', 'null'] },
  unitAmount: num,
  currencyOptionId: uuid,
  ...stamps,
});
export const currencyOptionSchema = object({
  ...recordProps,
  currency: str,
  unitAmount: { type: ['number', 'null'] },
  priceId: uuid,
  isDefault: bool,
  ...stamps,
  tiers: nestedListOf(tierSchema),
});
export const priceSchema = object({
  ...recordProps,
  paymentPriceId: str,
  interval: { enum: [null, 'day', 'week', 'month', 'year'] },
  intervalCount: { type: ['integer', 'null'] },
  lineItemId: uuid,
  archivedAt: ndate,
  ...stamps,
  currencyOptions: nestedListOf(currencyOptionSchema),
});
const meterSchema = object({ id: uuid, slug: str, name: str, paymentMeterId: str, organisation: uuid, ...stamps });
export const lineItemSchema = object(
  {
    ...recordProps,
    name: str,
    slug: str,
    paymentProductId: str,
    meterId: { anyOf: [uuid, { type: 'null' }] },
    nickname: str,
    priceType: { enum: ['metered', 'per_seat', 'flat_rate'] },
    intervalType: { enum: ['one_off', 'recurring'] },
    billingScheme: { enum: ['fixed', 'per_unit', 'tiered', 'flat_rate'] },
    tiersMode: { enum: [null, 'graduated', 'volume'] },
    minQuantity: int,
    maxQuantity: int,
    isActive: bool,
    planId: uuid,
    allowChangingQuantity: bool,
    archivedAt: ndate,
    unitLabel: nstr,
    ...stamps,
    meter: { anyOf: [meterSchema, { type: 'null' }] },
    prices: nestedListOf(priceSchema),
  },
  {
    // Units of the meter: whole on a whole-unit meter, decimals on one with a scale.
    usage: object({
      allowance: num,
      maxUsage: { type: ['number', 'null'] },
      minUsage: num,
      rollover: { anyOf: [{ enum: ['none', 'all'] }, object({ upTo: num })] },
    }),
  },
);
export const entitlementSchema = object({ ...recordProps, name: str, ...stamps });
