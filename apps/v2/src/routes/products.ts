import { arrayOf, ndate, ok, querySchema, resource, route, type RouteDef } from '@tollgate/http';
import { Expand, parseExpand, productCapabilitiesRoute, productPlansRoute, v1ProductSchema } from '@tollgate/app-v1';
import {
  extend,
  extendOptional,
  featureSchema,
  integrationV3Schema,
  planSchema,
  productCurrencyFullSchema,
  productPricingTableSchema,
  productSchema,
} from '../schemas';
import { featureView, integrationV3, planView, productCurrencyViews, productPricingTableView, productView } from '../views';
import { currencyOf, paged, pageOfList, pageProps, pageSchema, type RouteModule } from './support';

const tag = { name: 'products', description: "The products of the key's organisation and mode" };
const str = { type: 'string' } as const;
const archived = { enum: ['true', 'false'] } as const;

/** v2: every product as a plain array; v3: a page of them by `slug`, `archived=true` for archived ones only. */
export const productRoutes: RouteModule = ({ core: { queries, subscriptionAdmin } }, version) => {
  const v3 = version === 'v3';
  const list: RouteDef = v3
    ? route({
        method: 'get',
        path: '/products',
        operationId: 'getProducts',
        summary: 'Get products (a page)',
        description:
          'A page of the products by slug: `cursor` (the last product of the page before), `take` and `sort`; `archived=true` lists archived ones.',
        scope: ['products', 'read'],
        query: querySchema({ ...pageProps, archived }),
        response: { status: 200, schema: pageSchema(productSchema('v3')) },
        async handle({ tenant, query }) {
          const all = (await queries.listProducts(tenant))
            .filter((p) => (query.archived === 'true' ? p.archivedAt !== null : p.archivedAt === null))
            .map((p) => productView('v3', { product: p, currencies: new Map() }, new Expand([])))
            .sort((a, b) => (a.slug < b.slug ? -1 : a.slug > b.slug ? 1 : 0));
          return ok(paged(pageOfList(all, (p) => p.uuid, query)));
        },
      })
    : route({
        method: 'get',
        path: '/products',
        operationId: 'getProducts',
        summary: 'Get products',
        description: "Every product of the key's organisation and mode.",
        scope: ['products', 'read'],
        response: { status: 200, schema: arrayOf(productSchema('v2')) },
        handle: async ({ tenant }) =>
          ok((await queries.listProducts(tenant)).map((p) => productView('v2', { product: p, currencies: new Map() }, new Expand([])))),
      });
  const v2Only: RouteDef[] = v3
    ? []
    : [
        productPlansRoute(queries, planSchema('v2'), (p, catalog) => planView('v2', p, catalog)),
        route({
          method: 'get',
          path: '/products/:productUuid/features',
          operationId: 'getProductFeatures',
          summary: 'Get product features',
          description: 'The features of the product in their sort order, with their enum options.',
          scope: ['products', 'read'],
          response: { status: 200, schema: arrayOf(featureSchema('v2')) },
          handle: async ({ tenant, params }) =>
            ok((await queries.productFeatures(tenant, params.productUuid)).map((f) => featureView('v2', f))),
        }),
        productCapabilitiesRoute(queries, 'license'),
        route({
          method: 'get',
          path: '/products/:productUuid/currencies',
          operationId: 'getProductCurrencies',
          summary: 'Get product currencies',
          description: 'The currencies the product is sold in, the default one marked.',
          scope: ['products', 'read'],
          response: { status: 200, schema: arrayOf(productCurrencyFullSchema) },
          handle: async ({ tenant, params }) => ok(productCurrencyViews(await queries.productCatalog(tenant, params.productUuid))),
        }),
      ];
  return resource(tag, [
    list,
    route({
      method: 'get',
      path: '/products/:productUuid',
      operationId: 'getProduct',
      summary: 'Get a product',
      description: v3
        ? 'One product; `expand=organisationPaymentIntegration` brings its payment integration.'
        : 'One product; `expand` brings its plans, features, capabilities, currencies or payment integration.',
      scope: ['products', 'read'],
      query: querySchema({ expand: str }),
      response: {
        status: 200,
        schema: v3
          ? extendOptional(productSchema('v3'), { organisationPaymentIntegration: { anyOf: [integrationV3Schema, { type: 'null' }] } })
          : extend(v1ProductSchema, { slug: str, archivedAt: ndate }),
      },
      async handle({ tenant, params, query }) {
        const catalog = await queries.productCatalog(tenant, params.productUuid);
        if (v3) {
          const x = parseExpand(query.expand, 'product');
          return ok({
            ...productView('v3', catalog, new Expand([])),
            ...(x.has('organisationPaymentIntegration') ? { organisationPaymentIntegration: integrationV3(catalog) } : {}),
          });
        }
        return ok(productView('v2', catalog, parseExpand(query.expand, 'product')));
      },
    }),
    route({
      method: 'get',
      path: v3 ? '/products/:productUuid/pricing-table' : '/products/:productUuid/pricingtable',
      operationId: 'getProductPricingTable',
      summary: 'Get product pricing table',
      description:
        "The product with its features, currencies and public plans in full (each plan's features and prices); `currency` shows only its prices, the customer (`owner`, v3) or grantee (`granteeId`, v2) marks the plans they hold (`isSubscribed`).",
      scope: ['pricing-tables', 'read'],
      query: querySchema(v3 ? { owner: str, currency: str } : { granteeId: str, currency: str }),
      response: { status: 200, schema: productPricingTableSchema(version) },
      async handle({ tenant, params, query }) {
        const catalog = await queries.productPricingTable(tenant, params.productUuid);
        const q = query as { owner?: string; granteeId?: string; currency?: string };
        const who = { owner: q.owner, granteeId: q.granteeId };
        const held = (who.owner ?? who.granteeId) ? await subscriptionAdmin.plansHeld(tenant, catalog.product.id, who) : undefined;
        return ok(productPricingTableView(version, catalog, { currency: currencyOf(catalog, q.currency), held }));
      },
    }),
    ...v2Only,
  ]);
};
