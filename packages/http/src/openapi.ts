import * as S from './schemas';

/**
 * OpenAPI 3.1 documents of the generations, built from the same JSON Schemas the tests validate
 * responses against. Served at `/openapi/<generation>.json`.
 */
type Op = { method: 'get' | 'post' | 'put' | 'delete'; path: string; summary: string; status: number; schema?: unknown; params?: string[]; body?: boolean };

const arr = (items: unknown) => ({ type: 'array', items });
const errorBody = S.legacyErrorSchema;

const LEGACY: Op[] = [
  { method: 'get', path: '/products', summary: 'Products of the key\'s organisation', status: 200, schema: arr(S.legacyProductSchema) },
  { method: 'get', path: '/products/{uuid}/plans', summary: 'Plans of a product', status: 200, schema: arr(S.legacyPlanSchema) },
  { method: 'get', path: '/products/{uuid}/features', summary: 'Features of a product, with enum options', status: 200, schema: arr(S.legacyFeatureWithOptionsSchema) },
  { method: 'get', path: '/plans/{uuid}/features', summary: 'Feature values of a plan', status: 200, schema: arr(S.legacyPlanFeatureSchema) },
  { method: 'get', path: '/licenses/check', summary: 'Signed capability check (204: no capability)', status: 200, schema: S.checkSchema, params: ['productUuid', 'granteeIds', 'grace', 'sigEncode'] },
  { method: 'post', path: '/licenses', summary: 'Create ad hoc license(s): free or evaluation plans', status: 201, schema: { anyOf: [S.licenseSchema, arr(S.licenseSchema)] }, body: true },
];

const V1: Op[] = [
  { method: 'get', path: '/products', summary: 'Get products', status: 200, schema: arr(S.v1ProductSchema) },
  { method: 'get', path: '/products/{productUuid}', summary: 'Get a product', status: 200, schema: S.v1ProductSchema, params: ['expand'] },
  { method: 'get', path: '/products/{productUuid}/plans', summary: 'Get all plans of a product', status: 200, schema: arr(S.v1PlanSchema) },
  { method: 'get', path: '/products/{productUuid}/pricingtable', summary: 'Get product pricing table', status: 200, schema: S.v1ProductSchema, params: ['globalSuccessUrl', 'globalCancelUrl', 'globalGranteeId', 'member'] },
  { method: 'get', path: '/products/{productUuid}/features', summary: 'Get product features', status: 200, schema: arr(S.v1FeatureSchema) },
  { method: 'get', path: '/products/{productUuid}/currencies', summary: 'Get product currencies', status: 200, schema: arr(S.productCurrencySchema) },
  { method: 'get', path: '/products/{productUuid}/capabilities', summary: 'Get product capabilities', status: 200, schema: arr(S.capabilitySchema) },
  { method: 'get', path: '/plans/{planUuid}', summary: 'Get a plan', status: 200, schema: S.v1PlanSchema, params: ['expand', 'successUrl', 'cancelUrl', 'granteeId', 'member'] },
  { method: 'get', path: '/plans/{planUuid}/features', summary: 'Get plan features', status: 200, schema: arr(S.v1PlanFeatureSchema) },
  { method: 'get', path: '/plans/{planUuid}/currencies', summary: 'Get plan currencies', status: 200, schema: arr(S.planCurrencySchema) },
  { method: 'get', path: '/plans/{planUuid}/capabilities', summary: 'Get plan capabilities', status: 200, schema: arr(S.planCapabilitySchema) },
  { method: 'get', path: '/plans/{planUuid}/checkoutlink', summary: 'Get a checkout link', status: 200, schema: S.checkoutLinkSchema, params: ['successUrl', 'cancelUrl', 'granteeId', 'member', 'quantity', 'changeQuantity'] },
  { method: 'get', path: '/pricing-tables/{pricingTableUuid}', summary: 'Get a pricing table', status: 200, schema: S.pricingTableSchema, params: ['globalSuccessUrl', 'globalCancelUrl', 'globalGranteeId', 'member'] },
  { method: 'get', path: '/subscriptions/{subscriptionUuid}', summary: 'Get a subscription', status: 200, schema: S.v1SubscriptionSchema, params: ['expand'] },
  { method: 'put', path: '/subscriptions/{subscriptionUuid}/change-plan', summary: 'Change plan (no version header needed)', status: 204, body: true },
  { method: 'get', path: '/subscriptions/{subscriptionUuid}/invoices', summary: 'Get subscription invoices', status: 200, schema: S.invoiceListSchema },
  { method: 'get', path: '/subscriptions/{subscriptionUuid}/updateplan/listplans', summary: 'Plans a subscriber can switch to', status: 200, schema: arr(S.v1PlanSchema) },
  { method: 'put', path: '/subscriptions/{subscriptionUuid}/cancel', summary: 'Cancel now or at period end', status: 204, params: ['when'] },
  { method: 'get', path: '/subscriptions/{subscriptionUuid}/updatepaymentlink', summary: 'Update-payment link', status: 200, schema: S.urlSchema },
  { method: 'get', path: '/subscriptions/{subscriptionUuid}/customer-portal', summary: 'Customer portal link', status: 200, schema: S.urlSchema },
  { method: 'get', path: '/subscriptions/{subscriptionUuid}/cancelpaymentlink', summary: 'Cancel-subscription link', status: 200, schema: S.urlSchema },
  { method: 'get', path: '/subscriptions/{subscriptionUuid}/payment-method', summary: 'Payment method', status: 200, schema: S.paymentMethodSchema },
  { method: 'put', path: '/subscriptions/{subscriptionUuid}/reactivate', summary: 'Reactivate a scheduled cancellation', status: 204 },
  { method: 'put', path: '/subscriptions/{subscriptionUuid}/updateplan/{planUuid}', summary: 'Move to another plan (deprecated; no version header needed)', status: 204 },
  { method: 'post', path: '/subscriptions/{subscriptionUuid}/seats', summary: 'Increment seats', status: 202, schema: S.eventUuidSchema, body: true },
  { method: 'put', path: '/subscriptions/{subscriptionUuid}/seats', summary: 'Decrement seats', status: 202, schema: S.eventUuidSchema, body: true },
  { method: 'post', path: '/licenses', summary: 'Create licenses', status: 200, schema: arr(S.licenseSchema), body: true },
  { method: 'put', path: '/licenses', summary: 'Batch update grantees', status: 200, schema: arr(S.licenseSchema), body: true },
  { method: 'get', path: '/licenses', summary: 'Get licenses', status: 200, schema: arr(S.licenseSchema), params: ['status', 'subscriptionUuid'] },
  { method: 'get', path: '/licenses/count', summary: 'Count licenses', status: 200, schema: S.licenseCountSchema, params: ['status', 'subscriptionUuid'] },
  { method: 'get', path: '/licenses/check', summary: 'Signed capability check', status: 200, schema: S.checkSchema, params: ['productUuid', 'granteeIds', 'grace', 'sigEncode'] },
  { method: 'get', path: '/events/{eventUuid}', summary: 'Status of an accepted change', status: 200, schema: S.eventSchema },
];

const CATALOG: Op[] = [
  { method: 'get', path: '/api/products', summary: 'List products', status: 200, params: ['limit', 'after', 'before', 'search', 'includeArchived', 'expand'] },
  { method: 'post', path: '/api/products', summary: 'Create a product', status: 201, body: true },
  { method: 'get', path: '/api/products/{id}', summary: 'Product detail', status: 200, params: ['expand'] },
  { method: 'put', path: '/api/products/{id}', summary: 'Update a product', status: 200, body: true },
  { method: 'delete', path: '/api/products/{id}', summary: 'Delete a product', status: 204 },
  { method: 'post', path: '/api/products/{id}/archive', summary: 'Archive a product', status: 204 },
  { method: 'get', path: '/api/plans', summary: 'List plans', status: 200, params: ['limit', 'after', 'before', 'search', 'includeArchived', 'expand', 'productId', 'currency', 'interval', 'intervalCount', 'isActive'] },
  { method: 'post', path: '/api/plans', summary: 'Create a plan', status: 201, body: true },
  { method: 'post', path: '/api/plans/save', summary: 'Save a plan with entitlements and nested pricing', status: 201, body: true },
  { method: 'get', path: '/api/plans/{id}', summary: 'Plan detail', status: 200, params: ['expand'] },
  { method: 'put', path: '/api/plans/{id}', summary: 'Update a plan', status: 200, body: true },
  { method: 'delete', path: '/api/plans/{id}', summary: 'Delete a plan', status: 204 },
  { method: 'post', path: '/api/plans/{id}/archive', summary: 'Archive a plan', status: 204 },
];

export const GENERATIONS = { legacy: LEGACY, v1: V1, catalog: CATALOG } as const;
export type GenerationName = keyof typeof GENERATIONS;

export function openApiDocument(generation: GenerationName): Record<string, unknown> {
  const auth =
    generation === 'catalog'
      ? { BearerAuth: { type: 'http', scheme: 'bearer' } }
      : { ApiKey: { type: 'apiKey', in: 'header', name: 'x-api-key' } };
  const paths: Record<string, Record<string, unknown>> = {};
  for (const op of GENERATIONS[generation]) {
    const pathParams = [...op.path.matchAll(/\{(\w+)\}/g)].map((m) => ({ name: m[1], in: 'path', required: true, schema: { type: 'string' } }));
    const headers = generation === 'v1' && !op.summary.includes('no version header') ? [{ name: 'version', in: 'header', required: true, schema: { const: 'v1' } }] : [];
    const idem = generation === 'catalog' && op.method !== 'get' && op.method !== 'delete' ? [{ name: 'idempotency-key', in: 'header', required: false, schema: { type: 'string', maxLength: 255 } }] : [];
    paths[op.path] ??= {};
    paths[op.path][op.method] = {
      summary: op.summary,
      parameters: [...pathParams, ...headers, ...idem, ...(op.params ?? []).map((name) => ({ name, in: 'query', required: false, schema: { type: 'string' } }))],
      ...(op.body ? { requestBody: { required: true, content: { 'application/json': { schema: { type: ['object', 'array'] } } } } } : {}),
      responses: {
        [op.status]: op.schema ? { description: 'success', content: { 'application/json': { schema: op.schema } } } : { description: 'success' },
        400: { description: 'bad input', content: { 'application/json': { schema: generation === 'catalog' ? { type: 'object' } : errorBody } } },
        401: { description: 'no, unknown or revoked key' },
        403: { description: 'missing scope or another organisation\'s record' },
        404: { description: 'unknown record' },
      },
    };
  }
  return {
    openapi: '3.1.0',
    info: { title: `Tollgate ${generation} API`, version: generation === 'catalog' ? '0.0.0' : generation },
    components: { securitySchemes: auth },
    security: [Object.fromEntries(Object.keys(auth).map((k) => [k, []]))],
    paths,
  };
}
