/** JSON Schemas of the v2 and v3 response bodies several resources share, derived from v1's where the shapes agree. */
import {
  arrayOf,
  bool,
  capabilitySchema,
  date,
  enumOptionSchema,
  featureProps,
  int,
  licenseSchema,
  ndate,
  nstr,
  num,
  object,
  str,
  uuid,
} from '@tollgate/http';
import {
  currencySchema,
  integrationSchema,
  planCurrencySchema,
  v1PlanSchema,
  v1ProductSchema,
  v1SubscriptionSchema,
} from '@tollgate/app-v1';
import { V3_PLAN_DROPS, V3_PRODUCT_DROPS } from './views';
import type { Version } from './routes/support';

type ObjectSchema = { type: 'object'; properties: Record<string, unknown>; required: string[]; additionalProperties: false };

/** The schema with more required members. */
export const extend = (s: object, props: Record<string, unknown>): ObjectSchema => {
  const o = s as ObjectSchema;
  return { ...o, properties: { ...o.properties, ...props }, required: [...o.required, ...Object.keys(props)] };
};
/** The schema with these members allowed but not required (what `expand` may bring). */
export const extendOptional = (s: object, props: Record<string, unknown>): ObjectSchema => {
  const o = s as ObjectSchema;
  return { ...o, properties: { ...o.properties, ...props } };
};
/** The schema without these members. */
export const drop = (s: object, keys: readonly string[]): ObjectSchema => {
  const o = s as ObjectSchema;
  const properties = { ...o.properties };
  for (const k of keys) delete properties[k];
  return { ...o, properties, required: o.required.filter((k) => !keys.includes(k)) };
};
/** Members the schema lists as optional (relations `expand` brings) removed. */
const ownOnly = (s: ObjectSchema): ObjectSchema => {
  const properties = Object.fromEntries(Object.entries(s.properties).filter(([k]) => s.required.includes(k)));
  return { ...s, properties };
};

const v2ProductOwn = extend(ownOnly(v1ProductSchema as ObjectSchema), { slug: str, archivedAt: ndate });
const v2PlanOwn = extend(ownOnly(v1PlanSchema as ObjectSchema), {
  slug: str,
  maxSeatAmount: int,
  hasAcceptedTransaction: bool,
  archivedAt: ndate,
  salablePlan: bool,
  paddlePlanId: nstr,
});

export const productSchema = (v: Version) => (v === 'v2' ? v2ProductOwn : drop(v2ProductOwn, V3_PRODUCT_DROPS));
export const planSchema = (v: Version) => (v === 'v2' ? v2PlanOwn : drop(v2PlanOwn, V3_PLAN_DROPS));

const featureWithOptions = object({ ...featureProps, sortOrder: int, featureEnumOptions: arrayOf(enumOptionSchema) });
export const featureSchema = (v: Version) => (v === 'v2' ? featureWithOptions : drop(featureWithOptions, ['name']));

export const planFeatureSchema = (v: Version) =>
  object({
    planUuid: uuid,
    featureUuid: uuid,
    value: str,
    enumValueUuid: { anyOf: [uuid, { type: 'null' }] },
    isUnlimited: bool,
    updatedAt: date,
    ...(v === 'v2' ? { isUsage: bool, pricePerUnit: num, minUsage: num, maxUsage: num } : {}),
    feature: featureSchema(v),
    enumValue: { anyOf: [enumOptionSchema, { type: 'null' }] },
  });
export const planCurrencyFullSchema = extend(drop(planCurrencySchema, ['currency']), {
  currency: currencySchema,
  hasAcceptedTransaction: bool,
});
export const fullPlanSchema = (v: Version) => {
  const s = extend(planSchema(v), { features: arrayOf(planFeatureSchema(v)), currencies: arrayOf(planCurrencyFullSchema) });
  // Shown in a pricing table for a customer or grantee only.
  return { ...s, properties: { ...s.properties, isSubscribed: bool } };
};
export const productCurrencyFullSchema = object({ productUuid: uuid, currencyUuid: uuid, defaultCurrency: bool, currency: currencySchema });
export const planCapabilityFullSchema = object({ planUuid: uuid, capabilityUuid: uuid, updatedAt: date, capability: capabilitySchema });
export const integrationV3Schema = extend(integrationSchema, { newPaymentEnabled: bool, status: str });

export const productPricingTableSchema = (v: Version) =>
  extend(productSchema(v), {
    features: arrayOf(featureSchema(v)),
    currencies: arrayOf(productCurrencyFullSchema),
    plans: arrayOf(fullPlanSchema(v)),
  });

export const pricingTableSchema = (v: Version) => {
  const common = {
    uuid,
    status: str,
    featureOrder: str,
    productUuid: uuid,
    featuredPlanUuid: { anyOf: [uuid, { type: 'null' }] },
    updatedAt: date,
    product: extend(productSchema(v), { features: arrayOf(featureSchema(v)), currencies: arrayOf(productCurrencyFullSchema) }),
    plans: arrayOf(object({ planUuid: uuid, pricingTableUuid: uuid, sortOrder: int, updatedAt: date, plan: fullPlanSchema(v) })),
  };
  if (v === 'v3') return object(common);
  return object({
    ...common,
    name: str,
    title: str,
    text: str,
    theme: str,
    customTheme: { type: ['object', 'null'] },
    features: arrayOf(object({ pricingTableUuid: uuid, featureUuid: uuid, sortOrder: int, updatedAt: date, feature: featureWithOptions })),
  });
};

const subscriptionOwn = extend(ownOnly(v1SubscriptionSchema as ObjectSchema), { owner: nstr });
export const subscriptionSchema = (v: Version) => ({
  ...subscriptionOwn,
  properties: { ...subscriptionOwn.properties, plan: fullPlanSchema(v), product: productSchema(v) },
});
export const subscriptionListItemSchema = (v: Version) => ({
  ...subscriptionOwn,
  properties: { ...subscriptionOwn.properties, plan: planSchema(v) },
});

export const seatSchema = (v: Version) =>
  v === 'v2' ? licenseSchema : drop(licenseSchema, ['name', 'email', 'capabilities', 'metadata', 'cancelAtPeriodEnd']);

export const eventV2Schema = object({
  uuid,
  type: str,
  organisation: str,
  status: { enum: ['queued', 'pending', 'success', 'failed'] },
  isTest: bool,
  retries: int,
  errorMessage: nstr,
  errorCode: nstr,
  createdAt: date,
  updatedAt: date,
});
