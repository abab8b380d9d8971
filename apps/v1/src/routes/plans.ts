import type { Plan, ProductCatalog } from '@tollgate/core';
import { arrayOf, ok, resource, route, type Route, type RouteDef } from '@tollgate/http';
import { linkRequest, parseExpand } from '../params';
import { planCapabilitySchema, planCurrencySchema, v1PlanFeatureSchema, v1PlanSchema } from '../schemas';
import { Expand, v1Plan, v1PlanCapabilities, v1PlanCurrencies } from '../views';
import { planQuery } from './products';
import type { V1Services } from './support';

/** The parts of a plan with a route of their own (v1, and v2 from here): what it gives, what it costs. */
const PLAN_PARTS = {
  features: {
    operationId: 'getPlanFeatures',
    summary: 'Get plan features',
    description: 'The value the plan gives each feature, with the feature and the chosen enum option.',
  },
  currencies: {
    operationId: 'getPlanCurrencies',
    summary: 'Get plan currencies',
    description: "The plan's price in each currency it is sold in.",
  },
  capabilities: {
    operationId: 'getPlanCapabilities',
    summary: 'Get plan capabilities',
    description: 'The capabilities a license on this plan gives.',
  },
} as const;

/** `GET /plans/:planUuid/<part>`: the part of the plan as `view` shows it, an array of `item`. */
export const planPartRoute = (
  queries: V1Services['core']['queries'],
  part: keyof typeof PLAN_PARTS,
  item: object,
  view: (plan: Plan, catalog: ProductCatalog) => unknown,
): RouteDef =>
  route({
    method: 'get',
    path: `/plans/:planUuid/${part}`,
    ...PLAN_PARTS[part],
    scope: ['plans', 'read'],
    response: { status: 200, schema: arrayOf(item) },
    async handle({ tenant, params }) {
      const { plan, catalog } = await queries.getPlan(tenant, params.planUuid);
      return ok(view(plan, catalog));
    },
  });

export function planRoutes({ core: { queries, checkout } }: V1Services): Route[] {
  return resource({ name: 'plans', description: 'Plans: what they give (features, capabilities) and what they cost (currencies)' }, [
    route({
      method: 'get',
      path: '/plans/:planUuid',
      operationId: 'getPlan',
      summary: 'Get a plan',
      description: 'One plan; `expand` brings its features, capabilities and currencies, and `generateCheckoutLink` a checkout link.',
      scope: ['plans', 'read'],
      query: planQuery,
      response: { status: 200, schema: v1PlanSchema },
      async handle({ tenant, params, query }) {
        const x = parseExpand(query.expand, 'plan');
        const { plan, catalog } = await queries.getPlan(tenant, params.planUuid);
        const url = x.has('generateCheckoutLink') ? (await checkout.linkFor(plan, catalog, linkRequest(query))).url : undefined;
        return ok(v1Plan(plan, catalog, x, url));
      },
    }),
    planPartRoute(
      queries,
      'features',
      v1PlanFeatureSchema,
      (plan, catalog) => v1Plan(plan, catalog, Expand.all('features.feature', 'features.enumValue')).features,
    ),
    planPartRoute(queries, 'currencies', planCurrencySchema, (plan, catalog) =>
      v1PlanCurrencies(plan, catalog.currencies, Expand.all('currency')),
    ),
    planPartRoute(queries, 'capabilities', planCapabilitySchema, (plan, catalog) =>
      v1PlanCapabilities(plan, catalog.product, Expand.all('capability')),
    ),
  ]);
}
