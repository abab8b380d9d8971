import { arrayOf, ok, resource, route, type Route } from '@tollgate/http';
import { linkRequest, parseExpand } from '../params';
import { planCapabilitySchema, planCurrencySchema, v1PlanFeatureSchema, v1PlanSchema } from '../schemas';
import { Expand, v1Plan, v1PlanCapabilities, v1PlanCurrencies } from '../views';
import { planQuery } from './products';
import type { V1Services } from './support';

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
    route({
      method: 'get',
      path: '/plans/:planUuid/features',
      operationId: 'getPlanFeatures',
      summary: 'Get plan features',
      description: 'The value the plan gives each feature, with the feature and the chosen enum option.',
      scope: ['plans', 'read'],
      response: { status: 200, schema: arrayOf(v1PlanFeatureSchema) },
      async handle({ tenant, params }) {
        const { plan, catalog } = await queries.getPlan(tenant, params.planUuid);
        return ok(v1Plan(plan, catalog, Expand.all('features.feature', 'features.enumValue')).features);
      },
    }),
    route({
      method: 'get',
      path: '/plans/:planUuid/currencies',
      operationId: 'getPlanCurrencies',
      summary: 'Get plan currencies',
      description: "The plan's price in each currency it is sold in.",
      scope: ['plans', 'read'],
      response: { status: 200, schema: arrayOf(planCurrencySchema) },
      async handle({ tenant, params }) {
        const { plan, catalog } = await queries.getPlan(tenant, params.planUuid);
        return ok(v1PlanCurrencies(plan, catalog.currencies, Expand.all('currency')));
      },
    }),
    route({
      method: 'get',
      path: '/plans/:planUuid/capabilities',
      operationId: 'getPlanCapabilities',
      summary: 'Get plan capabilities',
      description: 'The capabilities a license on this plan gives.',
      scope: ['plans', 'read'],
      response: { status: 200, schema: arrayOf(planCapabilitySchema) },
      async handle({ tenant, params }) {
        const { plan, catalog } = await queries.getPlan(tenant, params.planUuid);
        return ok(v1PlanCapabilities(plan, catalog.product, Expand.all('capability')));
      },
    }),
  ]);
}
