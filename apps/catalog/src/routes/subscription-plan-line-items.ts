import { invalid, type Core, type Proration } from '@tollgate/core';
import { noContent, resource, route, typed, type Route } from '@tollgate/http';
import { subscriptionLineItemSchema } from '../people-schemas';
import { subscriptionLineItemView } from '../people-views';
import { objectOf } from '../response-schemas';
import { objectEnvelope } from '../views';

/**
 * Subscription-plan line items (published #84-86): the line items of the plan a subscription
 * holds, each with an id of its own. A per-seat line item's quantity is the subscription's seats.
 */

const updateBody = typed<{ quantity: number; proration?: Proration }>({
  type: 'object',
  additionalProperties: false,
  required: ['quantity'],
  properties: { quantity: { type: 'integer', minimum: 0 }, proration: { enum: ['always_invoice', 'create_prorations', 'none'] } },
});

export function subscriptionLineItemRoutes({
  subscriptionDirectory: directory,
  seats,
  subscriptionItems: items,
}: Pick<Core, 'subscriptionDirectory' | 'seats' | 'subscriptionItems'>): Route[] {
  return resource(
    { name: 'subscription-plan-line-items', description: "Subscription-plan line items: the line items of a subscription's plan" },
    [
      route({
        method: 'get',
        path: '/api/subscription-plan-line-items/:id',
        operationId: 'getSubscriptionPlanLineItem',
        summary: 'Retrieve a subscription-plan line item',
        description: 'One line item of a subscription, with its subscription plan (and subscription) and the line item with its prices.',
        scope: ['subscriptions', 'read'],
        response: { status: 200, schema: objectOf(subscriptionLineItemSchema) },
        handle: async ({ tenant, params }) => {
          const { item, record, part, lineItem } = await directory.lineItem(tenant, params.id);
          return { status: 200, body: objectEnvelope(subscriptionLineItemView(item, record, part, lineItem)) };
        },
      }),
      route({
        method: 'put',
        path: '/api/subscription-plan-line-items/:id',
        operationId: 'updateSubscriptionPlanLineItem',
        summary: "Set a line item's quantity",
        description:
          "A per-seat line item's quantity is the subscription's seats: more are added unassigned, fewer remove unassigned ones (as the v1 seat changes, applied by the event worker). Other line items have a quantity of 1 (another: 400).",
        scope: ['subscriptions', 'write'],
        body: updateBody,
        response: { status: 204 },
        async handle({ tenant, params, body }) {
          const { record, part, lineItem } = await directory.lineItem(tenant, params.id);
          if (lineItem?.priceType !== 'per_seat') {
            if (body.quantity !== 1) invalid('quantity', 'only a per-seat line item has a quantity other than 1');
            return noContent;
          }
          // An added plan's seats are set now; the first plan's as the v1 seat change.
          if (part.id !== record.subscription.id) {
            await items.setAddedSeats(tenant, record.subscription.id, part.planId, body.quantity, body.proration ?? 'create_prorations');
            return noContent;
          }
          // The number asked for, applied as the difference when the worker applies it (a repeat is no second change).
          await seats.requestQuantity(tenant, record.subscription.id, body.quantity, body.proration ?? 'create_prorations');
          return noContent;
        },
      }),
      route({
        method: 'put',
        path: '/api/subscription-plan-line-items/:id/sync',
        operationId: 'syncSubscriptionPlanLineItemPrice',
        summary: "Sync a line item's price",
        description:
          "Brings the subscription's line item to its line item's current price: Stripe's subscription item moves to it (no proration; the next invoice bills it). The sandbox and subscriptions without payment bill each period at the plan's current price already, so nothing moves there.",
        scope: ['subscriptions', 'write'],
        response: { status: 204 },
        async handle({ tenant, params }) {
          const { record, part } = await directory.lineItem(tenant, params.id);
          await items.syncLineItemPrice(tenant, record.subscription.id, part.planId);
          return noContent;
        },
      }),
    ],
  );
}
