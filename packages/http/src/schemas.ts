/**
 * JSON Schemas of the response bodies legacy and v1 share (and the helpers each generation's own
 * schemas are written with), from the contract's field lists. Tests validate
 * every response against them (no extra members allowed); the OpenAPI documents are built from
 * them.
 */
export const str = { type: 'string' } as const;
export const nstr = { type: ['string', 'null'] } as const;
export const bool = { type: 'boolean' } as const;
export const int = { type: 'integer' } as const;
export const num = { type: 'number' } as const;
export const date = { type: 'string', pattern: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\.\\d{3}Z$' } as const;
export const ndate = { anyOf: [date, { type: 'null' }] } as const;
export const uuid = { type: 'string', format: 'uuid' } as const;

export const object = (properties: Record<string, unknown>) => ({
  type: 'object',
  properties,
  required: Object.keys(properties),
  additionalProperties: false,
});
export const arrayOf = (items: unknown) => ({ type: 'array', items });

export const legacyProductSchema = object({
  uuid,
  name: str,
  description: str,
  displayName: str,
  organisation: str,
  logoUrl: { type: 'null' },
  status: { enum: ['ACTIVE', 'CANCELLED'] },
  paid: bool,
  organisationPaymentIntegrationUuid: str,
  paymentIntegrationProductId: nstr,
  updatedAt: date,
});

export const legacyPlanSchema = object({
  uuid,
  name: str,
  description: str,
  displayName: str,
  organisation: str,
  status: { enum: ['ACTIVE', 'CANCELLED'] },
  trialDays: { type: ['integer', 'null'] },
  evaluation: bool,
  evalDays: int,
  visibility: { enum: ['public', 'private'] },
  licenseType: str,
  interval: { enum: ['day', 'week', 'month', 'year'] },
  length: int,
  active: bool,
  planType: str,
  pricingType: { enum: ['paid', 'free'] },
  environment: str,
  type: str,
  providerPlanId: nstr,
  productUuid: uuid,
  servicePlan: bool,
  updatedAt: date,
});

export const enumOptionSchema = object({ uuid, name: str, featureUuid: uuid, updatedAt: date });

export const featureProps = {
  uuid,
  name: str,
  description: str,
  displayName: str,
  variableName: str,
  status: { enum: ['ACTIVE', 'DEPRECATED', 'COMING_SOON'] },
  visibility: { enum: ['public', 'private'] },
  valueType: { enum: ['boolean', 'numerical', 'enum'] },
  defaultValue: str,
  showUnlimited: bool,
  productUuid: uuid,
  updatedAt: date,
};
export const legacyFeatureSchema = object(featureProps);
/** The members of a plan feature every generation shows (`planFeatureBase`). */
export const planFeatureProps = {
  planUuid: uuid,
  featureUuid: uuid,
  value: str,
  enumValueUuid: { anyOf: [uuid, { type: 'null' }] },
  isUnlimited: bool,
  updatedAt: date,
};
export const capabilitySchema = object({ uuid, name: str, description: str, status: str, productUuid: uuid, updatedAt: date });

export const checkSchema = object({
  capabilities: arrayOf(str),
  capabilitiesEndDates: { type: 'object', additionalProperties: date },
  publicHash: str,
  signature: { type: 'string', pattern: '^[0-9a-f]+$' },
  capsHashed: str,
});

export const licenseSchema = object({
  uuid,
  productUuid: uuid,
  planUuid: uuid,
  subscriptionUuid: { anyOf: [uuid, { type: 'null' }] },
  cancelAtPeriodEnd: bool,
  granteeId: nstr,
  purchaser: str,
  email: nstr,
  name: nstr,
  paymentService: str,
  type: str,
  capabilities: arrayOf(capabilitySchema),
  startTime: date,
  endTime: ndate,
  status: { enum: ['ACTIVE', 'TRIALING', 'EVALUATION', 'SCHEDULED', 'INACTIVE', 'CANCELED'] },
  metadata: { type: 'object' },
  updatedAt: date,
  isTest: bool,
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

/** One ad hoc license request (legacy and v1 `POST /licenses`): a plan, its buyer and the grantee (null: unassigned). */
export const adHocLicenseRequestSchema = {
  type: 'object',
  properties: {
    planUuid: { type: 'string', format: 'uuid' },
    member: { type: 'string', minLength: 1, maxLength: 320 },
    granteeId: { type: ['string', 'null'], minLength: 1, maxLength: 320 },
  },
  required: ['planUuid', 'member', 'granteeId'],
  additionalProperties: false,
};
