import { arrayOf, date, int, object, ok, querySchema, resource, route, str, uuid, type Route } from '@tollgate/http';
import type { CheckoutLinkRequest } from '@tollgate/core';
import type { PlanLinkOptions } from '../links';
import { fromGlobal, perPlanOptions, requireMember } from '../params';
import { pricingPageLink } from '../pricing-page';
import { v1FeatureWithOptionsSchema, v1PlanSchema, v1ProductSchema } from '../schemas';
import { v1PricingTable, v1ProductPricingTable } from '../views';
import { checkoutOptionProps, deferredLinksOf, type V1Services } from './support';

export const pricingTableSchema = object({
  uuid,
  name: str,
  status: str,
  title: str,
  text: str,
  theme: str,
  featureOrder: str,
  productUuid: uuid,
  customTheme: { type: ['object', 'null'] },
  featuredPlanUuid: { anyOf: [uuid, { type: 'null' }] },
  updatedAt: date,
  features: arrayOf(
    object({ pricingTableUuid: uuid, featureUuid: uuid, sortOrder: int, updatedAt: date, feature: v1FeatureWithOptionsSchema }),
  ),
  product: v1ProductSchema,
  plans: arrayOf(object({ planUuid: uuid, pricingTableUuid: uuid, sortOrder: int, updatedAt: date, plan: v1PlanSchema })),
});
export const pricingPageLinkSchema = object({ url: { type: 'string', format: 'uri' }, expiresAt: { type: 'string', format: 'date-time' } });

const nonEmpty = { type: 'string', minLength: 1 } as const;

/** The global checkout options of every plan's link, and the per-plan lists (`[planUuid,value,...]`). */
const globalProps = {
  ...checkoutOptionProps,
  globalSuccessUrl: str,
  globalCancelUrl: str,
  globalGranteeId: nonEmpty,
  member: nonEmpty,
  owner: nonEmpty,
  granteeIds: str,
  successUrls: str,
  cancelUrls: str,
} as const;
/** The contract marks only `globalGranteeId` required on the product pricing table (the URLs: see `withAddresses`). */
export const productPricingTableQuery = querySchema(globalProps, ['globalGranteeId']);
export const pricingTableQuery = querySchema(globalProps, ['globalSuccessUrl', 'globalCancelUrl', 'globalGranteeId']);

/**
 * Whether a plan's link is asked for: its success or cancel address given (global or the plan's
 * own). On the product pricing table they are optional; a plan with neither is listed without a
 * checkout link (a checkout needs both). One given is checked as ever, the other then required (400).
 */
const withAddresses = (global: CheckoutLinkRequest, own: PlanLinkOptions | undefined): boolean =>
  (own?.successUrl ?? global.successUrl) !== undefined || (own?.cancelUrl ?? global.cancelUrl) !== undefined;

export function pricingTableRoutes(s: V1Services): Route[] {
  const { queries, checkout } = s.core;
  const deferredLinks = deferredLinksOf(s);
  return resource({ name: 'pricing-tables', description: 'Pricing tables: the plans a customer chooses from, with checkout links' }, [
    route({
      method: 'get',
      path: '/products/:productUuid/pricingtable',
      operationId: 'getProductPricingTable',
      summary: 'Get product pricing table',
      description: "The product's public plans as a pricing table, each with a checkout link for the customer.",
      scope: ['pricing-tables', 'read'],
      query: productPricingTableQuery,
      response: { status: 200, schema: v1ProductSchema },
      async handle({ tenant, params, query }) {
        const catalog = await queries.productPricingTable(tenant, params.productUuid);
        const global = fromGlobal(query);
        const perPlan = perPlanOptions(query);
        const linked = catalog.plans.filter((p) => withAddresses(global, perPlan.get(p.id)));
        return ok(v1ProductPricingTable(catalog, await deferredLinks(tenant, linked, catalog, global, perPlan)));
      },
    }),
    route({
      method: 'get',
      path: '/pricing-tables/:pricingTableUuid',
      operationId: 'getPricingTable',
      summary: 'Get a pricing table',
      description: 'A pricing table with its plans, each with a checkout link for the customer (`member`).',
      scope: ['pricing-tables', 'read'],
      query: pricingTableQuery,
      response: { status: 200, schema: pricingTableSchema },
      async handle({ tenant, params, query }) {
        requireMember(query);
        const view = await queries.getPricingTable(tenant, params.pricingTableUuid);
        return ok(v1PricingTable(view, await deferredLinks(tenant, view.plans, view.catalog, fromGlobal(query), perPlanOptions(query))));
      },
    }),
    route({
      method: 'get',
      path: '/pricing-tables/:pricingTableUuid/page-link',
      operationId: 'getPricingPageLink',
      summary: 'A signed link to the hosted pricing page for one customer',
      description: 'A signed, expiring link to the pricing page Tollgate hosts for this table and customer.',
      scope: ['pricing-tables', 'read'],
      query: pricingTableQuery,
      response: { status: 200, schema: pricingPageLinkSchema },
      async handle({ tenant, params, query }) {
        requireMember(query);
        return ok(
          await pricingPageLink(
            { queries, checkout, links: s.links, clock: s.clock, config: s.config },
            tenant,
            params.pricingTableUuid,
            fromGlobal(query),
          ),
        );
      },
    }),
  ]);
}
