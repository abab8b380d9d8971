import { CURRENCY_CODES, ErrorCodes, fail, INTERVALS, isUuid, MAX_AMOUNT_MINOR, type PlanDraft } from '@tollgate/core';
import { querySchema, typed } from '@tollgate/http';

/** Request-schema pieces several catalog resources share, and the plan-save document (each route module declares its own beside its handlers). */

/** A query-string flag. */
export const boolText = { enum: ['true', 'false'] } as const;
/** `limit` (1..100), and the `after` / `before` cursors of a list's answer. */
export const pageProps = {
  limit: { type: 'string', pattern: '^(100|[1-9][0-9]?)$' },
  after: { type: 'string' },
  before: { type: 'string' },
} as const;
export const listProps = {
  ...pageProps,
  search: { type: 'string', maxLength: 200 },
  includeArchived: boolText,
  expand: { type: 'string' },
} as const;
export const expandQuery = querySchema({ expand: { type: 'string' } });

export const name = { type: 'string', minLength: 1, maxLength: 200 };
export const planBodyProps = {
  productId: { type: 'string', format: 'uuid' },
  name,
  trialPeriodDays: { type: ['integer', 'null'], minimum: 1, maximum: 730 },
  tierTagId: { type: ['string', 'null'], format: 'uuid' },
  /** A tier tag by name, created when new. */
  tierTag: { type: ['string', 'null'], minLength: 1, maxLength: 100 },
  isActive: { type: 'boolean' },
};
/**
 * A plan id of a body whose published schema is a plain string (quick checkout's `planId`, an items
 * change's `newPlanId`): one that cannot be a plan's id is a 404 "plan not found" naming the field,
 * as an unknown plan is, rather than a value the database cannot store.
 */
export const planIdOf = (raw: string, property: string): string =>
  isUuid(raw) ? raw : fail(ErrorCodes.PLAN_NOT_FOUND, 'plan not found', [{ property, error: 'is not the id of a plan' }]);

/** The largest count the database keeps (a PostgreSQL `integer`): quantities above it are a 400 naming the field. */
export const MAX_INT32 = 2_147_483_647;
/** A quantity of a line item (seats, units a checkout may take). */
export const quantity = (minimum: number) => ({ type: 'integer', minimum, maximum: MAX_INT32 });
/**
 * A currency code of the published list (core's CURRENCY_CODES), in upper or lower case (the
 * published API lists upper-case codes; Tollgate has always taken lower case too). Any other code is
 * a 400 naming the field.
 */
export const currencyCode = { type: 'string', enum: [...CURRENCY_CODES, ...CURRENCY_CODES.map((c) => c.toLowerCase())] } as const;
/**
 * A currency where one already stored stays accepted though the list lacks it (a plans/save price,
 * a cart's replace): three letters in one case here; the core checks it against the list, except
 * the currency the plan or cart already has (so one with an older or imported code can be re-saved).
 */
export const storedCurrency = { type: 'string', pattern: '^([A-Z]{3}|[a-z]{3})$' } as const;
/**
 * An amount in minor units (0..99999999999, Stripe's largest); whole except a metered line item's
 * per-unit amounts (the core checks that, naming the field).
 */
const amount = { type: ['number', 'null'], minimum: 0, maximum: MAX_AMOUNT_MINOR };
// Units of the line item's meter: the core reads them exactly and checks them against its scale
// (whole on a whole-unit meter), naming the field.
const units = {
  anyOf: [
    { type: 'number', minimum: 0 },
    { type: 'string', pattern: '^[0-9]{1,16}(\\.[0-9]{1,6})?$' },
  ],
};
const dateTime = { type: ['string', 'null'], format: 'date-time' };
export const planSaveBody = typed<PlanDraft>({
  type: 'object',
  properties: {
    ...planBodyProps,
    id: { type: 'string', format: 'uuid' },
    archivedAt: dateTime,
    entitlements: { type: 'array', maxItems: 200, items: { type: 'string', minLength: 1, maxLength: 100 } },
    lineItems: {
      type: 'array',
      maxItems: 50,
      items: {
        type: 'object',
        // The published LineItemInput is not strict: members it does not name are accepted and ignored.
        required: ['name', 'priceType'],
        properties: {
          id: { type: 'string', minLength: 1, maxLength: 100 },
          name,
          slug: { type: 'string', maxLength: 100, pattern: '^[a-z0-9_]+$' },
          isActive: { type: 'boolean' },
          meterSlug: { type: ['string', 'null'], maxLength: 100, pattern: '^[a-z0-9_]+$' },
          archivedAt: dateTime,
          nickname: { type: 'string', maxLength: 200 },
          priceType: { enum: ['metered', 'per_seat', 'flat_rate'] },
          intervalType: { enum: ['one_off', 'recurring'] },
          billingScheme: { enum: ['fixed', 'per_unit', 'tiered', 'flat_rate'] },
          tiersMode: { enum: ['graduated', 'volume', null] },
          minQuantity: quantity(0),
          maxQuantity: quantity(0),
          allowChangingQuantity: { type: 'boolean' },
          unitLabel: { type: ['string', 'null'], maxLength: 50 },
          // Usage plan terms of a metered line item (Tollgate's; units of its meter as numbers or decimal strings).
          allowance: units,
          maxUsage: { anyOf: [units, { type: 'null' }] },
          minUsage: units,
          rollover: {
            anyOf: [
              { enum: ['none', 'all'] },
              { type: 'object', properties: { upTo: units }, required: ['upTo'], additionalProperties: false },
            ],
          },
          prices: {
            type: 'array',
            maxItems: 20,
            items: {
              // The published PriceInput (an allOf of two objects) is not strict either.
              type: 'object',
              required: ['currencyOptions'],
              properties: {
                id: { type: 'string', minLength: 1, maxLength: 100 },
                defaultCurrency: storedCurrency,
                archivedAt: dateTime,
                interval: { enum: [...INTERVALS, null] },
                intervalCount: { type: ['integer', 'null'], minimum: 1, maximum: 1095 },
                paymentPriceId: { type: 'string', maxLength: 200 },
                currencyOptions: {
                  type: 'array',
                  maxItems: 50,
                  items: {
                    type: 'object',
                    additionalProperties: false,
                    required: ['currency'],
                    properties: {
                      id: { type: 'string', minLength: 1, maxLength: 100 },
                      currency: storedCurrency,
                      unitAmount: amount,
                      isDefault: { type: 'boolean' },
                      tiers: {
                        type: 'array',
                        maxItems: 50,
                        items: {
                          type: 'object',
                          additionalProperties: false,
                          required: ['upTo', 'unitAmount'],
                          properties: {
                            id: { type: 'string', minLength: 1, maxLength: 100 },
                            // Units: decimals (at most the meter's scale of places) on a decimal meter.
                            upTo: { type: 'string', pattern: '^([0-9]+(\\.[0-9]+)?|inf)$' },
                            flatAmount: amount,
                            unitAmount: { type: 'number', minimum: 0, maximum: MAX_AMOUNT_MINOR },
                          },
                        },
                      },
                    },
                  },
                },
              },
            },
          },
        },
      },
    },
  },
  required: ['name'],
  additionalProperties: false,
});

export const pageQuery = { ...querySchema(pageProps), additionalProperties: false };
