import { arrayOf, ok, parseExpandList, querySchema, resource, route, type RouteDef } from '@tollgate/http';
import { checkoutLinkQuery, checkoutLinkSchema, Expand, linkRequest, planPartRoute } from '@tollgate/app-v1';
import {
  extendOptional,
  fullPlanSchema,
  planCapabilityFullSchema,
  planCurrencyFullSchema,
  planFeatureSchema,
  planSchema,
  productSchema,
} from '../schemas';
import { planCapabilityViews, planCurrencyViews, planFeatureViews, planView, productView } from '../views';
import { paged, pageOfList, pageProps, pageSchema, type RouteModule } from './support';

const tag = { name: 'plans', description: 'Plans: what they give (features, capabilities) and what they cost (currencies)' };
const str = { type: 'string' } as const;
const V3_PLAN_EXPAND = ['features', 'product', 'currencies'] as const;

export const planRoutes: RouteModule = ({ core: { queries, checkout } }, version) => {
  const v3 = version === 'v3';
  const v2Only: RouteDef[] = v3
    ? []
    : [
        planPartRoute(queries, 'features', planFeatureSchema('v2'), (plan, catalog) => planFeatureViews('v2', plan, catalog.product)),
        planPartRoute(queries, 'capabilities', planCapabilityFullSchema, (plan, catalog) => planCapabilityViews(plan, catalog.product)),
        planPartRoute(queries, 'currencies', planCurrencyFullSchema, (plan, catalog) => planCurrencyViews(plan, catalog)),
      ];
  const v3Only: RouteDef[] = v3
    ? [
        route({
          method: 'get',
          path: '/plans',
          operationId: 'getPlans',
          summary: 'Get plans (a page)',
          description:
            "A page of the organisation's plans (of one product with `productUuid`), oldest first; `archived=true` lists archived ones.",
          scope: ['plans', 'read'],
          query: querySchema({ ...pageProps, productUuid: { type: 'string', format: 'uuid' }, archived: { enum: ['true', 'false'] } }),
          response: { status: 200, schema: pageSchema(planSchema('v3')) },
          async handle({ tenant, query }) {
            const products = query.productUuid ? [await queries.getProduct(tenant, query.productUuid)] : await queries.listProducts(tenant);
            const plans = [];
            for (const p of products) {
              const catalog = await queries.productCatalog(tenant, p.id);
              for (const plan of catalog.plans)
                if ((query.archived === 'true') === (plan.archivedAt !== null)) plans.push({ plan, view: planView('v3', plan, catalog) });
            }
            plans.sort((a, b) => a.plan.createdAt.getTime() - b.plan.createdAt.getTime() || (a.plan.id < b.plan.id ? -1 : 1));
            return ok(paged(pageOfList(plans, (p) => p.plan.id, query).map((p) => p.view)));
          },
        }),
      ]
    : [];
  return resource(tag, [
    ...v3Only,
    route({
      method: 'get',
      path: '/plans/:planUuid',
      operationId: 'getPlan',
      summary: 'Get a plan',
      description: v3 ? 'One plan; `expand` brings its features, product and currencies.' : 'One plan with its features and currencies.',
      scope: ['plans', 'read'],
      query: querySchema({ expand: str }),
      response: {
        status: 200,
        schema: v3
          ? extendOptional(planSchema('v3'), {
              features: arrayOf(planFeatureSchema('v3')),
              currencies: arrayOf(planCurrencyFullSchema),
              product: productSchema('v3'),
            })
          : fullPlanSchema('v2'),
      },
      async handle({ tenant, params, query }) {
        const { plan, catalog } = await queries.getPlan(tenant, params.planUuid);
        if (!v3)
          return ok({
            ...planView('v2', plan, catalog),
            features: planFeatureViews('v2', plan, catalog.product),
            currencies: planCurrencyViews(plan, catalog),
          });
        const x = new Set(parseExpandList(query.expand, V3_PLAN_EXPAND));
        return ok({
          ...planView('v3', plan, catalog),
          ...(x.has('features') ? { features: planFeatureViews('v3', plan, catalog.product) } : {}),
          ...(x.has('currencies') ? { currencies: planCurrencyViews(plan, catalog) } : {}),
          ...(x.has('product') ? { product: productView('v3', catalog, new Expand([])) } : {}),
        });
      },
    }),
    route({
      method: 'get',
      path: v3 ? '/plans/:planUuid/checkout-link' : '/plans/:planUuid/checkoutlink',
      operationId: 'getCheckoutLink',
      summary: 'Get a checkout link',
      description: "A checkout session for the plan at the payment provider: send the customer's browser to `checkoutUrl`.",
      scope: ['plans', 'read'],
      query: v3 ? { ...checkoutLinkQuery, required: [...checkoutLinkQuery.required, 'owner'] } : checkoutLinkQuery,
      response: { status: 200, schema: checkoutLinkSchema },
      handle: async ({ tenant, params, query }) =>
        ok({
          checkoutUrl: (await checkout.checkoutLink(tenant, params.planUuid, linkRequest(query as Record<string, string | undefined>))).url,
        }),
    }),
    ...v2Only,
  ]);
};
