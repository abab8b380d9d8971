import { INTERVALS, type PlanDraft, type PlanInput, type ProductUpdate } from '@tollgate/core';
import { querySchema, typed } from '@tollgate/http';

/** JSON Schemas of the catalog's query strings and request bodies (validated before each handler). */

const bool = { enum: ['true', 'false'] } as const;
/** `limit` (1..100), and the `after` / `before` cursors of a list's answer. */
export const pageProps = {
  limit: { type: 'string', pattern: '^(100|[1-9][0-9]?)$' },
  after: { type: 'string' },
  before: { type: 'string' },
} as const;
const listProps = {
  ...pageProps,
  search: { type: 'string', maxLength: 200 },
  includeArchived: bool,
  expand: { type: 'string' },
} as const;
export const productListQuery = { ...querySchema(listProps), additionalProperties: false };
export const planListQuery = {
  ...querySchema({
    ...listProps,
    productId: { type: 'string', format: 'uuid' },
    currency: { type: 'string', pattern: '^[A-Za-z]{3}$' },
    interval: { enum: [...INTERVALS] },
    intervalCount: { type: 'string', pattern: '^[1-9][0-9]{0,2}$' },
    isActive: bool,
    // filterOptions are in every plan list (the contract requires them); the flag real clients send is accepted.
    includeFilterOptions: bool,
  }),
  additionalProperties: false,
};
export const expandQuery = querySchema({ expand: { type: 'string' } });

const name = { type: 'string', minLength: 1, maxLength: 200 };
const url = { type: ['string', 'null'], maxLength: 2048 };
/** A product's checkout settings (each optional: what is given is changed). */
const productSettings = {
  type: 'object',
  properties: {
    successUrl: url,
    cancelUrl: url,
    allowPromoCodes: { type: 'boolean' },
    automaticTax: { type: 'boolean' },
    collectBillingAddress: { type: 'boolean' },
    collectShippingAddress: { type: 'boolean' },
    cardPrefillPreference: { enum: ['none', 'always', 'choice'] },
    pastDueEntitlements: { type: 'boolean' },
  },
  additionalProperties: false,
};
export const productBody = typed<{ name: string; description?: string; isActive?: boolean }>({
  type: 'object',
  properties: { name, description: { type: 'string', maxLength: 2000 }, isActive: { type: 'boolean' } },
  required: ['name'],
  additionalProperties: false,
});
export const productUpdateBody = typed<ProductUpdate>({
  type: 'object',
  properties: { name, description: { type: 'string', maxLength: 2000 }, isActive: { type: 'boolean' }, settings: productSettings },
  additionalProperties: false,
  minProperties: 1,
});
const planProps = {
  productId: { type: 'string', format: 'uuid' },
  name,
  trialPeriodDays: { type: ['integer', 'null'], minimum: 1, maximum: 730 },
  tierTagId: { type: ['string', 'null'], format: 'uuid' },
  /** A tier tag by name, created when new. */
  tierTag: { type: ['string', 'null'], minLength: 1, maxLength: 100 },
  isActive: { type: 'boolean' },
};
export const planBody = typed<PlanInput>({
  type: 'object',
  properties: planProps,
  required: ['name'],
  additionalProperties: false,
});
export const planUpdateBody = typed<Partial<PlanInput>>({
  type: 'object',
  properties: planProps,
  additionalProperties: false,
  minProperties: 1,
});
const amount = { type: ['number', 'null'], minimum: 0 };
const dateTime = { type: ['string', 'null'], format: 'date-time' };
export const planSaveBody = typed<PlanDraft>({
  type: 'object',
  properties: {
    ...planProps,
    id: { type: 'string', format: 'uuid' },
    archivedAt: dateTime,
    entitlements: { type: 'array', maxItems: 200, items: { type: 'string', minLength: 1, maxLength: 100 } },
    lineItems: {
      type: 'array',
      maxItems: 50,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['name', 'priceType', 'prices'],
        properties: {
          id: { type: 'string', format: 'uuid' },
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
          minQuantity: { type: 'integer', minimum: 0 },
          maxQuantity: { type: 'integer', minimum: 0 },
          allowChangingQuantity: { type: 'boolean' },
          unitLabel: { type: ['string', 'null'], maxLength: 50 },
          prices: {
            type: 'array',
            maxItems: 20,
            items: {
              type: 'object',
              additionalProperties: false,
              required: ['currencyOptions'],
              properties: {
                id: { type: 'string', format: 'uuid' },
                defaultCurrency: { type: 'string', pattern: '^[A-Za-z]{3}$' },
                archivedAt: dateTime,
                interval: { enum: [...INTERVALS, null] },
                intervalCount: { type: ['integer', 'null'], minimum: 1 },
                paymentPriceId: { type: 'string', maxLength: 200 },
                currencyOptions: {
                  type: 'array',
                  maxItems: 50,
                  items: {
                    type: 'object',
                    additionalProperties: false,
                    required: ['currency'],
                    properties: {
                      id: { type: 'string', format: 'uuid' },
                      currency: { type: 'string', pattern: '^[A-Za-z]{3}$' },
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
                            id: { type: 'string', format: 'uuid' },
                            upTo: { type: 'string', pattern: '^([0-9]+|inf)$' },
                            flatAmount: amount,
                            unitAmount: { type: 'number', minimum: 0 },
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
