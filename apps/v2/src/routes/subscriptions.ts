import { type Proration, type SubscriptionStatus } from '@tollgate/core';
import { bodySchema, noContent, ok, querySchema, resource, route, typed, type RouteDef } from '@tollgate/http';
import { cancelSubscriptionRoute, changePlanBody, reactivateSubscriptionRoute } from '@tollgate/app-v1';
import { Expand, parseExpandV } from './expand';
import { pageSchema, paged, pageProps, takeOf, type RouteModule } from './support';
import { subscriptionListItemSchema, subscriptionSchema } from '../schemas';
import { planView, subscriptionV2, subscriptionWithPlan } from '../views';

const tag = { name: 'subscriptions', description: 'Subscriptions: create, list, owner, plan changes, cancellation' };
const str = { type: 'string' } as const;
/** Tollgate's subscription statuses; the SDK may also ask for the real service's others (none here). */
const STATUSES = ['ACTIVE', 'TRIALING', 'PAST_DUE', 'UNPAID', 'PAUSED', 'CANCELED'] as const;
const SDK_ONLY_STATUSES = ['DELETED', 'INCOMPLETE'] as const;

type CreateBody = {
  planUuid: string;
  granteeId: string;
  owner: string;
  expiryDate?: string;
  cancelAtPeriodEnd?: boolean;
  quantity?: number;
  status?: 'ACTIVE' | 'TRIALING';
};
export const createSubscriptionBody = typed<CreateBody>({
  type: 'object',
  properties: {
    planUuid: { type: 'string', format: 'uuid' },
    granteeId: { type: 'string', minLength: 1, maxLength: 320 },
    owner: { type: 'string', minLength: 1, maxLength: 320 },
    expiryDate: { type: 'string', format: 'date-time' },
    cancelAtPeriodEnd: { type: 'boolean' },
    quantity: { type: 'integer', minimum: 1, maximum: 10000 },
    status: { enum: ['ACTIVE', 'TRIALING'] },
  },
  required: ['planUuid', 'granteeId', 'owner'],
  additionalProperties: false,
});
export const updateSubscriptionBody = bodySchema({
  type: 'object',
  properties: { owner: { type: 'string', minLength: 1, maxLength: 320 } },
  additionalProperties: false,
});
export const listQuery = querySchema({
  ...pageProps,
  status: { enum: [...STATUSES, ...SDK_ONLY_STATUSES] },
  email: str,
  owner: str,
  expand: str,
  productUuid: { type: 'string', format: 'uuid' },
  planUuid: { type: 'string', format: 'uuid' },
});

/**
 * The subscription itself (v2 and v3 alike but for v3's `change-plan` answer): create without
 * payment, list, read, change owner, change plan, cancel, reactivate. The SDK repeats the body of
 * create, update and change-plan in the query string: the body is what counts, the query is ignored.
 */
export const subscriptionRoutes: RouteModule = ({ core: { subscriptions, subscriptionAdmin, queries } }, version) => {
  const view = async (tenant: Parameters<typeof subscriptions.get>[0], id: string, x = new Expand([])) =>
    subscriptionWithPlan(version, await subscriptions.get(tenant, id), x);
  const routes: RouteDef[] = [
    route({
      method: 'post',
      path: '/subscriptions',
      operationId: 'createSubscription',
      summary: 'Create a subscription without payment',
      description:
        'A subscription (payment provider `none`) of the plan for `owner` (the paying customer), its first seat to `granteeId`, `quantity` seats of a per-seat plan; `expiryDate` sets the end of its period.',
      scope: ['subscriptions', 'write'],
      body: createSubscriptionBody,
      response: { status: 200, schema: subscriptionSchema(version) },
      async handle({ tenant, body }) {
        // Its view comes from the write's own transaction: nothing is read after the commit.
        const created = await subscriptionAdmin.create(tenant, {
          planId: body.planUuid,
          granteeId: body.granteeId,
          owner: body.owner,
          expiryDate: body.expiryDate === undefined ? undefined : new Date(body.expiryDate),
          cancelAtPeriodEnd: body.cancelAtPeriodEnd,
          quantity: body.quantity,
          status: body.status,
        });
        return ok(subscriptionWithPlan(version, created, new Expand([])));
      },
    }),
    route({
      method: 'get',
      path: '/subscriptions',
      operationId: 'getSubscriptions',
      summary: 'Get subscriptions (a page)',
      description:
        'A page of the subscriptions, oldest first (`sort=desc`: newest), by `status`, `owner`, `email`, `productUuid` or `planUuid`; `cursor` is the last subscription of the page before; `expand=plan` brings each one’s plan.',
      scope: ['subscriptions', 'read'],
      query: listQuery,
      response: { status: 200, schema: pageSchema(subscriptionListItemSchema(version)) },
      async handle({ tenant, query }) {
        const withPlan = parseExpandV(query.expand, ['plan']).has('plan');
        if ((SDK_ONLY_STATUSES as readonly string[]).includes(query.status ?? '')) return ok(paged([]));
        const { subscriptions: page, owners } = await subscriptionAdmin.page(tenant, {
          status: query.status as SubscriptionStatus | undefined,
          owner: query.owner,
          email: query.email,
          productId: query.productUuid,
          planId: query.planUuid,
          cursor: query.cursor,
          take: takeOf(query),
          sort: query.sort ?? 'asc',
        });
        const plans = new Map<string, unknown>();
        if (withPlan)
          for (const id of new Set(page.map((s) => s.planId))) {
            const { plan, catalog } = await queries.getPlan(tenant, id);
            plans.set(id, planView(version, plan, catalog));
          }
        return ok(
          paged(
            page.map((s) => ({
              ...subscriptionV2(s, owners.get(s.customerId) ?? null),
              ...(withPlan ? { plan: plans.get(s.planId) } : {}),
            })),
          ),
        );
      },
    }),
    route({
      method: 'get',
      path: '/subscriptions/:subscriptionUuid',
      operationId: 'getSubscription',
      summary: 'Get a subscription',
      description:
        'One subscription with its owner; `expand=plan` brings its plan with features and currencies, `expand=product` its product.',
      scope: ['subscriptions', 'read'],
      query: querySchema({ expand: str }),
      response: { status: 200, schema: subscriptionSchema(version) },
      handle: async ({ tenant, params, query }) =>
        ok(await view(tenant, params.subscriptionUuid, parseExpandV(query.expand, ['plan', 'product']))),
    }),
    route({
      method: 'put',
      path: '/subscriptions/:subscriptionUuid',
      operationId: 'updateSubscription',
      summary: 'Update a subscription (its owner)',
      description: 'Passes the subscription to another paying customer (`owner`); its seats follow.',
      scope: ['subscriptions', 'write'],
      body: updateSubscriptionBody,
      response: { status: 200, schema: subscriptionSchema(version) },
      async handle({ tenant, params, body }) {
        if (body.owner === undefined) return ok(await view(tenant, params.subscriptionUuid));
        return ok(
          subscriptionWithPlan(version, await subscriptionAdmin.updateOwner(tenant, params.subscriptionUuid, body.owner), new Expand([])),
        );
      },
    }),
    route({
      method: 'put',
      path: '/subscriptions/:subscriptionUuid/change-plan',
      operationId: 'changeSubscriptionPlan',
      summary: "Change a subscription's plan",
      description:
        version === 'v3'
          ? 'Moves the subscription to another plan of its product (prorated as asked) and answers it (a usage-based plan: the new subscription).'
          : 'Moves the subscription to another plan of its product, prorated as asked (default `create_prorations`).',
      scope: ['subscriptions', 'write'],
      body: changePlanBody,
      response: version === 'v3' ? { status: 200, schema: subscriptionSchema('v3') } : { status: 204 },
      async handle({ tenant, params, body }) {
        const change = await subscriptions.changePlan(
          tenant,
          params.subscriptionUuid,
          body.planUuid,
          (body.proration ?? 'create_prorations') as Proration,
        );
        if (version === 'v2') return noContent;
        return ok(subscriptionWithPlan(version, change.view, new Expand([])));
      },
    }),
    cancelSubscriptionRoute(subscriptions, 'seats'),
    reactivateSubscriptionRoute(subscriptions),
  ];
  return resource(tag, routes);
};
