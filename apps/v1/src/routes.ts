import type {
  CheckoutLinkRequest,
  Clock,
  Core,
  License,
  LicensePage,
  Plan,
  ProductCatalog,
  Proration,
  SignedLinks,
  Tenant,
} from '@tollgate/core';
import {
  arrayOf,
  capabilitySchema,
  capabilityView,
  checkRoute,
  signingKeyRoute,
  licenseSchema,
  licenseView,
  mapBatches,
  parseLicenseStatusFilter,
  route,
  type Route,
} from '@tollgate/http';
import {
  batchUpdateBody,
  cancelQuery,
  changePlanBody,
  checkoutLinkQuery,
  createLicensesBody,
  decrementBody,
  expandQuery,
  fromGlobal,
  incrementBody,
  licenseCountQuery,
  licenseListQuery,
  linkRequest,
  parseExpand,
  planQuery,
  pricingTableQuery,
  productPricingTableQuery,
  purchaserQuery,
  perPlanOptions,
  licenseStatusQuery,
  licenseCancelBody,
  licenseUpdateBody,
  requireMember,
} from './params';
import * as S from './schemas';
import {
  DISPLAY_PLAN,
  eventView,
  Expand,
  v1Feature,
  v1Plan,
  v1PlanCapabilities,
  v1PlanCurrencies,
  v1PricingTable,
  v1Product,
  v1ProductCurrencies,
  v1ProductPricingTable,
  v1Subscription,
} from './views';
import { deferredCheckoutLinks, type DeferredCheckout, type PlanLinkOptions } from './links';
import { pricingPageLink } from './pricing-page';
import { v1UsageRoutes } from './routes/usage';

/** What the v1 generation needs: use cases, the link signer and clock (deferred checkout links), its public address. */
export interface V1Services {
  core: Pick<Core, 'apiKeys' | 'queries' | 'checkout' | 'subscriptions' | 'seats' | 'licenses' | 'worker' | 'signing' | 'usage'>;
  links: SignedLinks;
  clock: Clock;
  config: { publicUrl: string };
}

type Q = Record<string, string | undefined>;
const ok = (body: unknown) => ({ status: 200, body });
const noContent = { status: 204 };

/** The v1 generation, each operation declared once (paths of the service the contract describes). */
export function v1Routes({ core, links, clock, config }: V1Services): Route[] {
  const { queries, checkout, subscriptions, seats, licenses, worker, signing } = core;

  const deferredLinks = (
    tenant: Tenant,
    plans: Plan[],
    catalog: ProductCatalog,
    req: CheckoutLinkRequest,
    perPlan?: Map<string, PlanLinkOptions>,
  ) => deferredCheckoutLinks({ checkout, links, clock, config }, tenant, plans, catalog, req, perPlan);

  const link = (path: string, summary: string, kind: 'updatePayment' | 'portal' | 'cancel') =>
    route({
      method: 'get',
      path: `/subscriptions/:subscriptionUuid/${path}`,
      summary,
      scope: ['subscriptions', 'read'],
      response: { status: 200, schema: S.urlSchema },
      handle: async ({ tenant, params }) => ok(await subscriptions.link(tenant, params.subscriptionUuid, kind)),
    });

  /** Licenses as v1 views, with the capabilities of their plans. */
  async function licenseViewsOf(ls: License[]): Promise<ReturnType<typeof licenseView>[]> {
    const caps = await licenses.capabilitiesOf(ls);
    return ls.map((l) => licenseView(l, caps.get(l.planId) ?? []));
  }

  /** Licenses as v1 views, page by page (constant memory whatever their number). */
  async function* licenseViews(pages: AsyncIterable<LicensePage>): AsyncGenerator<unknown[]> {
    for await (const p of pages) yield p.licenses.map((l) => licenseView(l, p.capabilities.get(l.planId) ?? []));
  }
  return [
    // Products
    route({
      method: 'get',
      path: '/products',
      summary: 'Get products',
      scope: ['products', 'read'],
      response: { status: 200, schema: arrayOf(S.v1ProductSchema) },
      list: true,
      handle: ({ tenant }) => ({
        status: 200,
        stream: mapBatches(queries.productPages(tenant), (p) => v1Product({ product: p }, new Expand([]))),
      }),
    }),
    route<Q>({
      method: 'get',
      path: '/products/:productUuid',
      summary: 'Get a product',
      scope: ['products', 'read'],
      query: planQuery,
      response: { status: 200, schema: S.v1ProductSchema },
      async handle({ tenant, params, query }) {
        const x = parseExpand(query.expand, 'product');
        const catalog = await queries.productCatalog(tenant, params.productUuid);
        const urls = x.has('generateCheckoutLinks')
          ? deferredLinks(
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
    route({
      method: 'get',
      path: '/products/:productUuid/plans',
      summary: 'Get all plans of a product',
      scope: ['plans', 'read'],
      response: { status: 200, schema: arrayOf(S.v1PlanSchema) },
      async handle({ tenant, params }) {
        const catalog = await queries.productCatalog(tenant, params.productUuid);
        return ok(catalog.plans.map((p) => v1Plan(p, catalog, new Expand([]))));
      },
    }),
    route<Q>({
      method: 'get',
      path: '/products/:productUuid/pricingtable',
      summary: 'Get product pricing table',
      scope: ['pricing-tables', 'read'],
      query: productPricingTableQuery,
      response: { status: 200, schema: S.v1ProductSchema },
      async handle({ tenant, params, query }) {
        const catalog = await queries.productPricingTable(tenant, params.productUuid);
        return ok(v1ProductPricingTable(catalog, deferredLinks(tenant, catalog.plans, catalog, fromGlobal(query), perPlanOptions(query))));
      },
    }),
    route({
      method: 'get',
      path: '/products/:productUuid/features',
      summary: 'Get product features',
      scope: ['products', 'read'],
      response: { status: 200, schema: arrayOf(S.v1FeatureSchema) },
      handle: async ({ tenant, params }) => ok((await queries.productFeatures(tenant, params.productUuid)).map(v1Feature)),
    }),
    route({
      method: 'get',
      path: '/products/:productUuid/currencies',
      summary: 'Get product currencies',
      scope: ['products', 'read'],
      response: { status: 200, schema: arrayOf(S.productCurrencySchema) },
      handle: async ({ tenant, params }) =>
        ok(v1ProductCurrencies(await queries.productCatalog(tenant, params.productUuid), Expand.all('currency'))),
    }),
    route({
      method: 'get',
      path: '/products/:productUuid/capabilities',
      summary: 'Get product capabilities',
      scope: ['products', 'read'],
      response: { status: 200, schema: arrayOf(capabilitySchema) },
      handle: async ({ tenant, params }) => ok((await queries.productCapabilities(tenant, params.productUuid)).map(capabilityView)),
    }),

    // Plans
    route<Q>({
      method: 'get',
      path: '/plans/:planUuid',
      summary: 'Get a plan',
      scope: ['plans', 'read'],
      query: planQuery,
      response: { status: 200, schema: S.v1PlanSchema },
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
      summary: 'Get plan features',
      scope: ['plans', 'read'],
      response: { status: 200, schema: arrayOf(S.v1PlanFeatureSchema) },
      async handle({ tenant, params }) {
        const { plan, catalog } = await queries.getPlan(tenant, params.planUuid);
        return ok(v1Plan(plan, catalog, Expand.all('features.feature', 'features.enumValue')).features);
      },
    }),
    route({
      method: 'get',
      path: '/plans/:planUuid/currencies',
      summary: 'Get plan currencies',
      scope: ['plans', 'read'],
      response: { status: 200, schema: arrayOf(S.planCurrencySchema) },
      async handle({ tenant, params }) {
        const { plan, catalog } = await queries.getPlan(tenant, params.planUuid);
        return ok(v1PlanCurrencies(plan, catalog.currencies, Expand.all('currency')));
      },
    }),
    route({
      method: 'get',
      path: '/plans/:planUuid/capabilities',
      summary: 'Get plan capabilities',
      scope: ['plans', 'read'],
      response: { status: 200, schema: arrayOf(S.planCapabilitySchema) },
      async handle({ tenant, params }) {
        const { plan, catalog } = await queries.getPlan(tenant, params.planUuid);
        return ok(v1PlanCapabilities(plan, catalog.product, Expand.all('capability')));
      },
    }),
    route<Q>({
      method: 'get',
      path: '/plans/:planUuid/checkoutlink',
      summary: 'Get a checkout link',
      scope: ['plans', 'read'],
      query: checkoutLinkQuery,
      response: { status: 200, schema: S.checkoutLinkSchema },
      handle: async ({ tenant, params, query }) =>
        ok({ checkoutUrl: (await checkout.checkoutLink(tenant, params.planUuid, linkRequest(query))).url }),
    }),

    // Pricing tables
    route<Q>({
      method: 'get',
      path: '/pricing-tables/:pricingTableUuid',
      summary: 'Get a pricing table',
      scope: ['pricing-tables', 'read'],
      query: pricingTableQuery,
      response: { status: 200, schema: S.pricingTableSchema },
      async handle({ tenant, params, query }) {
        requireMember(query);
        const view = await queries.getPricingTable(tenant, params.pricingTableUuid);
        return ok(v1PricingTable(view, deferredLinks(tenant, view.plans, view.catalog, fromGlobal(query), perPlanOptions(query))));
      },
    }),

    route<Q>({
      method: 'get',
      path: '/pricing-tables/:pricingTableUuid/page-link',
      summary: 'A signed link to the hosted pricing page for one customer',
      scope: ['pricing-tables', 'read'],
      query: pricingTableQuery,
      response: { status: 200, schema: S.pricingPageLinkSchema },
      async handle({ tenant, params, query }) {
        requireMember(query);
        return ok(await pricingPageLink({ queries, checkout, links, clock, config }, tenant, params.pricingTableUuid, fromGlobal(query)));
      },
    }),

    // Subscriptions
    route<Q>({
      method: 'get',
      path: '/subscriptions/:subscriptionUuid',
      summary: 'Get a subscription',
      scope: ['subscriptions', 'read'],
      query: expandQuery,
      response: { status: 200, schema: S.v1SubscriptionSchema },
      async handle({ tenant, params, query }) {
        const x = parseExpand(query.expand, 'subscription');
        return ok(v1Subscription(await subscriptions.get(tenant, params.subscriptionUuid), x));
      },
    }),
    route<Q, { planUuid: string; proration?: Proration }>({
      method: 'put',
      path: '/subscriptions/:subscriptionUuid/change-plan',
      summary: "Change a subscription's plan",
      scope: ['subscriptions', 'write'],
      body: changePlanBody,
      response: { status: 204 },
      async handle({ tenant, params, body }) {
        await subscriptions.changePlan(tenant, params.subscriptionUuid, body.planUuid, body.proration ?? 'create_prorations');
        return noContent;
      },
    }),
    route({
      method: 'get',
      path: '/subscriptions/:subscriptionUuid/invoices',
      summary: 'Get subscription invoices',
      scope: ['subscriptions', 'read'],
      response: { status: 200, schema: S.invoiceListSchema },
      handle: async ({ tenant, params }) => ok(await subscriptions.invoices(tenant, params.subscriptionUuid)),
    }),
    route({
      method: 'get',
      path: '/subscriptions/:subscriptionUuid/updateplan/listplans',
      summary: 'Plans a subscriber can switch to',
      scope: ['subscriptions', 'read'],
      response: { status: 200, schema: arrayOf(S.v1PlanSchema) },
      async handle({ tenant, params }) {
        const { plans, product, currencies } = await subscriptions.switchablePlans(tenant, params.subscriptionUuid);
        return ok(plans.map((p) => v1Plan(p, { product, currencies }, DISPLAY_PLAN)));
      },
    }),
    route<{ when: 'now' | 'end' }>({
      method: 'put',
      path: '/subscriptions/:subscriptionUuid/cancel',
      summary: 'Cancel now or at period end',
      scope: ['subscriptions', 'write'],
      query: cancelQuery,
      response: { status: 204 },
      async handle({ tenant, params, query }) {
        await subscriptions.cancel(tenant, params.subscriptionUuid, query.when);
        return noContent;
      },
    }),
    link('updatepaymentlink', 'Update-payment link', 'updatePayment'),
    link('customer-portal', 'Customer portal link', 'portal'),
    link('cancelpaymentlink', 'Cancel-subscription link', 'cancel'),
    route({
      method: 'get',
      path: '/subscriptions/:subscriptionUuid/payment-method',
      summary: 'Payment method',
      scope: ['subscriptions', 'read'],
      response: { status: 200, schema: S.paymentMethodSchema },
      handle: async ({ tenant, params }) => ok(await subscriptions.paymentMethod(tenant, params.subscriptionUuid)),
    }),
    route({
      method: 'put',
      path: '/subscriptions/:subscriptionUuid/reactivate',
      summary: 'Reactivate a scheduled cancellation',
      scope: ['subscriptions', 'write'],
      response: { status: 204 },
      async handle({ tenant, params }) {
        await subscriptions.reactivate(tenant, params.subscriptionUuid);
        return noContent;
      },
    }),
    route({
      method: 'put',
      path: '/subscriptions/:subscriptionUuid/updateplan/:planUuid',
      summary: 'Move to another plan (deprecated)',
      scope: ['subscriptions', 'write'],
      response: { status: 204 },
      async handle({ tenant, params }) {
        await subscriptions.changePlan(tenant, params.subscriptionUuid, params.planUuid, 'create_prorations');
        return noContent;
      },
    }),
    route<Q, { increment: number; proration?: Proration }>({
      method: 'post',
      path: '/subscriptions/:subscriptionUuid/seats',
      summary: 'Increment seats',
      scope: ['subscriptions', 'write'],
      body: incrementBody,
      response: { status: 202, schema: S.eventUuidSchema },
      async handle({ tenant, params, body }) {
        const e = await seats.request(tenant, params.subscriptionUuid, {
          type: 'seats.increment',
          count: body.increment,
          proration: body.proration ?? 'create_prorations',
        });
        return { status: 202, body: { eventUuid: e.id } };
      },
    }),
    route<Q, { decrement: number; proration?: Proration }>({
      method: 'put',
      path: '/subscriptions/:subscriptionUuid/seats',
      summary: 'Decrement seats',
      scope: ['subscriptions', 'write'],
      body: decrementBody,
      response: { status: 202, schema: S.eventUuidSchema },
      async handle({ tenant, params, body }) {
        const e = await seats.request(tenant, params.subscriptionUuid, {
          type: 'seats.decrement',
          count: body.decrement,
          proration: body.proration ?? 'create_prorations',
        });
        return { status: 202, body: { eventUuid: e.id } };
      },
    }),

    // Licenses
    route<
      Q,
      { planUuid: string; member: string; granteeId: string | null } | { planUuid: string; member: string; granteeId: string | null }[]
    >({
      method: 'post',
      path: '/licenses',
      summary: 'Create licenses',
      scope: ['licenses', 'write'],
      body: createLicensesBody,
      response: { status: 200, schema: arrayOf(licenseSchema) },
      async handle({ tenant, body }) {
        return ok(await licenseViewsOf(await licenses.createAdHoc(tenant, Array.isArray(body) ? body : [body])));
      },
    }),
    route<Q, { uuid: string; granteeId: string | null }[]>({
      method: 'put',
      path: '/licenses',
      summary: 'Batch update grantees',
      scope: ['licenses', 'write'],
      body: batchUpdateBody,
      response: { status: 200, schema: arrayOf(licenseSchema) },
      async handle({ tenant, body }) {
        return ok(await licenseViewsOf(await licenses.batchUpdate(tenant, body)));
      },
    }),
    route<Q>({
      method: 'get',
      path: '/licenses',
      summary: 'Get licenses (the whole list, streamed; or a page with cursor and take, the next cursor in x-next-cursor)',
      scope: ['licenses', 'read'],
      query: licenseListQuery,
      list: true,
      response: { status: 200, schema: arrayOf(licenseSchema) },
      async handle({ tenant, query }) {
        const filter = { status: parseLicenseStatusFilter(query.status), subscriptionId: query.subscriptionUuid };
        if (query.cursor === undefined && query.take === undefined)
          return { status: 200, stream: licenseViews(licenses.pages(tenant, filter)) };
        const take = query.take ? Number(query.take) : 100;
        const items: unknown[] = [];
        let next: string | null = null;
        for await (const p of licenses.pages(tenant, filter, { after: query.cursor, take, batch: take })) {
          items.push(...p.licenses.map((l) => licenseView(l, p.capabilities.get(l.planId) ?? [])));
          next = p.nextCursor;
        }
        return { status: 200, body: items, headers: next ? { 'x-next-cursor': next } : undefined };
      },
    }),
    route<Q>({
      method: 'get',
      path: '/licenses/count',
      summary: 'Count licenses',
      scope: ['licenses', 'read'],
      query: licenseCountQuery,
      response: { status: 200, schema: S.licenseCountSchema },
      handle: async ({ tenant, query }) =>
        ok(await licenses.count(tenant, { status: parseLicenseStatusFilter(query.status), subscriptionId: query.subscriptionUuid })),
    }),
    checkRoute(licenses),
    signingKeyRoute('/signing-key', signing),
    route<Q>({
      method: 'get',
      path: '/licenses/purchaser',
      summary: "A purchaser's licenses (streamed), optionally of one product and status",
      scope: ['licenses', 'read'],
      query: purchaserQuery,
      list: true,
      response: { status: 200, schema: arrayOf(licenseSchema) },
      handle: ({ tenant, query }) => ({
        status: 200,
        stream: licenseViews(
          licenses.pages(tenant, {
            purchaser: query.purchaser,
            productId: query.productUuid,
            status: parseLicenseStatusFilter(query.status),
          }),
        ),
      }),
    }),
    route<Q>({
      method: 'get',
      path: '/licenses/granteeId/:granteeId',
      summary: "A grantee's licenses (streamed)",
      scope: ['licenses', 'read'],
      textParams: ['granteeId'],
      query: licenseStatusQuery,
      list: true,
      response: { status: 200, schema: arrayOf(licenseSchema) },
      handle: ({ tenant, params, query }) => ({
        status: 200,
        stream: licenseViews(licenses.pages(tenant, { granteeId: params.granteeId, status: parseLicenseStatusFilter(query.status) })),
      }),
    }),
    route<Q, { uuids: string[] }>({
      method: 'post',
      path: '/licenses/cancel',
      summary: 'Cancel ad hoc licenses (all or none; a seat of a subscription is 409)',
      scope: ['licenses', 'write'],
      body: licenseCancelBody,
      response: { status: 204 },
      async handle({ tenant, body }) {
        await licenses.cancel(tenant, body.uuids);
        return noContent;
      },
    }),
    // After every fixed /licenses/... path: a UUID here is checked as one.
    route({
      method: 'get',
      path: '/licenses/:licenseUuid',
      summary: 'Get a license',
      scope: ['licenses', 'read'],
      response: { status: 200, schema: licenseSchema },
      async handle({ tenant, params }) {
        return ok((await licenseViewsOf([await licenses.get(tenant, params.licenseUuid)]))[0]);
      },
    }),
    route<Q, { granteeId: string | null }>({
      method: 'put',
      path: '/licenses/:licenseUuid',
      summary: 'Assign (or unassign, null) the grantee of a license',
      scope: ['licenses', 'write'],
      body: licenseUpdateBody,
      response: { status: 200, schema: licenseSchema },
      async handle({ tenant, params, body }) {
        return ok((await licenseViewsOf(await licenses.batchUpdate(tenant, [{ uuid: params.licenseUuid, granteeId: body.granteeId }])))[0]);
      },
    }),
    route({
      method: 'delete',
      path: '/licenses/:licenseUuid',
      summary: 'Cancel an ad hoc license (a seat of a subscription is 409)',
      scope: ['licenses', 'write'],
      response: { status: 204 },
      async handle({ tenant, params }) {
        await licenses.cancel(tenant, [params.licenseUuid]);
        return noContent;
      },
    }),

    // Events (beyond the contract): the status of an accepted seat change.
    route({
      method: 'get',
      path: '/events/:eventUuid',
      summary: 'Status of an accepted change',
      scope: ['subscriptions', 'read'],
      response: { status: 200, schema: S.eventSchema },
      handle: async ({ tenant, params }) => ok(eventView(await worker.get(tenant, params.eventUuid))),
    }),
    ...v1UsageRoutes(core),
  ];
}

/**
 * `GET /checkout/start/:token` (no API key: the customer's browser follows it): creates the
 * checkout for a deferred link and answers 303 to the provider's checkout page.
 */
export function checkoutStartRoutes({ core, links, clock }: Pick<V1Services, 'core' | 'links' | 'clock'>): Route[] {
  return [
    route({
      method: 'get',
      path: '/checkout/start/:token',
      summary: "Follow a pricing table's checkout link",
      textParams: ['token'],
      response: { status: 303, description: 'to the checkout page' },
      async handle({ params }) {
        const link = links.verify<DeferredCheckout>(params.token, clock.now());
        if (!link) {
          return {
            status: 404,
            body: { error: 'this checkout link is not valid or has expired; reload the pricing page', code: 'NOT_FOUND' },
          };
        }
        const { url } = await core.checkout.checkoutLink(
          { organisationId: link.organisationId, isTest: link.isTest },
          link.planId,
          link.request,
        );
        return { status: 303, headers: { Location: url } };
      },
    }),
  ];
}
