import { INTERVALS, type Core, type Interval, type Plan, type PlanInput, type Product } from '@tollgate/core';
import { arrayOf, bool, date, int, ndate, noContent, querySchema, resource, route, str, typed, uuid, type Route } from '@tollgate/http';
import {
  currencyOptionSchema,
  entitlementSchema,
  lineItemSchema,
  priceSchema,
  tierSchema,
  listOf,
  nestedListOf,
  object,
  objectOf,
  planProps,
  planSchema,
  productSchema,
  tierTagSchema,
} from '../response-schemas';
import { boolText, currencyCode, expandQuery, listProps, planBodyProps, planSaveBody } from '../schemas';
import {
  catalogPlan,
  filterOptionsView,
  lineItemView,
  listEnvelope,
  objectEnvelope,
  planDetailView,
  planView,
  tierTagView,
} from '../views';
import { expandOf, listQuery } from './products';

export const planListQuery = {
  ...querySchema({
    ...listProps,
    productId: { type: 'string', format: 'uuid' },
    currency: currencyCode,
    // `one_off` (published): plans with a price paid once.
    interval: { enum: [...INTERVALS, 'one_off'] },
    intervalCount: { type: 'string', pattern: '^[1-9][0-9]{0,2}$' },
    isActive: boolText,
    // filterOptions are in every plan list (the contract requires them); the flag real clients send is accepted.
    includeFilterOptions: boolText,
  }),
  additionalProperties: false,
};
export const planBody = typed<PlanInput>({
  type: 'object',
  properties: planBodyProps,
  required: ['name'],
  additionalProperties: false,
});
export const planUpdateBody = typed<Partial<PlanInput>>({
  type: 'object',
  properties: planBodyProps,
  additionalProperties: false,
  minProperties: 1,
});

const PLAN_LIST_EXPAND = ['entitlements', 'lineItems', 'product', 'tierTag'] as const;
const nstr = { type: ['string', 'null'] } as const;

const planExpansions = {
  tierTag: { anyOf: [tierTagSchema, { type: 'null' }] },
  entitlements: nestedListOf(entitlementSchema),
  lineItems: nestedListOf(lineItemSchema),
};
const planListItemSchema = object(planProps, { ...planExpansions, product: productSchema });

const customerSchema = object({
  id: uuid,
  organisation: uuid,
  value: str,
  paymentCustomerId: nstr,
  emailAddress: nstr,
  createdAt: date,
  updatedAt: date,
});
const subscriptionPlanSchema = object({
  id: uuid,
  organisation: uuid,
  ownerId: uuid,
  groupId: uuid,
  subscriptionId: uuid,
  planId: uuid,
  seats: int,
  status: { enum: ['active', 'inactive'] },
  createdAt: date,
  updatedAt: date,
  subscription: object({
    id: uuid,
    organisation: uuid,
    ownerId: uuid,
    paymentSubscriptionId: nstr,
    status: str,
    customerId: nstr,
    interval: { type: 'null' },
    intervalCount: { type: 'null' },
    currencyShortCode: nstr,
    cancelAtPeriodEnd: bool,
    isPerpetual: bool,
    isServiceOnly: bool,
    startDate: date,
    cancelledAt: ndate,
    createdAt: date,
    updatedAt: date,
    owner: { anyOf: [customerSchema, { type: 'null' }] },
  }),
});
/** A plan's detail: its product in short, and the subscriptions on it when expanded. */
const planDetailSchema = object(planProps, {
  ...planExpansions,
  product: object({ id: uuid, name: str, archivedAt: ndate }),
  subscriptionPlans: nestedListOf(subscriptionPlanSchema),
});
const filterOptionsSchema = object({
  currencies: arrayOf(str),
  intervals: arrayOf(object({ interval: nstr, intervalCount: { type: ['integer', 'null'] } })),
});

/**
 * What `POST /api/plans/save` answers, as published (SavePlanResponseSchema): the plan with its
 * entitlement links, tier tag and whole pricing tree, in plain arrays rather than nested lists.
 */
const savedLineItemSchema = {
  ...lineItemSchema,
  properties: {
    ...lineItemSchema.properties,
    prices: arrayOf({
      ...priceSchema,
      properties: {
        ...priceSchema.properties,
        currencyOptions: arrayOf({
          ...currencyOptionSchema,
          properties: { ...currencyOptionSchema.properties, tiers: arrayOf(tierSchema) },
        }),
      },
    }),
  },
};
export const savedPlanSchema = object(
  {
    ...planProps,
    entitlements: arrayOf(object({ entitlementId: uuid, planId: uuid, createdAt: date, updatedAt: date })),
    lineItems: arrayOf(savedLineItemSchema),
  },
  { tierTag: { anyOf: [tierTagSchema, { type: 'null' }] } },
);

const savedPlanView = (p: Plan) => ({
  ...catalogPlan(p),
  tierTag: tierTagView(p.tierTag),
  entitlements: p.capabilityIds.map((entitlementId) => ({
    entitlementId,
    planId: p.id,
    createdAt: p.updatedAt.toISOString(),
    updatedAt: p.updatedAt.toISOString(),
  })),
  lineItems: p.lineItems.map((li) => {
    const view = lineItemView(p.organisationId, p.id)(li);
    return {
      ...view,
      prices: view.prices.data.map((price) => ({
        ...price,
        currencyOptions: price.currencyOptions.data.map((o) => ({ ...o, tiers: o.tiers.data })),
      })),
    };
  }),
});

export function planRoutes({ products: productAdmin, plans: planAdmin }: Pick<Core, 'products' | 'plans'>): Route[] {
  return resource(
    { name: 'plans', description: 'Plans of the products, with their entitlements and pricing (line items, prices, tiers)' },
    [
      route({
        method: 'get',
        path: '/api/plans',
        operationId: 'listPlans',
        summary: 'List plans',
        description:
          'A page of plans, by product, currency, interval and active flag, with the filter values there are; `expand` brings product, tier tag, entitlements and line items.',
        scope: ['plans', 'read'],
        query: planListQuery,
        response: { status: 200, schema: listOf(planListItemSchema, { filterOptions: filterOptionsSchema }) },
        async handle({ tenant, query: q }) {
          const expand = expandOf(q.expand, PLAN_LIST_EXPAND);
          const { page, filterOptions } = await planAdmin.listPlans(tenant, {
            ...listQuery(q),
            productId: q.productId,
            currency: q.currency,
            interval: q.interval as Interval | 'one_off' | undefined,
            intervalCount: q.intervalCount ? Number(q.intervalCount) : undefined,
            isActive: q.isActive === undefined ? undefined : q.isActive === 'true',
          });
          const products =
            expand.has('product') || expand.has('entitlements')
              ? await productAdmin.productsById(
                  tenant,
                  page.items.map((p) => p.productId),
                )
              : new Map<string, Product>();
          return {
            status: 200,
            body: {
              ...listEnvelope(page, (p) => planView(p, products.get(p.productId), expand)),
              filterOptions: filterOptionsView(filterOptions),
            },
          };
        },
      }),
      route({
        method: 'post',
        path: '/api/plans',
        operationId: 'createPlan',
        summary: 'Create a plan',
        description: 'A new plan of a product (its pricing is saved with `POST /api/plans/save`).',
        scope: ['plans', 'write'],
        body: planBody,
        response: { status: 201, schema: objectOf(planSchema) },
        handle: async ({ tenant, body }) => ({ status: 201, body: objectEnvelope(catalogPlan(await planAdmin.createPlan(tenant, body))) }),
      }),
      route({
        method: 'post',
        path: '/api/plans/save',
        operationId: 'savePlan',
        summary: 'Save a plan with entitlements and nested pricing',
        description:
          'Creates (201) or updates (200, with `id`) a plan with its entitlements, line items, prices and tiers in one transaction.',
        scope: ['plans', 'write'],
        body: planSaveBody,
        response: { status: 201, schema: objectOf(savedPlanSchema), description: 'created' },
        otherResponses: [{ status: 200, schema: objectOf(savedPlanSchema), description: 'updated' }],
        async handle({ tenant, body }) {
          const saved = await planAdmin.savePlan(tenant, body);
          return { status: saved.created ? 201 : 200, body: objectEnvelope(savedPlanView(saved.plan)) };
        },
      }),
      route({
        method: 'get',
        path: '/api/plans/:id',
        operationId: 'getPlan',
        summary: 'Plan detail',
        description: 'One plan; `expand` brings its product, tier tag, entitlements, line items and subscription plans.',
        scope: ['plans', 'read'],
        query: expandQuery,
        response: { status: 200, schema: objectOf(planDetailSchema) },
        async handle({ tenant, params, query }) {
          const expand = expandOf(query.expand, [...PLAN_LIST_EXPAND, 'subscriptionPlans']);
          return { status: 200, body: objectEnvelope(planDetailView(await planAdmin.getPlan(tenant, params.id), expand)) };
        },
      }),
      route({
        method: 'put',
        path: '/api/plans/:id',
        operationId: 'updatePlan',
        summary: 'Update a plan',
        description: 'Changes what is given: name, trial days, tier tag, active flag.',
        scope: ['plans', 'write'],
        body: planUpdateBody,
        response: { status: 200, schema: objectOf(planSchema) },
        handle: async ({ tenant, params, body }) => ({
          status: 200,
          body: objectEnvelope(catalogPlan(await planAdmin.updatePlan(tenant, params.id, body))),
        }),
      }),
      route({
        method: 'delete',
        path: '/api/plans/:id',
        operationId: 'deletePlan',
        summary: 'Delete a plan',
        description: 'Removes a plan that never had a subscription (409 otherwise: archive it instead).',
        scope: ['plans', 'write'],
        response: { status: 204 },
        async handle({ tenant, params }) {
          await planAdmin.deletePlan(tenant, params.id);
          return noContent;
        },
      }),
      route({
        method: 'post',
        path: '/api/plans/:id/archive',
        operationId: 'archivePlan',
        summary: 'Archive a plan',
        description: 'Stops selling the plan; its subscriptions go on.',
        scope: ['plans', 'write'],
        response: { status: 204 },
        async handle({ tenant, params }) {
          await planAdmin.archivePlan(tenant, params.id);
          return noContent;
        },
      }),
    ],
  );
}
