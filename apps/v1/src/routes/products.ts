import type { Plan, ProductCatalog } from '@tollgate/core';
import {
  arrayOf,
  capabilitySchema,
  capabilityView,
  mapBatches,
  ok,
  querySchema,
  resource,
  route,
  type Route,
  type RouteDef,
} from '@tollgate/http';
import { linkRequest, parseExpand } from '../params';
import { v1FeatureSchema, v1PlanSchema, v1ProductSchema, productCurrencySchema } from '../schemas';
import { Expand, v1Feature, v1Plan, v1Product, v1ProductCurrencies } from '../views';
import { checkoutOptionProps, deferredLinksOf, type V1Services } from './support';

const str = { type: 'string' } as const;

/** `expand`, and the checkout options of the links `expand=generateCheckoutLinks` makes. */
export const planQuery = querySchema({
  ...checkoutOptionProps,
  expand: str,
  successUrl: str,
  cancelUrl: str,
  granteeId: str,
  member: str,
  owner: str,
});

export const productTag = { name: 'products', description: "The products of the key's organisation and mode" };

/** The capabilities plans of the product can give (v1, v2); `checks` names the check that answers them. */
export const productCapabilitiesRoute = (queries: V1Services['core']['queries'], checks: 'capability' | 'license'): RouteDef =>
  route({
    method: 'get',
    path: '/products/:productUuid/capabilities',
    operationId: 'getProductCapabilities',
    summary: 'Get product capabilities',
    description: `The capabilities plans of the product can give (what a ${checks} check answers).`,
    scope: ['products', 'read'],
    response: { status: 200, schema: arrayOf(capabilitySchema) },
    handle: async ({ tenant, params }) => ok((await queries.productCapabilities(tenant, params.productUuid)).map(capabilityView)),
  });

/** Every plan of the product (v1, v2), each an `item` as `planOf` shows it. */
export const productPlansRoute = (
  queries: V1Services['core']['queries'],
  item: object,
  planOf: (plan: Plan, catalog: ProductCatalog) => unknown,
): RouteDef =>
  route({
    method: 'get',
    path: '/products/:productUuid/plans',
    operationId: 'getProductPlans',
    summary: 'Get all plans of a product',
    description: 'Every plan of the product, archived ones included.',
    scope: ['plans', 'read'],
    response: { status: 200, schema: arrayOf(item) },
    async handle({ tenant, params }) {
      const catalog = await queries.productCatalog(tenant, params.productUuid);
      return ok(catalog.plans.map((p) => planOf(p, catalog)));
    },
  });

export function productRoutes(s: V1Services): Route[] {
  const { queries } = s.core;
  const deferredLinks = deferredLinksOf(s);
  return resource(productTag, [
    route({
      method: 'get',
      path: '/products',
      operationId: 'getProducts',
      summary: 'Get products',
      description: "Every product of the key's organisation and mode, streamed.",
      scope: ['products', 'read'],
      response: { status: 200, schema: arrayOf(v1ProductSchema) },
      list: true,
      handle: ({ tenant }) => ({
        status: 200,
        stream: mapBatches(queries.productPages(tenant), (p) => v1Product({ product: p }, new Expand([]))),
      }),
    }),
    route({
      method: 'get',
      path: '/products/:productUuid',
      operationId: 'getProduct',
      summary: 'Get a product',
      description:
        'One product; `expand` brings its plans, features, capabilities and currencies, and `generateCheckoutLinks` a checkout link per active plan.',
      scope: ['products', 'read'],
      query: planQuery,
      response: { status: 200, schema: v1ProductSchema },
      async handle({ tenant, params, query }) {
        const x = parseExpand(query.expand, 'product');
        const catalog = await queries.productCatalog(tenant, params.productUuid);
        const urls = x.has('generateCheckoutLinks')
          ? await deferredLinks(
              tenant,
              catalog.plans.filter((p) => p.active && !p.archivedAt),
              catalog,
              linkRequest(query),
            )
          : undefined;
        // Generated links live on the plans, so asking for them brings the plans along.
        return ok(v1Product(catalog, urls ? x.with('plans') : x, urls));
      },
    }),
    productPlansRoute(queries, v1PlanSchema, (p, catalog) => v1Plan(p, catalog, new Expand([]))),
    route({
      method: 'get',
      path: '/products/:productUuid/features',
      operationId: 'getProductFeatures',
      summary: 'Get product features',
      description: 'The features of the product, in their sort order.',
      scope: ['products', 'read'],
      response: { status: 200, schema: arrayOf(v1FeatureSchema) },
      handle: async ({ tenant, params }) => ok((await queries.productFeatures(tenant, params.productUuid)).map(v1Feature)),
    }),
    route({
      method: 'get',
      path: '/products/:productUuid/currencies',
      operationId: 'getProductCurrencies',
      summary: 'Get product currencies',
      description: 'The currencies the product is sold in, with the default one marked.',
      scope: ['products', 'read'],
      response: { status: 200, schema: arrayOf(productCurrencySchema) },
      handle: async ({ tenant, params }) =>
        ok(v1ProductCurrencies(await queries.productCatalog(tenant, params.productUuid), Expand.all('currency'))),
    }),
    productCapabilitiesRoute(queries, 'capability'),
  ]);
}
