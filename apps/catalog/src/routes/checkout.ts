import type { Core, QuickCheckoutRequest } from '@tollgate/core';
import { resource, route, str, typed, type Route } from '@tollgate/http';
import { checkoutPageProps, CURRENCY, INTERVAL, quantities } from '../cart-views';
import { object, objectOf } from '../response-schemas';
import { planIdOf } from '../schemas';
import { objectEnvelope } from '../views';

/** The published quick checkout body (written from its schema: every member it allows). */
const quickCheckoutBody = typed<QuickCheckoutRequest>({
  type: 'object',
  properties: {
    planId: { type: 'string', minLength: 1, maxLength: 100 },
    owner: { type: 'string', minLength: 1, maxLength: 255 },
    grantee: { type: 'string', minLength: 1, maxLength: 255 },
    interval: INTERVAL,
    intervalCount: { type: ['number', 'null'], minimum: 1 },
    currency: CURRENCY,
    metadata: quantities,
    ...checkoutPageProps,
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
        body: objectEnvelope(await quickCheckout.link(tenant, { ...body, planId: planIdOf(body.planId, 'planId') })),
      }),
    }),
  ]);
