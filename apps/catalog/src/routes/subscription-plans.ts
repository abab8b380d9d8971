import type { Core } from '@tollgate/core';
import { noContent, querySchema, resource, route, str, typed, uuid, type Route } from '@tollgate/http';
import { subscriptionPlanItemSchema } from '../people-schemas';
import { subscriptionPlanRecordView, subscriptionStatusesOfPlanStatus } from '../people-views';
import { listOf, objectOf } from '../response-schemas';
import { pageProps, quantity } from '../schemas';
import { listEnvelope, objectEnvelope, pageQueryOf } from '../views';
import { expandOf } from './products';
import { idsOf } from './subscriptions';

/**
 * Subscription plans (published operations #87-89): every plan a subscription holds. Its first
 * plan's subscription plan has the subscription's id and its seats are the subscription's; an
 * added plan's has its own id and seats (docs/decisions.md, "Subscriptions of several plans").
 */

const EXPAND = ['plan', 'subscription', 'owner', 'subscriptionPlanLineItems'] as const;
const csvOfIds = { type: 'string', pattern: '^[0-9a-fA-F-]{36}(,[0-9a-fA-F-]{36}){0,99}$' };
const listQuery = {
  ...querySchema({
    ...pageProps,
    owner: { type: 'string', minLength: 1, maxLength: 255 },
    status: { enum: ['active', 'inactive'] },
    plans: csvOfIds,
    subscriptionId: uuid,
    expand: str,
  }),
  additionalProperties: false,
};
const seatsBody = typed<{ quantity?: number }>({
  type: 'object',
  properties: { quantity: quantity(1) },
});

export function subscriptionPlanRoutes({
  subscriptionDirectory: directory,
  seats,
  subscriptionItems: items,
}: Pick<Core, 'subscriptionDirectory' | 'seats' | 'subscriptionItems'>): Route[] {
  return resource({ name: 'subscription-plans', description: 'Subscription plans: the plan a subscription holds, and its seats' }, [
    route({
      method: 'get',
      path: '/api/subscription-plans',
      operationId: 'listSubscriptionPlans',
      summary: 'List subscription plans',
      description:
        'A page of subscription plans in creation order, by owner (its value), status (`active`: running and granting; `inactive`: canceled, unpaid or paused), plans and subscription; `expand=plan,subscription,owner,subscriptionPlanLineItems`.',
      scope: ['subscriptions', 'read'],
      query: listQuery,
      list: true,
      response: { status: 200, schema: listOf(subscriptionPlanItemSchema) },
      handle: async ({ tenant, query }) => {
        const page = await directory.list(tenant, {
          ...pageQueryOf(query),
          owner: query.owner,
          id: query.subscriptionId,
          planIds: idsOf(query.plans),
          statuses: query.status === undefined ? undefined : subscriptionStatusesOfPlanStatus(query.status),
        });
        const expand = expandOf(query.expand, EXPAND);
        const lineItems = expand.has('subscriptionPlanLineItems') ? await directory.lineItemsOf(tenant, page.items) : undefined;
        // Each subscription's plans in order (the plans filter keeps the plans asked for).
        const wanted = idsOf(query.plans);
        const items = page.items.flatMap((record) =>
          record.plans.filter((part) => !wanted || wanted.includes(part.planId)).map((part) => ({ record, part })),
        );
        return { status: 200, body: listEnvelope({ ...page, items }, subscriptionPlanRecordView(expand, lineItems)) };
      },
    }),
    route({
      method: 'get',
      path: '/api/subscription-plans/:id',
      operationId: 'retrieveSubscriptionPlan',
      summary: 'Retrieve a subscription plan',
      description: 'One subscription plan; `expand=plan,subscription,owner`.',
      scope: ['subscriptions', 'read'],
      query: { ...querySchema({ expand: str }), additionalProperties: false },
      response: { status: 200, schema: objectOf(subscriptionPlanItemSchema) },
      handle: async ({ tenant, params, query }) => {
        const expand = expandOf(query.expand, EXPAND);
        const found = await directory.getPlan(tenant, params.id);
        const lineItems = expand.has('subscriptionPlanLineItems') ? await directory.lineItemsOf(tenant, [found.record]) : undefined;
        return { status: 200, body: objectEnvelope(subscriptionPlanRecordView(expand, lineItems)(found)) };
      },
    }),
    route({
      method: 'put',
      path: '/api/subscription-plans/:id/seats',
      operationId: 'updateSubscriptionPlanSeats',
      summary: 'Set the number of seats',
      description:
        "Sets the seats of a per-seat subscription plan to `quantity`: more seats are added unassigned, fewer remove unassigned ones (within the plan's minimum and the unassigned count, else 400). Applied by the event worker, as the v1 seat changes.",
      scope: ['subscriptions', 'write'],
      body: seatsBody,
      response: { status: 204 },
      async handle({ tenant, params, body }) {
        // The subscription plan is found first: without `quantity` nothing changes, but an unknown
        // id is still 404 and another organisation's 403.
        const { record, part } = await directory.getPlan(tenant, params.id);
        if (body.quantity === undefined) return noContent;
        const subscription = record.subscription;
        if (part.id !== subscription.id) {
          await items.setAddedSeats(tenant, subscription.id, part.planId, body.quantity, 'create_prorations');
          return noContent;
        }
        // The number asked for, applied as the difference when the worker applies it (a repeat is no second change).
        await seats.requestQuantity(tenant, subscription.id, body.quantity, 'create_prorations');
        return noContent;
      },
    }),
  ]);
}
