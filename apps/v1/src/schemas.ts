/** JSON Schemas of the v1 response bodies several resources share (each route module declares its own beside its handlers). */
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
    status: { enum: ['ACTIVE', 'TRIALING', 'PAST_DUE', 'UNPAID', 'PAUSED', 'CANCELED'] },
    createdAt: date,
    updatedAt: date,
    isTest: bool,
    cancelAtPeriodEnd: bool,
  },
  { product: v1ProductSchema, plan: v1PlanSchema, customer: { anyOf: [customerSchema, { type: 'null' }] } },
);
