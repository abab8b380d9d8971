import { DomainError, ErrorCodes, PRORATIONS, type CheckoutLinkRequest, type Proration } from '@tollgate/core';
import { compile, Expand } from '@tollgate/http';

export const EXPANDABLE = {
  product: [
    'generateCheckoutLinks', 'features', 'features.featureEnumOptions', 'capabilities', 'currencies', 'currencies.currency', 'organisationPaymentIntegration',
    'plans', 'plans.capabilities', 'plans.features', 'plans.features.feature', 'plans.features.enumValue', 'plans.currencies', 'plans.currencies.currency',
  ],
  plan: ['capabilities', 'capabilities.capability', 'features', 'features.feature', 'features.enumValue', 'currencies', 'currencies.currency', 'generateCheckoutLink'],
  subscription: ['product', 'product.organisationPaymentIntegration', 'product.currencies', 'plan.currencies', 'customer'],
} as const;

/** `expand=a,b` (or `[a,b]`): exactly the allowed values; an unknown one is named in a 400. */
export function parseExpand(raw: unknown, resource: keyof typeof EXPANDABLE): Expand {
  if (raw === undefined || raw === '') return new Expand([]);
  if (typeof raw !== 'string') throw new DomainError(ErrorCodes.VALIDATION_FAILED, 'expand must be given once, comma-separated', [{ property: 'expand', error: 'must be a comma-separated string' }]);
  const values = raw.replace(/^\[|\]$/g, '').split(',').map((s) => s.trim()).filter(Boolean);
  const allowed = EXPANDABLE[resource] as readonly string[];
  const unknown = values.filter((v) => !allowed.includes(v));
  if (unknown.length) {
    throw new DomainError(ErrorCodes.VALIDATION_FAILED, `expand: unknown value(s) ${unknown.join(', ')}; allowed: ${allowed.join(', ')}`, unknown.map((u) => ({ property: 'expand', error: `unknown value ${u}` })));
  }
  return new Expand(values);
}

const str = { type: 'string' } as const;
const checkoutOptionProps = {
  promoCode: str, allowPromoCode: { enum: ['true', 'false'] }, customerEmail: str, customerId: str, currency: str, automaticTax: { enum: ['true', 'false'] },
};

export const uuidParam = (name: string) => compile<Record<string, string>>({
  type: 'object', properties: { [name]: { type: 'string', format: 'uuid' } }, required: [name],
});

export const planQuery = compile<CheckoutLinkRequest & { expand?: string }>({
  type: 'object', properties: { ...checkoutOptionProps, expand: str, successUrl: str, cancelUrl: str, granteeId: str, member: str },
});

export const checkoutLinkQuery = compile<CheckoutLinkRequest>({
  type: 'object',
  properties: { ...checkoutOptionProps, successUrl: str, cancelUrl: str, granteeId: { type: 'string', minLength: 1 }, member: { type: 'string', minLength: 1 }, quantity: str, changeQuantity: str },
  required: ['successUrl', 'cancelUrl', 'granteeId', 'member'],
});

type GlobalQuery = CheckoutLinkRequest & { globalSuccessUrl: string; globalCancelUrl: string; globalGranteeId: string; member?: string };
const globalProps = { ...checkoutOptionProps, globalSuccessUrl: str, globalCancelUrl: str, globalGranteeId: { type: 'string', minLength: 1 }, member: { type: 'string', minLength: 1 } };
export const productPricingTableQuery = compile<GlobalQuery>({ type: 'object', properties: globalProps, required: ['globalGranteeId', 'globalSuccessUrl', 'globalCancelUrl'] });
export const pricingTableQuery = compile<GlobalQuery>({ type: 'object', properties: globalProps, required: ['globalSuccessUrl', 'globalCancelUrl', 'globalGranteeId', 'member'] });

/** The checkout request each plan of a pricing table gets from its global parameters. */
export const fromGlobal = (q: GlobalQuery): CheckoutLinkRequest => {
  const { globalSuccessUrl, globalCancelUrl, globalGranteeId, member, ...options } = q;
  return { ...options, successUrl: globalSuccessUrl, cancelUrl: globalCancelUrl, granteeId: globalGranteeId, member: member ?? globalGranteeId };
};

const proration = { enum: [...PRORATIONS] };
export const changePlanBody = compile<{ planUuid: string; proration?: Proration }>({
  type: 'object', properties: { planUuid: { type: 'string', format: 'uuid' }, proration }, required: ['planUuid'], additionalProperties: false,
});
export const incrementBody = compile<{ increment: number; proration?: Proration }>({
  type: 'object', properties: { increment: { type: 'integer', minimum: 1, maximum: 10000 }, proration }, required: ['increment'], additionalProperties: false,
});
export const decrementBody = compile<{ decrement: number; proration?: Proration }>({
  type: 'object', properties: { decrement: { type: 'integer', minimum: 1, maximum: 10000 }, proration }, required: ['decrement'], additionalProperties: false,
});
export const cancelQuery = compile<{ when: 'now' | 'end' }>({
  type: 'object', properties: { when: { enum: ['now', 'end'] } }, required: ['when'],
});
export const createLicensesBody = compile<{ planUuid: string; member: string; granteeId: string | null } | { planUuid: string; member: string; granteeId: string | null }[]>({
  anyOf: [
    { $ref: '#/definitions/license' },
    { type: 'array', minItems: 1, maxItems: 100, items: { $ref: '#/definitions/license' } },
  ],
  definitions: {
    license: {
      type: 'object',
      properties: { planUuid: { type: 'string', format: 'uuid' }, member: { type: 'string', minLength: 1, maxLength: 320 }, granteeId: { type: ['string', 'null'], minLength: 1, maxLength: 320 } },
      required: ['planUuid', 'member', 'granteeId'],
      additionalProperties: false,
    },
  },
});
export const batchUpdateBody = compile<{ uuid: string; granteeId: string | null }[]>({
  type: 'array', minItems: 1, maxItems: 500,
  items: { type: 'object', properties: { uuid: { type: 'string', format: 'uuid' }, granteeId: { type: ['string', 'null'], minLength: 1, maxLength: 320 } }, required: ['uuid', 'granteeId'], additionalProperties: false },
});
export const licenseListQuery = compile<{ status?: string; subscriptionUuid?: string }>({
  type: 'object', properties: { status: str, subscriptionUuid: { type: 'string', format: 'uuid' } },
});
