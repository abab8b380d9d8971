import type { Core, QuickCheckoutRequest } from '@tollgate/core';
import { resource, route, str, typed, type Route } from '@tollgate/http';
import { object, objectOf } from '../response-schemas';
import { objectEnvelope } from '../views';

const CURRENCY = { type: 'string', pattern: '^[A-Za-z]{3}$' };
const quantities = {
  type: 'object',
  maxProperties: 50,
  additionalProperties: {
    type: 'object',
    properties: { quantity: { type: 'number', minimum: 1 } },
    required: ['quantity'],
    additionalProperties: false,
  },
};
const uri = { type: 'string', minLength: 1, maxLength: 2048 };
/** The published quick checkout body (written from its schema: every member it allows). */
const quickCheckoutBody = typed<QuickCheckoutRequest>({
  type: 'object',
  properties: {
    planId: { type: 'string', minLength: 1, maxLength: 100 },
    owner: { type: 'string', minLength: 1, maxLength: 255 },
    grantee: { type: 'string', minLength: 1, maxLength: 255 },
    interval: { enum: ['day', 'week', 'month', 'year', null] },
    intervalCount: { type: ['number', 'null'], minimum: 1 },
    currency: CURRENCY,
    metadata: quantities,
    email: { type: 'string', format: 'email', maxLength: 320, example: 'billing@vendor.example.com' },
    cancelUrl: uri,
    successUrl: uri,
    allowPromoCodes: { type: 'boolean' },
    automaticTax: { type: 'boolean' },
    collectBillingAddress: { type: 'boolean' },
    collectShippingAddress: { type: 'boolean' },
    cardPrefillPreference: { enum: ['none', 'always', 'choice'] },
    trialPeriodDays: { type: 'number', minimum: 1, maximum: 730 },
  },
  required: ['planId', 'owner', 'interval', 'intervalCount'],
  additionalProperties: false,
});

export const checkoutRoutes = ({ quickCheckout }: Pick<Core, 'quickCheckout'>): Route[] =>
  resource({ name: 'checkout', description: 'Quick checkout: a payment link for one plan and one owner' }, [
    route({
      method: 'post',
      path: '/api/checkout',
      operationId: 'generateQuickCheckoutLink',
      summary: 'Generate a quick checkout link',
      description:
        "A checkout link for the plan, paid by `owner` (the customer) for `grantee` (default: the owner); URLs and options default to the product's checkout settings; `metadata` gives the per-seat line item's quantity.",
      scope: ['plans', 'read'],
      body: quickCheckoutBody,
      response: { status: 200, schema: objectOf(object({ url: str })) },
      example: { type: 'object', data: { url: 'https://billing.example.com/sandbox/checkout/0f8fad5b-d9cb-469f-a165-70867728950e' } },
      handle: async ({ tenant, body }) => ({
        status: 200,
        body: objectEnvelope(await quickCheckout.link(tenant, body)),
      }),
    }),
  ]);
