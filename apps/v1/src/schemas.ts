/** JSON Schemas of v1's own response bodies, from the contract's field lists. Tests validate every response against them. */
import { INVOICE_LINE_MEMBERS, INVOICE_MEMBERS } from '@tollgate/core';
import {
  planFeatureProps,
  arrayOf,
  bool,
  capabilitySchema,
  date,
  enumOptionSchema,
  featureProps,
  int,
  legacyPlanSchema,
  legacyProductSchema,
  nstr,
  num,
  object,
  str,
  uuid,
} from '@tollgate/http';

export const withOptional = (properties: Record<string, unknown>, optional: Record<string, unknown>) => ({
  type: 'object',
  properties: { ...properties, ...optional },
  required: Object.keys(properties),
  additionalProperties: false,
});

export const currencySchema = object({ uuid, shortName: str, longName: str, symbol: str });
export const v1FeatureSchema = object({ ...featureProps, sortOrder: int });
export const v1FeatureWithOptionsSchema = object({ ...featureProps, sortOrder: int, featureEnumOptions: arrayOf(enumOptionSchema) });
export const productCurrencySchema = withOptional(
  { productUuid: uuid, currencyUuid: uuid, defaultCurrency: bool },
  { currency: currencySchema },
);
export const planCurrencySchema = withOptional(
  { planUuid: uuid, currencyUuid: uuid, price: num, paymentIntegrationPlanId: str },
  { currency: currencySchema },
);
export const planCapabilitySchema = withOptional(
  { planUuid: uuid, capabilityUuid: uuid, updatedAt: date },
  { capability: capabilitySchema },
);
export const v1PlanFeatureSchema = withOptional(
  {
    ...planFeatureProps,
    isUsage: bool,
    pricePerUnit: num,
    minUsage: num,
    maxUsage: num,
  },
  { feature: v1FeatureSchema, enumValue: { anyOf: [enumOptionSchema, { type: 'null' }] } },
);
export const integrationSchema = object({
  uuid,
  organisation: str,
  integrationName: str,
  accountName: str,
  accountData: { type: 'object' },
  accountId: str,
  updatedAt: date,
  isTest: bool,
});

const { type: _legacyType, ...planPropsWithoutType } = (legacyPlanSchema as { properties: Record<string, unknown> }).properties;
void _legacyType;
export const v1PlanSchema = withOptional(
  { ...planPropsWithoutType, isTest: bool, perSeatAmount: num },
  {
    capabilities: arrayOf(planCapabilitySchema),
    features: arrayOf(v1PlanFeatureSchema),
    currencies: arrayOf(planCurrencySchema),
    checkoutUrl: { type: 'string', format: 'uri' },
  },
);
export const v1ProductSchema = withOptional(
  { ...(legacyProductSchema as { properties: Record<string, unknown> }).properties, appType: str, isTest: bool },
  {
    features: arrayOf({ anyOf: [v1FeatureWithOptionsSchema, v1FeatureSchema] }),
    capabilities: arrayOf(capabilitySchema),
    currencies: arrayOf(productCurrencySchema),
    organisationPaymentIntegration: { anyOf: [integrationSchema, { type: 'null' }] },
    plans: arrayOf(v1PlanSchema),
  },
);
export const pricingTableSchema = object({
  uuid,
  name: str,
  status: str,
  title: str,
  text: str,
  theme: str,
  featureOrder: str,
  productUuid: uuid,
  customTheme: { type: ['object', 'null'] },
  featuredPlanUuid: { anyOf: [uuid, { type: 'null' }] },
  updatedAt: date,
  features: arrayOf(
    object({ pricingTableUuid: uuid, featureUuid: uuid, sortOrder: int, updatedAt: date, feature: v1FeatureWithOptionsSchema }),
  ),
  product: v1ProductSchema,
  plans: arrayOf(object({ planUuid: uuid, pricingTableUuid: uuid, sortOrder: int, updatedAt: date, plan: v1PlanSchema })),
});
export const customerSchema = object({
  uuid,
  organisation: str,
  value: str,
  email: nstr,
  paymentIntegrationCustomerId: nstr,
  createdAt: date,
  updatedAt: date,
  isTest: bool,
});
export const v1SubscriptionSchema = withOptional(
  {
    uuid,
    productUuid: uuid,
    planUuid: uuid,
    organisation: str,
    paymentIntegrationSubscriptionId: nstr,
    type: str,
    quantity: int,
    email: nstr,
    expiryDate: date,
    lineItemIds: arrayOf(str),
    status: { enum: ['ACTIVE', 'TRIALING', 'PAST_DUE', 'CANCELED'] },
    createdAt: date,
    updatedAt: date,
    isTest: bool,
    cancelAtPeriodEnd: bool,
  },
  { product: v1ProductSchema, plan: v1PlanSchema, customer: { anyOf: [customerSchema, { type: 'null' }] } },
);
export const eventSchema = object({
  uuid,
  type: str,
  status: { enum: ['queued', 'pending', 'success', 'failed'] },
  subscriptionUuid: { anyOf: [uuid, { type: 'null' }] },
  attempts: int,
  error: nstr,
  errorCode: nstr,
  createdAt: date,
  updatedAt: date,
});
export const licenseCountSchema = object({ count: int, assigned: int, unassigned: int });
export const urlSchema = object({ url: { type: 'string', format: 'uri' } });
export const pricingPageLinkSchema = object({ url: { type: 'string', format: 'uri' }, expiresAt: { type: 'string', format: 'date-time' } });
export const checkoutLinkSchema = object({ checkoutUrl: { type: 'string', format: 'uri' } });
export const eventUuidSchema = object({ eventUuid: uuid });

export { INVOICE_LINE_MEMBERS, INVOICE_MEMBERS };
const invoiceLineSchema = {
  type: 'object',
  required: [...INVOICE_LINE_MEMBERS],
  properties: { object: { const: 'line_item' }, period: { type: 'object', required: ['start', 'end'] } },
};
export const invoiceSchema = {
  type: 'object',
  required: [...INVOICE_MEMBERS],
  properties: {
    object: { const: 'invoice' },
    created: int,
    period_start: int,
    period_end: int,
    automatic_tax: { type: 'object', required: ['enabled', 'status'] },
    customer_address: { type: ['object', 'null'] },
    status_transitions: { type: 'object', required: ['finalized_at', 'marked_uncollectible_at', 'paid_at', 'voided_at'] },
    subscription_details: {
      type: 'object',
      required: ['metadata'],
      properties: { metadata: { type: 'object', required: ['granteeId', 'member'] } },
    },
    payment_settings: { type: 'object', required: ['default_mandate', 'payment_method_options', 'payment_method_types'] },
    lines: {
      type: 'object',
      required: ['object', 'data', 'has_more', 'total_count', 'url'],
      properties: { object: { const: 'list' }, data: arrayOf(invoiceLineSchema) },
    },
  },
};
export const invoiceListSchema = object({ first: nstr, last: nstr, hasMore: bool, data: arrayOf(invoiceSchema) });
export const paymentMethodSchema = {
  type: 'object',
  required: ['id', 'object', 'billing_details', 'card', 'created', 'customer', 'livemode', 'metadata', 'type'],
  properties: {
    created: int,
    billing_details: {
      type: 'object',
      required: ['address', 'email', 'name', 'phone'],
      properties: { address: { type: 'object', required: ['city', 'country', 'line1', 'line2', 'postal_code', 'state'] } },
    },
    card: {
      type: 'object',
      required: [
        'brand',
        'checks',
        'country',
        'exp_month',
        'exp_year',
        'fingerprint',
        'funding',
        'generated_from',
        'last4',
        'networks',
        'three_d_secure_usage',
        'wallet',
      ],
      properties: {
        exp_month: int,
        exp_year: int,
        checks: { type: 'object', required: ['address_line1_check', 'address_postal_code_check', 'cvc_check'] },
        networks: { type: 'object', required: ['available', 'preferred'], properties: { available: { type: 'array' } } },
        three_d_secure_usage: { type: 'object', required: ['supported'], properties: { supported: bool } },
      },
    },
  },
};

/** A usage record of a license (the real v1 API's `GET /licenses/:uuid/usage` element). */
export const licenseUsageSchema = object({ licenseUuid: uuid, featureUuid: uuid, planUuid: uuid, unitCount: num });
