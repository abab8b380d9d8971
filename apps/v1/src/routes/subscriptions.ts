import { INVOICE_LINE_MEMBERS, INVOICE_MEMBERS, PRORATIONS, type Proration } from '@tollgate/core';
import {
  arrayOf,
  bool,
  int,
  noContent,
  nstr,
  object,
  ok,
  querySchema,
  resource,
  route,
  bodySchema,
  uuid,
  type Route,
  type RouteDef,
} from '@tollgate/http';
import { parseExpand } from '../params';
import { v1PlanSchema, v1SubscriptionSchema } from '../schemas';
import { DISPLAY_PLAN, v1Plan, v1Subscription } from '../views';
import type { V1Services } from './support';

export const urlSchema = object({ url: { type: 'string', format: 'uri' } });
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

const proration = { enum: PRORATIONS };
const seatCount = { type: 'integer', minimum: 1, maximum: 10000 } as const;

export const expandQuery = querySchema({ expand: { type: 'string' } });
export const cancelQuery = querySchema({ when: { enum: ['now', 'end'] } }, ['when']);
export const changePlanBody = bodySchema({
  type: 'object',
  properties: { planUuid: { type: 'string', format: 'uuid' }, proration },
  required: ['planUuid'],
  additionalProperties: false,
});
/** SDK 3.x's `subscriptions.updatePlan` body (`PUT /subscriptions`). */
export const movePlanBody = bodySchema({
  type: 'object',
  properties: { newPlanId: { type: 'string', format: 'uuid' }, subscriptionId: { type: 'string', format: 'uuid' } },
  required: ['newPlanId', 'subscriptionId'],
  additionalProperties: false,
});
export const incrementBody = bodySchema({
  type: 'object',
  properties: { increment: seatCount, proration },
  required: ['increment'],
  additionalProperties: false,
});
export const decrementBody = bodySchema({
  type: 'object',
  properties: { decrement: seatCount, proration },
  required: ['decrement'],
  additionalProperties: false,
});

type Subscriptions = V1Services['core']['subscriptions'];

/*
 * The routes v1, v2 and v3 share to the letter (v2 and v3 build them from here): what the payment
 * provider keeps of a subscription (invoices, payment method, its pages), cancel and reactivate.
 */

/** A page of the payment provider for the subscriber (`kind`), answered as `{ url }`. */
export const paymentLinkRoute =
  (subscriptions: Subscriptions) =>
  (path: string, operationId: string, summary: string, kind: 'updatePayment' | 'portal' | 'cancel'): RouteDef =>
    route({
      method: 'get',
      path: `/subscriptions/:subscriptionUuid/${path}`,
      operationId,
      summary,
      description: `${summary} at the payment provider, for the subscriber (open it in their browser). Its holder can act on the subscription (cancel, change plan, seats or payment method), so it takes \`subscriptions:write\`.`,
      // The link acts on the subscription: handing it out is a write (docs/api/v1.md, "Scopes").
      scope: ['subscriptions', 'write'],
      response: { status: 200, schema: urlSchema },
      handle: async ({ tenant, params }) => ok(await subscriptions.link(tenant, params.subscriptionUuid, kind)),
    });

export const subscriptionInvoicesRoute = (subscriptions: Subscriptions): RouteDef =>
  route({
    method: 'get',
    path: '/subscriptions/:subscriptionUuid/invoices',
    operationId: 'getSubscriptionInvoices',
    summary: 'Get subscription invoices',
    description: "The subscription's invoices at the payment provider, newest first.",
    scope: ['subscriptions', 'read'],
    response: { status: 200, schema: invoiceListSchema },
    handle: async ({ tenant, params }) => ok(await subscriptions.invoices(tenant, params.subscriptionUuid)),
  });

export const paymentMethodRoute = (subscriptions: Subscriptions): RouteDef =>
  route({
    method: 'get',
    path: '/subscriptions/:subscriptionUuid/payment-method',
    operationId: 'getPaymentMethod',
    summary: 'Payment method',
    description: 'The card or other method the subscription is charged to (brand and last digits only).',
    scope: ['subscriptions', 'read'],
    response: { status: 200, schema: paymentMethodSchema },
    handle: async ({ tenant, params }) => ok(await subscriptions.paymentMethod(tenant, params.subscriptionUuid)),
  });

/** Cancel now or at period end; `ends` names what ends with the subscription (v1: licenses, v2: seats). */
export const cancelSubscriptionRoute = (subscriptions: Subscriptions, ends: string): RouteDef =>
  route({
    method: 'put',
    path: '/subscriptions/:subscriptionUuid/cancel',
    operationId: 'cancelSubscription',
    summary: 'Cancel now or at period end',
    description: `\`when=now\` ends the subscription and its ${ends} at once; \`when=end\` at the end of the paid period (reactivatable until then).`,
    scope: ['subscriptions', 'write'],
    query: cancelQuery,
    response: { status: 204 },
    async handle({ tenant, params, query }) {
      await subscriptions.cancel(tenant, params.subscriptionUuid, query.when);
      return noContent;
    },
  });

export const reactivateSubscriptionRoute = (subscriptions: Subscriptions): RouteDef =>
  route({
    method: 'put',
    path: '/subscriptions/:subscriptionUuid/reactivate',
    operationId: 'reactivateSubscription',
    summary: 'Reactivate a scheduled cancellation',
    description: 'Undoes a cancellation at period end while the period has not ended.',
    scope: ['subscriptions', 'write'],
    response: { status: 204 },
    async handle({ tenant, params }) {
      await subscriptions.reactivate(tenant, params.subscriptionUuid);
      return noContent;
    },
  });

export function subscriptionRoutes({ core: { subscriptions, seats } }: V1Services): Route[] {
  const link = paymentLinkRoute(subscriptions);
  const seatChange = (method: 'post' | 'put', type: 'seats.increment' | 'seats.decrement'): RouteDef => {
    const increment = type === 'seats.increment';
    return route({
      method,
      path: '/subscriptions/:subscriptionUuid/seats',
      operationId: increment ? 'incrementSeats' : 'decrementSeats',
      summary: increment ? 'Increment seats' : 'Decrement seats',
      description: `${increment ? 'Adds' : 'Removes'} seats (licenses) of a per-seat subscription: accepted at once (202), applied in order; \`GET /events/{eventUuid}\` tells how it went.`,
      scope: ['subscriptions', 'write'],
      body: increment ? incrementBody : decrementBody,
      response: { status: 202, schema: eventUuidSchema },
      async handle({ tenant, params, body }) {
        const b = body as { increment?: number; decrement?: number; proration?: Proration };
        const e = await seats.request(tenant, params.subscriptionUuid, {
          type,
          count: (increment ? b.increment : b.decrement) as number,
          proration: b.proration ?? 'create_prorations',
        });
        return { status: 202, body: { eventUuid: e.id } };
      },
    });
  };
  return resource({ name: 'subscriptions', description: 'Subscriptions: plan changes, cancellation, seats, invoices and payment links' }, [
    route({
      method: 'get',
      path: '/subscriptions/:subscriptionUuid',
      operationId: 'getSubscription',
      summary: 'Get a subscription',
      description: 'One subscription; `expand` brings its product, plan currencies and customer.',
      scope: ['subscriptions', 'read'],
      query: expandQuery,
      response: { status: 200, schema: v1SubscriptionSchema },
      async handle({ tenant, params, query }) {
        const x = parseExpand(query.expand, 'subscription');
        return ok(v1Subscription(await subscriptions.get(tenant, params.subscriptionUuid), x));
      },
    }),
    route({
      method: 'put',
      path: '/subscriptions/:subscriptionUuid/change-plan',
      operationId: 'changeSubscriptionPlan',
      summary: "Change a subscription's plan",
      description:
        'Moves the subscription to another plan of its product, prorated as asked (default: `create_prorations`). A subscription no payment provider bills (bought through the free checkout) moves only to another free plan: a paid plan is a 400 naming `planUuid` (check that plan out instead).',
      scope: ['subscriptions', 'write'],
      body: changePlanBody,
      response: { status: 204 },
      async handle({ tenant, params, body }) {
        await subscriptions.changePlan(tenant, params.subscriptionUuid, body.planUuid, body.proration ?? 'create_prorations');
        return noContent;
      },
    }),
    subscriptionInvoicesRoute(subscriptions),
    route({
      method: 'get',
      path: '/subscriptions/:subscriptionUuid/updateplan/listplans',
      operationId: 'listSwitchablePlans',
      summary: 'Plans a subscriber can switch to',
      description:
        'The active public plans of the same product, interval and interval length that `change-plan` would accept for the subscription: not a plan it holds, seats that fit the plan, priced in its currency; only free plans for a subscription no payment provider bills (the free checkout); none once it is canceled.',
      scope: ['subscriptions', 'read'],
      response: { status: 200, schema: arrayOf(v1PlanSchema) },
      async handle({ tenant, params }) {
        const { plans, product, currencies } = await subscriptions.switchablePlans(tenant, params.subscriptionUuid);
        return ok(plans.map((p) => v1Plan(p, { product, currencies }, DISPLAY_PLAN)));
      },
    }),
    cancelSubscriptionRoute(subscriptions, 'licenses'),
    link('updatepaymentlink', 'getUpdatePaymentLink', 'Update-payment link', 'updatePayment'),
    link('customer-portal', 'getCustomerPortalLink', 'Customer portal link', 'portal'),
    link('cancelpaymentlink', 'getCancelSubscriptionLink', 'Cancel-subscription link', 'cancel'),
    paymentMethodRoute(subscriptions),
    reactivateSubscriptionRoute(subscriptions),
    route({
      method: 'put',
      path: '/subscriptions/:subscriptionUuid/updateplan/:planUuid',
      operationId: 'updateSubscriptionPlan',
      summary: 'Move to another plan (deprecated)',
      description: 'The older spelling of `change-plan`, always prorated; kept for existing clients.',
      scope: ['subscriptions', 'write'],
      response: { status: 204 },
      async handle({ tenant, params }) {
        await subscriptions.changePlan(tenant, params.subscriptionUuid, params.planUuid, 'create_prorations');
        return noContent;
      },
    }),
    route({
      method: 'put',
      path: '/subscriptions',
      operationId: 'updateSubscriptionPlanByBody',
      summary: 'Move to another plan (deprecated; the body spelling)',
      description:
        "The same move as `PUT /subscriptions/{uuid}/updateplan/{planUuid}`, with the ids in the body (`{newPlanId, subscriptionId}`): what `@salable/node-sdk` 3.x's `subscriptions.updatePlan` sends. Always prorated; kept for existing clients.",
      scope: ['subscriptions', 'write'],
      body: movePlanBody,
      response: { status: 204 },
      async handle({ tenant, body }) {
        await subscriptions.changePlan(tenant, body.subscriptionId, body.newPlanId, 'create_prorations');
        return noContent;
      },
    }),
    seatChange('post', 'seats.increment'),
    seatChange('put', 'seats.decrement'),
  ]);
}
