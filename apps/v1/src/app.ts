import express, { type Express, type RequestHandler } from 'express';
import type { Container } from 'inversify';
import {
  DomainError, ErrorCodes, parseLicenseStatusFilter,
  type ApiKeyService, type CatalogQueries, type CheckoutLinkRequest, type CheckoutService, type EventWorker, type Id, type LicenseService, type Plan,
  type ProductCatalog, type SubscriptionService, type Tenant, type Clock,
} from '@tollgate/core';
import {
  authenticate, capabilityCheckHandler, capabilityView, errorHandler, eventView, Expand, legacyErrorBody, LEGACY_V1_STATUS, licenseView, requireScope, sendEmpty, sendJson,
  tenantOf, v1Feature, v1Plan, v1PlanCapabilities, v1PlanCurrencies, v1PricingTable, v1Product, v1ProductCurrencies,
  v1ProductPricingTable, v1Subscription, DISPLAY_PLAN, type Logger, type SignedLinks,
} from '@tollgate/http';
import { TOKENS, type Config, wrapApp } from '@tollgate/runtime';
import {
  batchUpdateBody, cancelQuery, changePlanBody, checkoutLinkQuery, createLicensesBody, decrementBody, fromGlobal, incrementBody, licenseListQuery,
  parseExpand, planQuery, pricingTableQuery, productPricingTableQuery, uuidParam,
} from './params';

/** Every operation needs `version: v1`, except change plan and the deprecated move. */
const requireV1: RequestHandler = (req, _res, next) => {
  const v = req.header('version');
  if (v !== 'v1') {
    throw new DomainError(ErrorCodes.VALIDATION_FAILED, v === undefined ? 'header version: v1 is required' : `unsupported version ${v}: the only version is v1`, [
      { property: 'version', error: 'must be v1' },
    ]);
  }
  next();
};

const productId = uuidParam('productUuid');
const planId = uuidParam('planUuid');
const subscriptionId = uuidParam('subscriptionUuid');

/** Paths v1 serves, for the combined server's helpful 404s. */
const V1_PATHS: [string, RegExp][] = [
  ['GET', /^\/products(\/[^/]+(\/(plans|pricingtable|features|currencies|capabilities))?)?$/],
  ['GET', /^\/plans\/[^/]+(\/(features|currencies|capabilities|checkoutlink))?$/],
  ['GET', /^\/pricing-tables\/[^/]+$/],
  ['GET', /^\/subscriptions\/[^/]+(\/(invoices|updateplan\/listplans|updatepaymentlink|customer-portal|cancelpaymentlink|payment-method))?$/],
  ['PUT', /^\/subscriptions\/[^/]+\/(change-plan|cancel|reactivate|seats|updateplan\/[^/]+)$/],
  ['POST', /^\/subscriptions\/[^/]+\/seats$/],
  ['POST', /^\/licenses$/], ['PUT', /^\/licenses$/], ['GET', /^\/licenses(\/(count|check))?$/],
  ['GET', /^\/events\/[^/]+$/],
];
export const v1Serves = (method: string, path: string): boolean => V1_PATHS.some(([m, re]) => m === method && re.test(path));

export function createV1Router(container: Container): express.Router {
  const apiKeys = container.get<ApiKeyService>(TOKENS.ApiKeys);
  const queries = container.get<CatalogQueries>(TOKENS.CatalogQueries);
  const checkout = container.get<CheckoutService>(TOKENS.Checkout);
  const subscriptions = container.get<SubscriptionService>(TOKENS.Subscriptions);
  const licenses = container.get<LicenseService>(TOKENS.Licenses);
  const worker = container.get<EventWorker>(TOKENS.EventWorker);

  const config = container.get<Config>(TOKENS.Config);
  const signedLinks = container.get<SignedLinks>(TOKENS.SignedLinks);
  const clock = container.get<Clock>(TOKENS.Clock);

  /**
   * Deferred checkout links for the plans of a catalog: checked now, but the checkout session (and
   * the provider's) is created only when the customer follows one (`/checkout/start/:token`), so a
   * pricing table view costs no provider call.
   */
  function links(tenant: Tenant, plans: Plan[], catalog: ProductCatalog, req: CheckoutLinkRequest): Map<Id, string> {
    const out = new Map<Id, string>();
    for (const plan of plans) {
      checkout.validateLink(plan, catalog, req);
      const token = signedLinks.sign({ organisationId: tenant.organisationId, isTest: tenant.isTest, planId: plan.id, request: req } satisfies DeferredCheckout, DEFERRED_LINK_TTL_MS, clock.now());
      out.set(plan.id, `${config.publicUrl}/checkout/start/${token}`);
    }
    return out;
  }

  const r = express.Router();
  // The two operations the contract exempts from the version header.
  const exempt = express.Router();
  const auth = authenticate(apiKeys, 'x-api-key');
  exempt.put('/subscriptions/:subscriptionUuid/change-plan', auth, requireScope('subscriptions', 'write'), async (req, res) => {
    const { subscriptionUuid } = subscriptionId(req.params);
    const body = changePlanBody(req.body);
    await subscriptions.changePlan(tenantOf(res), subscriptionUuid, body.planUuid, body.proration ?? 'create_prorations');
    sendEmpty(res, 204);
  });
  exempt.put('/subscriptions/:subscriptionUuid/updateplan/:planUuid', auth, requireScope('subscriptions', 'write'), async (req, res) => {
    const { subscriptionUuid } = subscriptionId(req.params);
    const { planUuid } = planId(req.params);
    await subscriptions.changePlan(tenantOf(res), subscriptionUuid, planUuid, 'create_prorations');
    sendEmpty(res, 204);
  });
  r.use(exempt);

  const v = express.Router();
  v.use(requireV1);
  v.use(auth);

  // Products
  v.get('/products', requireScope('products', 'read'), async (_req, res) => {
    sendJson(res, 200, (await queries.listProducts(tenantOf(res))).map((p) => v1Product({ product: p }, new Expand([]))));
  });
  v.get('/products/:productUuid', requireScope('products', 'read'), async (req, res) => {
    const { productUuid } = productId(req.params);
    const x = parseExpand(req.query.expand, 'product');
    const catalog = await queries.productCatalog(tenantOf(res), productUuid);
    const checkoutUrls = x.has('generateCheckoutLinks') ? links(tenantOf(res), catalog.plans.filter((p) => p.active && !p.archivedAt), catalog, planQuery(req.query)) : undefined;
    // Generated links live on the plans, so asking for them brings the plans along.
    sendJson(res, 200, v1Product(catalog, checkoutUrls ? x.with('plans') : x, checkoutUrls));
  });
  v.get('/products/:productUuid/plans', requireScope('plans', 'read'), async (req, res) => {
    const catalog = await queries.productCatalog(tenantOf(res), productId(req.params).productUuid);
    sendJson(res, 200, catalog.plans.map((p) => v1Plan(p, catalog, new Expand([]))));
  });
  v.get('/products/:productUuid/pricingtable', requireScope('pricing-tables', 'read'), async (req, res) => {
    const q = productPricingTableQuery(req.query);
    const catalog = await queries.productPricingTable(tenantOf(res), productId(req.params).productUuid);
    sendJson(res, 200, v1ProductPricingTable(catalog, links(tenantOf(res), catalog.plans, catalog, fromGlobal(q))));
  });
  v.get('/products/:productUuid/features', requireScope('products', 'read'), async (req, res) => {
    sendJson(res, 200, (await queries.productFeatures(tenantOf(res), productId(req.params).productUuid)).map(v1Feature));
  });
  v.get('/products/:productUuid/currencies', requireScope('products', 'read'), async (req, res) => {
    const catalog = await queries.productCatalog(tenantOf(res), productId(req.params).productUuid);
    sendJson(res, 200, v1ProductCurrencies(catalog, Expand.all('currency')));
  });
  v.get('/products/:productUuid/capabilities', requireScope('products', 'read'), async (req, res) => {
    sendJson(res, 200, (await queries.productCapabilities(tenantOf(res), productId(req.params).productUuid)).map(capabilityView));
  });

  // Plans
  v.get('/plans/:planUuid', requireScope('plans', 'read'), async (req, res) => {
    const q = planQuery(req.query);
    const x = parseExpand(q.expand, 'plan');
    const { plan, catalog } = await queries.getPlan(tenantOf(res), planId(req.params).planUuid);
    const url = x.has('generateCheckoutLink') ? (await checkout.linkFor(plan, catalog, q)).url : undefined;
    sendJson(res, 200, v1Plan(plan, catalog, x, url));
  });
  v.get('/plans/:planUuid/features', requireScope('plans', 'read'), async (req, res) => {
    const { plan, catalog } = await queries.getPlan(tenantOf(res), planId(req.params).planUuid);
    sendJson(res, 200, v1Plan(plan, catalog, Expand.all('features.feature', 'features.enumValue')).features);
  });
  v.get('/plans/:planUuid/currencies', requireScope('plans', 'read'), async (req, res) => {
    const { plan, catalog } = await queries.getPlan(tenantOf(res), planId(req.params).planUuid);
    sendJson(res, 200, v1PlanCurrencies(plan, catalog.currencies, Expand.all('currency')));
  });
  v.get('/plans/:planUuid/capabilities', requireScope('plans', 'read'), async (req, res) => {
    const { plan, catalog } = await queries.getPlan(tenantOf(res), planId(req.params).planUuid);
    sendJson(res, 200, v1PlanCapabilities(plan, catalog.product, Expand.all('capability')));
  });
  v.get('/plans/:planUuid/checkoutlink', requireScope('plans', 'read'), async (req, res) => {
    const q = checkoutLinkQuery(req.query);
    sendJson(res, 200, { checkoutUrl: (await checkout.checkoutLink(tenantOf(res), planId(req.params).planUuid, q)).url });
  });

  // Pricing tables
  v.get('/pricing-tables/:pricingTableUuid', requireScope('pricing-tables', 'read'), async (req, res) => {
    const q = pricingTableQuery(req.query);
    const view = await queries.getPricingTable(tenantOf(res), uuidParam('pricingTableUuid')(req.params).pricingTableUuid);
    sendJson(res, 200, v1PricingTable(view, links(tenantOf(res), view.plans, view.catalog, fromGlobal(q))));
  });

  // Subscriptions
  v.get('/subscriptions/:subscriptionUuid', requireScope('subscriptions', 'read'), async (req, res) => {
    const x = parseExpand(req.query.expand, 'subscription');
    sendJson(res, 200, v1Subscription(await subscriptions.get(tenantOf(res), subscriptionId(req.params).subscriptionUuid), x));
  });
  v.get('/subscriptions/:subscriptionUuid/invoices', requireScope('subscriptions', 'read'), async (req, res) => {
    sendJson(res, 200, await subscriptions.invoices(tenantOf(res), subscriptionId(req.params).subscriptionUuid));
  });
  v.get('/subscriptions/:subscriptionUuid/updateplan/listplans', requireScope('subscriptions', 'read'), async (req, res) => {
    const { plans, product, currencies } = await subscriptions.switchablePlans(tenantOf(res), subscriptionId(req.params).subscriptionUuid);
    sendJson(res, 200, plans.map((p) => v1Plan(p, { product, currencies }, DISPLAY_PLAN)));
  });
  v.put('/subscriptions/:subscriptionUuid/cancel', requireScope('subscriptions', 'write'), async (req, res) => {
    const { when } = cancelQuery(req.query);
    await subscriptions.cancel(tenantOf(res), subscriptionId(req.params).subscriptionUuid, when);
    sendEmpty(res, 204);
  });
  v.put('/subscriptions/:subscriptionUuid/reactivate', requireScope('subscriptions', 'write'), async (req, res) => {
    await subscriptions.reactivate(tenantOf(res), subscriptionId(req.params).subscriptionUuid);
    sendEmpty(res, 204);
  });
  const link = (kind: 'updatePayment' | 'portal' | 'cancel'): RequestHandler => async (req, res) => {
    sendJson(res, 200, await subscriptions.link(tenantOf(res), subscriptionId(req.params).subscriptionUuid, kind));
  };
  v.get('/subscriptions/:subscriptionUuid/updatepaymentlink', requireScope('subscriptions', 'read'), link('updatePayment'));
  v.get('/subscriptions/:subscriptionUuid/customer-portal', requireScope('subscriptions', 'read'), link('portal'));
  v.get('/subscriptions/:subscriptionUuid/cancelpaymentlink', requireScope('subscriptions', 'read'), link('cancel'));
  v.get('/subscriptions/:subscriptionUuid/payment-method', requireScope('subscriptions', 'read'), async (req, res) => {
    sendJson(res, 200, await subscriptions.paymentMethod(tenantOf(res), subscriptionId(req.params).subscriptionUuid));
  });
  v.post('/subscriptions/:subscriptionUuid/seats', requireScope('subscriptions', 'write'), async (req, res) => {
    const body = incrementBody(req.body);
    const event = await subscriptions.requestSeatChange(tenantOf(res), subscriptionId(req.params).subscriptionUuid, { increment: body.increment }, body.proration ?? 'create_prorations');
    sendJson(res, 202, { eventUuid: event.id });
  });
  v.put('/subscriptions/:subscriptionUuid/seats', requireScope('subscriptions', 'write'), async (req, res) => {
    const body = decrementBody(req.body);
    const event = await subscriptions.requestSeatChange(tenantOf(res), subscriptionId(req.params).subscriptionUuid, { decrement: body.decrement }, body.proration ?? 'create_prorations');
    sendJson(res, 202, { eventUuid: event.id });
  });

  // Licenses
  v.post('/licenses', requireScope('licenses', 'write'), async (req, res) => {
    const body = createLicensesBody(req.body);
    const created = await licenses.createAdHoc(tenantOf(res), Array.isArray(body) ? body : [body]);
    const caps = await licenses.capabilitiesOf(created);
    sendJson(res, 200, created.map((l) => licenseView(l, caps.get(l.planId) ?? [])));
  });
  v.put('/licenses', requireScope('licenses', 'write'), async (req, res) => {
    const updated = await licenses.batchUpdate(tenantOf(res), batchUpdateBody(req.body));
    const caps = await licenses.capabilitiesOf(updated);
    sendJson(res, 200, updated.map((l) => licenseView(l, caps.get(l.planId) ?? [])));
  });
  v.get('/licenses', requireScope('licenses', 'read'), async (req, res) => {
    const q = licenseListQuery(req.query);
    const list = await licenses.list(tenantOf(res), { status: parseLicenseStatusFilter(q.status), subscriptionId: q.subscriptionUuid });
    const caps = await licenses.capabilitiesOf(list);
    sendJson(res, 200, list.map((l) => licenseView(l, caps.get(l.planId) ?? [])));
  });
  v.get('/licenses/count', requireScope('licenses', 'read'), async (req, res) => {
    const q = licenseListQuery(req.query);
    sendJson(res, 200, await licenses.count(tenantOf(res), { status: parseLicenseStatusFilter(q.status), subscriptionId: q.subscriptionUuid }));
  });
  v.get('/licenses/check', requireScope('licenses', 'read'), capabilityCheckHandler(licenses));

  // Events (beyond the contract): the status of an accepted seat change.
  v.get('/events/:eventUuid', requireScope('subscriptions', 'read'), async (req, res) => {
    sendJson(res, 200, eventView(await worker.get(tenantOf(res), uuidParam('eventUuid')(req.params).eventUuid)));
  });

  r.use(v);
  return r;
}

/** What a deferred checkout link carries (signed). */
interface DeferredCheckout {
  organisationId: Id;
  isTest: boolean;
  planId: Id;
  request: CheckoutLinkRequest;
}

/** How long a pricing table's checkout links stay valid. */
export const DEFERRED_LINK_TTL_MS = 7 * 24 * 60 * 60 * 1000;

/**
 * `GET /checkout/start/:token` (no API key: the customer's browser follows it): creates the
 * checkout for a deferred link and answers 303 to the provider's checkout page.
 */
export function createCheckoutStartRouter(container: Container): express.Router {
  const checkout = container.get<CheckoutService>(TOKENS.Checkout);
  const signedLinks = container.get<SignedLinks>(TOKENS.SignedLinks);
  const clock = container.get<Clock>(TOKENS.Clock);
  const logger = container.get<Logger>(TOKENS.Logger);
  const r = express.Router();
  r.get('/:token', async (req, res) => {
    const link = signedLinks.verify<DeferredCheckout>(req.params.token, clock.now());
    if (!link) return sendJson(res, 404, legacyErrorBody({ status: 404, code: 'NOT_FOUND', message: 'this checkout link is not valid or has expired; reload the pricing page', details: [] }));
    const { url } = await checkout.checkoutLink({ organisationId: link.organisationId, isTest: link.isTest }, link.planId, link.request);
    res.status(303).setHeader('Location', url);
    res.end();
  });
  r.use(errorHandler(LEGACY_V1_STATUS, legacyErrorBody, logger));
  return r;
}

/** The v1 app alone on its own port. */
export function createV1App(container: Container): Express {
  const logger = container.get<Logger>(TOKENS.Logger);
  return wrapApp(container, (app) => {
    app.use('/checkout/start', createCheckoutStartRouter(container));
    app.use(createV1Router(container));
    app.use((_req, res) => sendJson(res, 404, legacyErrorBody({ status: 404, code: 'ROUTE_NOT_FOUND', message: 'no such v1 operation', details: [] })));
    app.use(errorHandler(LEGACY_V1_STATUS, legacyErrorBody, logger));
  });
}

