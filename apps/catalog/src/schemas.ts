import { INTERVALS } from '@tollgate/core';

/** JSON Schemas of the catalog's query strings and request bodies (validated before each handler). */

const bool = { enum: ['true', 'false'] };
const listProps = {
  limit: { type: 'string', pattern: '^(100|[1-9][0-9]?)$' },
  after: { type: 'string' },
  before: { type: 'string' },
  search: { type: 'string', maxLength: 200 },
  includeArchived: bool,
  expand: { type: 'string' },
};
export const productListQuery = { type: 'object', properties: listProps, additionalProperties: false };
export const planListQuery = {
  type: 'object',
  properties: {
    ...listProps,
    productId: { type: 'string', format: 'uuid' },
    currency: { type: 'string', pattern: '^[A-Za-z]{3}$' },
    interval: { enum: [...INTERVALS] },
    intervalCount: { type: 'string', pattern: '^[1-9][0-9]{0,2}$' },
    isActive: bool,
  },
  additionalProperties: false,
};
export const expandQuery = { type: 'object', properties: { expand: { type: 'string' } } };

const name = { type: 'string', minLength: 1, maxLength: 200 };
export const productBody = {
  type: 'object',
  properties: { name, description: { type: 'string', maxLength: 2000 } },
  required: ['name'],
  additionalProperties: false,
};
export const productUpdateBody = {
  type: 'object',
  properties: { name, description: { type: 'string', maxLength: 2000 } },
  additionalProperties: false,
  minProperties: 1,
};
const planProps = {
  productId: { type: 'string', format: 'uuid' },
  name,
  trialPeriodDays: { type: ['integer', 'null'], minimum: 0, maximum: 730 },
  tierTagId: { type: ['string', 'null'], format: 'uuid' },
  isActive: { type: 'boolean' },
};
export const planBody = {
  type: 'object',
  properties: planProps,
  required: ['productId', 'name'],
  additionalProperties: false,
};
export const planUpdateBody = {
  type: 'object',
  properties: {
    name: planProps.name,
    trialPeriodDays: planProps.trialPeriodDays,
    tierTagId: planProps.tierTagId,
    isActive: planProps.isActive,
  },
  additionalProperties: false,
  minProperties: 1,
};
const amount = { type: ['number', 'null'], minimum: 0 };
export const planSaveBody = {
  type: 'object',
  properties: {
    ...planProps,
    id: { type: 'string', format: 'uuid' },
    entitlements: { type: 'array', maxItems: 200, items: { type: 'string', minLength: 1, maxLength: 100 } },
    lineItems: {
      type: 'array',
      maxItems: 50,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['name', 'priceType', 'prices'],
        properties: {
          name,
          slug: { type: 'string', maxLength: 100 },
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
  required: ['productId', 'name'],
  additionalProperties: false,
};
