/**
 * JSON Schemas of the response bodies, written from the contract's field lists. Tests validate
 * every response against them (no extra members allowed); the OpenAPI documents are built from
 * them.
 */
const str = { type: 'string' } as const;
const nstr = { type: ['string', 'null'] } as const;
const bool = { type: 'boolean' } as const;
const int = { type: 'integer' } as const;
const num = { type: 'number' } as const;
const date = { type: 'string', pattern: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\.\\d{3}Z$' } as const;
const ndate = { anyOf: [date, { type: 'null' }] } as const;
const uuid = { type: 'string', format: 'uuid' } as const;

const object = (properties: Record<string, unknown>) => ({
  type: 'object',
  properties,
  required: Object.keys(properties),
  additionalProperties: false,
});
const arrayOf = (items: unknown) => ({ type: 'array', items });

export const legacyProductSchema = object({
  uuid, name: str, description: str, displayName: str, organisation: str, logoUrl: { type: 'null' }, status: { enum: ['ACTIVE', 'CANCELLED'] },
  paid: bool, organisationPaymentIntegrationUuid: str, paymentIntegrationProductId: nstr, updatedAt: date,
});

export const legacyPlanSchema = object({
  uuid, name: str, description: str, displayName: str, organisation: str, status: { enum: ['ACTIVE', 'CANCELLED'] },
  trialDays: { type: ['integer', 'null'] }, evaluation: bool, evalDays: int, visibility: { enum: ['public', 'private'] }, licenseType: str,
  interval: { enum: ['day', 'week', 'month', 'year'] }, length: int, active: bool, planType: str, pricingType: { enum: ['paid', 'free'] },
  environment: str, type: str, providerPlanId: nstr, productUuid: uuid, servicePlan: bool, updatedAt: date,
});

export const enumOptionSchema = object({ uuid, name: str, featureUuid: uuid, updatedAt: date });

const featureProps = {
  uuid, name: str, description: str, displayName: str, variableName: str, status: { enum: ['ACTIVE', 'DEPRECATED', 'COMING_SOON'] },
  visibility: { enum: ['public', 'private'] }, valueType: { enum: ['boolean', 'numerical', 'enum'] }, defaultValue: str, showUnlimited: bool,
  productUuid: uuid, updatedAt: date,
};
export const legacyFeatureSchema = object(featureProps);
export const legacyFeatureWithOptionsSchema = object({ ...featureProps, featureEnumOptions: arrayOf(enumOptionSchema) });

export const legacyPlanFeatureSchema = object({
  planUuid: uuid, featureUuid: uuid, value: str, enumValueUuid: { anyOf: [uuid, { type: 'null' }] }, isUnlimited: bool, updatedAt: date,
  feature: legacyFeatureSchema, enumValue: { anyOf: [enumOptionSchema, { type: 'null' }] },
});

export const capabilitySchema = object({ uuid, name: str, description: str, status: str, productUuid: uuid, updatedAt: date });

export const checkSchema = object({
  capabilities: arrayOf(str),
  capabilitiesEndDates: { type: 'object', additionalProperties: date },
  publicHash: str,
  signature: { type: 'string', pattern: '^[0-9a-f]+$' },
  capsHashed: str,
});

export const licenseSchema = object({
  uuid, productUuid: uuid, planUuid: uuid, subscriptionUuid: { anyOf: [uuid, { type: 'null' }] }, cancelAtPeriodEnd: bool, granteeId: nstr,
  purchaser: str, email: nstr, name: nstr, paymentService: str, type: str, capabilities: arrayOf(capabilitySchema), startTime: date, endTime: ndate,
  status: { enum: ['ACTIVE', 'TRIALING', 'EVALUATION', 'SCHEDULED', 'INACTIVE', 'CANCELED'] }, metadata: { type: 'object' }, updatedAt: date, isTest: bool,
});

export const legacyErrorSchema = {
  type: 'object',
  properties: {
    error: str,
    code: str,
    validationErrors: arrayOf(object({ property: str, error: str })),
  },
  required: ['error', 'code'],
  additionalProperties: false,
};

export { num };
