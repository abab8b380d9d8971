import express, { type Express, type Request, type RequestHandler, type Response } from 'express';
import type { Container } from 'inversify';
import {
  DomainError, ErrorCodes, INTERVALS, requestFingerprint,
  type ApiKeyService, type CatalogAdmin, type IdempotencyService, type Plan, type PlanDetail, type Product, type ScopeResource, type Tenant,
} from '@tollgate/core';
import {
  authenticate, catalogErrorBody, catalogPlan, catalogProduct, catalogSettings, compile, entitlementView, errorHandler, filterOptionsView, lineItemView,
  LEGACY_V1_STATUS, listEnvelope, nestedList, objectEnvelope, requireScope, sendEmpty, sendJson, subscriptionPlanView, tenantOf, tierTagView,
  type Logger,
} from '@tollgate/http';
import { TOKENS, wrapApp } from '@tollgate/runtime';

/** What a catalog route answers; the wrapper sends it (and remembers it under an idempotency key). */
interface Answer {
  status: number;
  body?: unknown;
}

const idParam = compile<{ id: string }>({ type: 'object', properties: { id: { type: 'string', format: 'uuid' } }, required: ['id'] });
const bool = { enum: ['true', 'false'] };
const listProps = {
  limit: { type: 'string', pattern: '^(100|[1-9][0-9]?)$' }, after: { type: 'string' }, before: { type: 'string' }, search: { type: 'string', maxLength: 200 },
  includeArchived: bool, expand: { type: 'string' },
};
const productListQuery = compile<Record<string, string | undefined>>({ type: 'object', properties: listProps, additionalProperties: false });
const planListQuery = compile<Record<string, string | undefined>>({
  type: 'object',
  properties: {
    ...listProps, productId: { type: 'string', format: 'uuid' }, currency: { type: 'string', pattern: '^[A-Za-z]{3}$' }, interval: { enum: [...INTERVALS] },
    intervalCount: { type: 'string', pattern: '^[1-9][0-9]{0,2}$' }, isActive: bool,
  },
  additionalProperties: false,
});
const expandQuery = compile<{ expand?: string }>({ type: 'object', properties: { expand: { type: 'string' } } });

const name = { type: 'string', minLength: 1, maxLength: 200 };
const productBody = compile<{ name: string; description?: string }>({
  type: 'object', properties: { name, description: { type: 'string', maxLength: 2000 } }, required: ['name'], additionalProperties: false,
});
const productUpdateBody = compile<{ name?: string; description?: string }>({
  type: 'object', properties: { name, description: { type: 'string', maxLength: 2000 } }, additionalProperties: false, minProperties: 1,
});
const planProps = {
  productId: { type: 'string', format: 'uuid' }, name, trialPeriodDays: { type: ['integer', 'null'], minimum: 0, maximum: 730 },
  tierTagId: { type: ['string', 'null'], format: 'uuid' }, isActive: { type: 'boolean' },
};
const planBody = compile<{ productId: string; name: string; trialPeriodDays?: number | null; tierTagId?: string | null; isActive?: boolean }>({
  type: 'object', properties: planProps, required: ['productId', 'name'], additionalProperties: false,
});
const planUpdateBody = compile<{ name?: string; trialPeriodDays?: number | null; tierTagId?: string | null; isActive?: boolean }>({
  type: 'object', properties: { name: planProps.name, trialPeriodDays: planProps.trialPeriodDays, tierTagId: planProps.tierTagId, isActive: planProps.isActive }, additionalProperties: false, minProperties: 1,
});
const amount = { type: ['number', 'null'], minimum: 0 };
const planSaveBody = compile<Parameters<CatalogAdmin['savePlan']>[1]>({
  type: 'object',
  properties: {
    ...planProps, id: { type: 'string', format: 'uuid' },
    entitlements: { type: 'array', maxItems: 200, items: { type: 'string', minLength: 1, maxLength: 100 } },
    lineItems: {
      type: 'array', maxItems: 50,
      items: {
        type: 'object', additionalProperties: false, required: ['name', 'priceType', 'prices'],
        properties: {
          name, slug: { type: 'string', maxLength: 100 }, nickname: { type: 'string', maxLength: 200 }, priceType: { enum: ['metered', 'per_seat', 'flat_rate'] },
          intervalType: { enum: ['one_off', 'recurring'] }, billingScheme: { enum: ['fixed', 'per_unit', 'tiered', 'flat_rate'] },
          tiersMode: { enum: ['graduated', 'volume', null] }, minQuantity: { type: 'integer', minimum: 0 }, maxQuantity: { type: 'integer', minimum: 0 },
          allowChangingQuantity: { type: 'boolean' }, unitLabel: { type: ['string', 'null'], maxLength: 50 },
          prices: {
            type: 'array', maxItems: 20,
            items: {
              type: 'object', additionalProperties: false, required: ['currencyOptions'],
              properties: {
                interval: { enum: [...INTERVALS, null] }, intervalCount: { type: ['integer', 'null'], minimum: 1 }, paymentPriceId: { type: 'string', maxLength: 200 },
                currencyOptions: {
                  type: 'array', maxItems: 50,
                  items: {
                    type: 'object', additionalProperties: false, required: ['currency'],
                    properties: {
                      currency: { type: 'string', pattern: '^[A-Za-z]{3}$' }, unitAmount: amount, isDefault: { type: 'boolean' },
                      tiers: { type: 'array', maxItems: 50, items: { type: 'object', additionalProperties: false, required: ['upTo', 'unitAmount'], properties: { upTo: { type: 'string', pattern: '^([0-9]+|inf)$' }, flatAmount: amount, unitAmount: { type: 'number', minimum: 0 } } } },
                    },
                  },
                },
              },
            },
          },
        },
      },
    },
  },
  required: ['productId', 'name'],
  additionalProperties: false,
});

/** `expand` for a catalog list or detail: only the named values. */
function parseExpand(raw: string | undefined, allowed: readonly string[]): Set<string> {
  const values = (raw ?? '').split(',').map((s) => s.trim()).filter(Boolean);
  const unknown = values.filter((v) => !allowed.includes(v));
  if (unknown.length) {
    throw new DomainError(ErrorCodes.VALIDATION_FAILED, `expand: unknown value(s) ${unknown.join(', ')}; allowed: ${allowed.join(', ')}`, unknown.map((u) => ({ property: 'expand', error: `unknown value ${u}` })));
  }
  return new Set(values);
}

const listQuery = (q: Record<string, string | undefined>) => ({
  limit: q.limit ? Number(q.limit) : 25,
  after: q.after,
  before: q.before,
  search: q.search,
  includeArchived: q.includeArchived === 'true',
});

/** The catalog generation (`/api`): products and plans with their pricing, bearer-authenticated. */
export function createCatalogRouter(container: Container): express.Router {
  const apiKeys = container.get<ApiKeyService>(TOKENS.ApiKeys);
  const admin = container.get<CatalogAdmin>(TOKENS.CatalogAdmin);
  const idempotency = container.get<IdempotencyService>(TOKENS.Idempotency);
  const r = express.Router();
  r.use(authenticate(apiKeys, 'bearer'));

  /** Sends the answer; POST and PUT honour `idempotency-key` (same request replays, another is 409). */
  const route = (resource: ScopeResource, access: 'read' | 'write', fn: (req: Request, tenant: Tenant) => Promise<Answer>): RequestHandler[] => [
    requireScope(resource, access),
    async (req: Request, res: Response) => {
      const tenant = tenantOf(res);
      const key = req.header('idempotency-key');
      const idem = key !== undefined && (req.method === 'POST' || req.method === 'PUT');
      const fingerprint = idem ? requestFingerprint(req.method, req.originalUrl, req.body) : '';
      if (idem) {
        const earlier = await idempotency.lookup(tenant.organisationId, key, fingerprint);
        if (earlier) {
          res.setHeader('idempotent-replayed', 'true');
          return earlier.body === undefined ? sendEmpty(res, earlier.status) : sendJson(res, earlier.status, earlier.body);
        }
      }
      const answer = await fn(req, tenant);
      if (idem) await idempotency.remember(tenant.organisationId, key, fingerprint, answer.status, answer.body);
      if (answer.body === undefined) sendEmpty(res, answer.status);
      else sendJson(res, answer.status, answer.body);
    },
  ];

  const productView = async (tenant: Tenant, p: Product, expand: Set<string>) => {
    const plans = expand.has('plans') ? (await admin.plansOf(tenant, [p.id])).get(p.id) ?? [] : undefined;
    return {
      ...catalogProduct(p),
      ...(plans ? { plans: nestedList(plans, `/api/plans?productId=${p.id}`, catalogPlan) } : {}),
      ...(expand.has('settings') ? { settings: catalogSettings(p) } : {}),
    };
  };

  r.get('/products', ...route('products', 'read', async (req, tenant) => {
    const q = productListQuery(req.query);
    const expand = parseExpand(q.expand, ['plans', 'settings']);
    const page = await admin.listProducts(tenant, listQuery(q));
    const plans = expand.has('plans') ? await admin.plansOf(tenant, page.items.map((p) => p.id)) : undefined;
    return {
      status: 200,
      body: listEnvelope(page, (p) => ({
        ...catalogProduct(p),
        ...(plans ? { plans: nestedList(plans.get(p.id) ?? [], `/api/plans?productId=${p.id}`, catalogPlan) } : {}),
        ...(expand.has('settings') ? { settings: catalogSettings(p) } : {}),
      })),
    };
  }));
  r.post('/products', ...route('products', 'write', async (req, tenant) => ({ status: 201, body: objectEnvelope(catalogProduct(await admin.createProduct(tenant, productBody(req.body)))) })));
  r.get('/products/:id', ...route('products', 'read', async (req, tenant) => {
    const expand = parseExpand(expandQuery(req.query).expand, ['plans', 'settings']);
    return { status: 200, body: objectEnvelope(await productView(tenant, await admin.getProduct(tenant, idParam(req.params).id), expand)) };
  }));
  r.put('/products/:id', ...route('products', 'write', async (req, tenant) => ({
    status: 200, body: objectEnvelope(catalogProduct(await admin.updateProduct(tenant, idParam(req.params).id, productUpdateBody(req.body)))),
  })));
  r.delete('/products/:id', ...route('products', 'write', async (req, tenant) => {
    await admin.deleteProduct(tenant, idParam(req.params).id);
    return { status: 204 };
  }));
  r.post('/products/:id/archive', ...route('products', 'write', async (req, tenant) => {
    await admin.archiveProduct(tenant, idParam(req.params).id);
    return { status: 204 };
  }));

  const PLAN_LIST_EXPAND = ['entitlements', 'lineItems', 'product', 'tierTag'] as const;
  const planView = (p: Plan, product: Product | undefined, expand: Set<string>) => ({
    ...catalogPlan(p),
    ...(expand.has('product') && product
      ? { product: { id: product.id, organisation: product.organisationId, name: product.name, isActive: !product.archivedAt, archivedAt: product.archivedAt?.toISOString() ?? null, createdAt: product.createdAt.toISOString(), updatedAt: product.updatedAt.toISOString() } }
      : {}),
    ...(expand.has('tierTag') ? { tierTag: tierTagView(p.tierTag) } : {}),
    ...(expand.has('entitlements') && product
      ? { entitlements: nestedList(product.capabilities.filter((c) => p.capabilityIds.includes(c.id)), `/api/plans/${p.id}/entitlements`, entitlementView(p.organisationId)) }
      : {}),
    ...(expand.has('lineItems') ? { lineItems: nestedList(p.lineItems, `/api/plans/${p.id}/line-items`, lineItemView(p.organisationId, p.id)) } : {}),
  });
  const planDetailView = (d: PlanDetail, expand: Set<string>) => ({
    ...planView(d.plan, d.product, new Set([...expand].filter((e) => e !== 'product'))),
    ...(expand.has('product') ? { product: { id: d.product.id, name: d.product.name, archivedAt: d.product.archivedAt?.toISOString() ?? null } } : {}),
    ...(expand.has('subscriptionPlans')
      ? { subscriptionPlans: nestedList(d.subscriptions, `/api/plans/${d.plan.id}/subscription-plans`, (s) => subscriptionPlanView(s, d.customers.get(s.customerId))) }
      : {}),
  });

  r.get('/plans', ...route('plans', 'read', async (req, tenant) => {
    const q = planListQuery(req.query);
    const expand = parseExpand(q.expand, PLAN_LIST_EXPAND);
    const { page, filterOptions } = await admin.listPlans(tenant, {
      ...listQuery(q), productId: q.productId, currency: q.currency, interval: q.interval as Plan['interval'] | undefined,
      intervalCount: q.intervalCount ? Number(q.intervalCount) : undefined, isActive: q.isActive === undefined ? undefined : q.isActive === 'true',
    });
    const products = expand.has('product') || expand.has('entitlements') ? await admin.productsById(tenant, page.items.map((p) => p.productId)) : new Map();
    return { status: 200, body: { ...listEnvelope(page, (p) => planView(p, products.get(p.productId), expand)), filterOptions: filterOptionsView(filterOptions) } };
  }));
  r.post('/plans', ...route('plans', 'write', async (req, tenant) => ({ status: 201, body: objectEnvelope(catalogPlan(await admin.createPlan(tenant, planBody(req.body)))) })));
  r.post('/plans/save', ...route('plans', 'write', async (req, tenant) => {
    const draft = planSaveBody(req.body);
    const saved = await admin.savePlan(tenant, draft);
    const detail = await admin.getPlan(tenant, saved.plan.id);
    return { status: saved.created ? 201 : 200, body: objectEnvelope(planDetailView(detail, new Set(['entitlements', 'lineItems', 'product', 'tierTag']))) };
  }));
  r.get('/plans/:id', ...route('plans', 'read', async (req, tenant) => {
    const expand = parseExpand(expandQuery(req.query).expand, [...PLAN_LIST_EXPAND, 'subscriptionPlans']);
    return { status: 200, body: objectEnvelope(planDetailView(await admin.getPlan(tenant, idParam(req.params).id), expand)) };
  }));
  r.put('/plans/:id', ...route('plans', 'write', async (req, tenant) => ({
    status: 200, body: objectEnvelope(catalogPlan(await admin.updatePlan(tenant, idParam(req.params).id, planUpdateBody(req.body)))),
  })));
  r.delete('/plans/:id', ...route('plans', 'write', async (req, tenant) => {
    await admin.deletePlan(tenant, idParam(req.params).id);
    return { status: 204 };
  }));
  r.post('/plans/:id/archive', ...route('plans', 'write', async (req, tenant) => {
    await admin.archivePlan(tenant, idParam(req.params).id);
    return { status: 204 };
  }));
  return r;
}

const notFound = catalogErrorBody({ status: 404, message: 'no such catalog operation', details: [] });

/** The catalog router with its 404 and error shape, for mounting under `/api`. */
export function createCatalogMount(container: Container): express.Router {
  const logger = container.get<Logger>(TOKENS.Logger);
  const r = express.Router();
  r.use(createCatalogRouter(container));
  r.use((_req, res) => sendJson(res, 404, notFound));
  r.use(errorHandler(LEGACY_V1_STATUS, catalogErrorBody, logger));
  return r;
}

/** The catalog app alone on its own port, under `/api`. */
export function createCatalogApp(container: Container): Express {
  return wrapApp(container, (app) => {
    app.use('/api', createCatalogMount(container));
    app.use((_req, res) => sendJson(res, 404, notFound));
  });
}
