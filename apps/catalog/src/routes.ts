import {
  invalid,
  type CatalogAdmin,
  type CatalogFile,
  type Core,
  type Interval,
  type Plan,
  type PlanDetail,
  type PlanInput,
  type Product,
  type ProductUpdate,
  type Tenant,
} from '@tollgate/core';
import YAML from 'yaml';
import { parseExpandList, route, signingKeyRoute, type Route } from '@tollgate/http';
import {
  expandQuery,
  planBody,
  planListQuery,
  planSaveBody,
  planUpdateBody,
  pageQuery,
  productBody,
  tierTagBody,
  productListQuery,
  productUpdateBody,
} from './schemas';
import {
  catalogPlan,
  catalogProduct,
  catalogSettings,
  entitlementView,
  filterOptionsView,
  lineItemView,
  listEnvelope,
  nestedList,
  objectEnvelope,
  pageQueryOf,
  subscriptionPlanView,
  tierTagView,
} from './views';
import { webhookRoutes } from './webhooks';
import { balanceRoutes } from './routes/balances';
import { creditRoutes } from './routes/credits';
import { entitlementRoutes } from './routes/entitlements';
import { meterRoutes } from './routes/meters';
import { usageRoutes } from './routes/usage';

/** What the catalog generation needs of the core. */
export type CatalogServices = Pick<
  Core,
  'apiKeys' | 'admin' | 'idempotency' | 'signing' | 'webhooks' | 'importer' | 'exporter' | 'usage' | 'entitlements'
>;

type Q = Record<string, string | undefined>;
const expandOf = (raw: string | undefined, allowed: readonly string[]) => new Set(parseExpandList(raw, allowed));

const listQuery = (q: Q) => ({
  ...pageQueryOf(q),
  search: q.search,
  includeArchived: q.includeArchived === 'true',
});

const PLAN_LIST_EXPAND = ['entitlements', 'lineItems', 'product', 'tierTag'] as const;
const PRODUCT_EXPAND = ['plans', 'settings'] as const;

/** The catalog generation (`/api`): products and plans with their pricing, each operation declared once. */
export function catalogRoutes({ admin, signing, webhooks, importer, exporter, usage, entitlements }: CatalogServices): Route[] {
  const productView = (p: Product, plans: Map<string, Plan[]> | undefined, expand: Set<string>) => ({
    ...catalogProduct(p),
    ...(plans ? { plans: nestedList(plans.get(p.id) ?? [], `/api/plans?productId=${p.id}`, catalogPlan) } : {}),
    ...(expand.has('settings') ? { settings: catalogSettings(p) } : {}),
  });
  const plansOf = (tenant: Tenant, ids: string[], expand: Set<string>) =>
    expand.has('plans') ? admin.plansOf(tenant, ids) : Promise.resolve(undefined);

  const planView = (p: Plan, product: Product | undefined, expand: Set<string>) => ({
    ...catalogPlan(p),
    ...(expand.has('product') && product
      ? {
          product: {
            id: product.id,
            organisation: product.organisationId,
            name: product.name,
            isActive: !product.archivedAt,
            archivedAt: product.archivedAt?.toISOString() ?? null,
            createdAt: product.createdAt.toISOString(),
            updatedAt: product.updatedAt.toISOString(),
          },
        }
      : {}),
    ...(expand.has('tierTag') ? { tierTag: tierTagView(p.tierTag) } : {}),
    ...(expand.has('entitlements') && product
      ? {
          entitlements: nestedList(
            product.capabilities.filter((c) => p.capabilityIds.includes(c.id)),
            `/api/plans/${p.id}/entitlements`,
            entitlementView(p.organisationId),
          ),
        }
      : {}),
    ...(expand.has('lineItems')
      ? { lineItems: nestedList(p.lineItems, `/api/plans/${p.id}/line-items`, lineItemView(p.organisationId, p.id)) }
      : {}),
  });
  const planDetailView = (d: PlanDetail, expand: Set<string>) => ({
    ...planView(d.plan, d.product, new Set([...expand].filter((e) => e !== 'product'))),
    ...(expand.has('product')
      ? { product: { id: d.product.id, name: d.product.name, archivedAt: d.product.archivedAt?.toISOString() ?? null } }
      : {}),
    ...(expand.has('subscriptionPlans')
      ? {
          subscriptionPlans: nestedList(d.subscriptions, `/api/plans/${d.plan.id}/subscription-plans`, (s) =>
            subscriptionPlanView(s, d.customers.get(s.customerId)),
          ),
        }
      : {}),
  });

  return [
    signingKeyRoute('/api/signing-keys', signing),
    route<Q>({
      method: 'get',
      path: '/api/products',
      summary: 'List products',
      scope: ['products', 'read'],
      query: productListQuery,
      response: { status: 200 },
      async handle({ tenant, query }) {
        const expand = expandOf(query.expand, PRODUCT_EXPAND);
        const page = await admin.listProducts(tenant, listQuery(query));
        const plans = await plansOf(
          tenant,
          page.items.map((p) => p.id),
          expand,
        );
        return { status: 200, body: listEnvelope(page, (p) => productView(p, plans, expand)) };
      },
    }),
    route<Q, { name: string; description?: string; isActive?: boolean }>({
      method: 'post',
      path: '/api/products',
      summary: 'Create a product',
      scope: ['products', 'write'],
      body: productBody,
      response: { status: 201 },
      handle: async ({ tenant, body }) => ({ status: 201, body: objectEnvelope(catalogProduct(await admin.createProduct(tenant, body))) }),
    }),
    route<Q>({
      method: 'get',
      path: '/api/products/:id',
      summary: 'Product detail',
      scope: ['products', 'read'],
      query: expandQuery,
      response: { status: 200 },
      async handle({ tenant, params, query }) {
        const expand = expandOf(query.expand, PRODUCT_EXPAND);
        const product = await admin.getProduct(tenant, params.id);
        return { status: 200, body: objectEnvelope(productView(product, await plansOf(tenant, [product.id], expand), expand)) };
      },
    }),
    route<Q, ProductUpdate>({
      method: 'put',
      path: '/api/products/:id',
      summary: 'Update a product',
      scope: ['products', 'write'],
      body: productUpdateBody,
      response: { status: 200 },
      handle: async ({ tenant, params, body }) => ({
        status: 200,
        body: objectEnvelope(catalogProduct(await admin.updateProduct(tenant, params.id, body))),
      }),
    }),
    route({
      method: 'delete',
      path: '/api/products/:id',
      summary: 'Delete a product',
      scope: ['products', 'write'],
      response: { status: 204 },
      async handle({ tenant, params }) {
        await admin.deleteProduct(tenant, params.id);
        return { status: 204 };
      },
    }),
    route({
      method: 'post',
      path: '/api/products/:id/archive',
      summary: 'Archive a product',
      scope: ['products', 'write'],
      response: { status: 204 },
      async handle({ tenant, params }) {
        await admin.archiveProduct(tenant, params.id);
        return { status: 204 };
      },
    }),
    route<Q>({
      method: 'get',
      path: '/api/plans',
      summary: 'List plans',
      scope: ['plans', 'read'],
      query: planListQuery,
      response: { status: 200 },
      async handle({ tenant, query: q }) {
        const expand = expandOf(q.expand, PLAN_LIST_EXPAND);
        const { page, filterOptions } = await admin.listPlans(tenant, {
          ...listQuery(q),
          productId: q.productId,
          currency: q.currency,
          interval: q.interval as Interval | undefined,
          intervalCount: q.intervalCount ? Number(q.intervalCount) : undefined,
          isActive: q.isActive === undefined ? undefined : q.isActive === 'true',
        });
        const products =
          expand.has('product') || expand.has('entitlements')
            ? await admin.productsById(
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
    route<Q, PlanInput>({
      method: 'post',
      path: '/api/plans',
      summary: 'Create a plan',
      scope: ['plans', 'write'],
      body: planBody,
      response: { status: 201 },
      handle: async ({ tenant, body }) => ({ status: 201, body: objectEnvelope(catalogPlan(await admin.createPlan(tenant, body))) }),
    }),
    route<Q, Parameters<CatalogAdmin['savePlan']>[1]>({
      method: 'post',
      path: '/api/plans/save',
      summary: 'Save a plan with entitlements and nested pricing',
      scope: ['plans', 'write'],
      body: planSaveBody,
      response: { status: 201, description: 'created (200: updated)' },
      async handle({ tenant, body }) {
        const saved = await admin.savePlan(tenant, body);
        const detail = await admin.getPlan(tenant, saved.plan.id);
        return { status: saved.created ? 201 : 200, body: objectEnvelope(planDetailView(detail, new Set(PLAN_LIST_EXPAND))) };
      },
    }),
    route<Q>({
      method: 'get',
      path: '/api/plans/:id',
      summary: 'Plan detail',
      scope: ['plans', 'read'],
      query: expandQuery,
      response: { status: 200 },
      async handle({ tenant, params, query }) {
        const expand = expandOf(query.expand, [...PLAN_LIST_EXPAND, 'subscriptionPlans']);
        return { status: 200, body: objectEnvelope(planDetailView(await admin.getPlan(tenant, params.id), expand)) };
      },
    }),
    route<Q, Partial<PlanInput>>({
      method: 'put',
      path: '/api/plans/:id',
      summary: 'Update a plan',
      scope: ['plans', 'write'],
      body: planUpdateBody,
      response: { status: 200 },
      handle: async ({ tenant, params, body }) => ({
        status: 200,
        body: objectEnvelope(catalogPlan(await admin.updatePlan(tenant, params.id, body))),
      }),
    }),
    route({
      method: 'delete',
      path: '/api/plans/:id',
      summary: 'Delete a plan',
      scope: ['plans', 'write'],
      response: { status: 204 },
      async handle({ tenant, params }) {
        await admin.deletePlan(tenant, params.id);
        return { status: 204 };
      },
    }),
    route({
      method: 'post',
      path: '/api/plans/:id/archive',
      summary: 'Archive a plan',
      scope: ['plans', 'write'],
      response: { status: 204 },
      async handle({ tenant, params }) {
        await admin.archivePlan(tenant, params.id);
        return { status: 204 };
      },
    }),
    route<Q>({
      method: 'get',
      path: '/api/tier-tags',
      summary: 'List tier tags (of the organisation, both modes)',
      scope: ['plans', 'read'],
      query: pageQuery,
      response: { status: 200 },
      handle: async ({ tenant, query }) => ({
        status: 200,
        body: listEnvelope(await admin.listTierTags(tenant, pageQueryOf(query)), tierTagView),
      }),
    }),
    route<Q, { name: string }>({
      method: 'post',
      path: '/api/tier-tags',
      summary: 'Create a tier tag (409 when the name is taken)',
      scope: ['plans', 'write'],
      body: tierTagBody,
      response: { status: 201 },
      handle: async ({ tenant, body }) => ({
        status: 201,
        body: objectEnvelope(tierTagView(await admin.createTierTag(tenant, body.name))),
      }),
    }),
    route({
      method: 'get',
      path: '/api/products/export/:id',
      summary: 'Export a product as a catalog file (YAML, the format of `tollgate import`)',
      scope: ['products', 'read'],
      response: { status: 200, description: 'application/yaml' },
      handle: async ({ tenant, params }) => ({
        status: 200,
        text: { contentType: 'application/yaml; charset=utf-8', content: YAML.stringify(await exporter.exportProduct(tenant, params.id)) },
      }),
    }),
    route<Q, Partial<CatalogFile> & { file?: unknown }>({
      method: 'post',
      path: '/api/products/import',
      summary: 'Import a catalog file (JSON body, or multipart with a YAML or JSON `file`) into the key’s organisation and mode',
      scope: ['products', 'write'],
      body: { type: 'object' },
      upload: 'file',
      response: { status: 200, description: '{created, updated, unchanged, keys}' },
      async handle({ tenant, body }) {
        const file = typeof body.file === 'string' ? parseCatalogFile(body.file) : body;
        const result = await importer.applyFor(tenant, file as Partial<CatalogFile>);
        return {
          status: 200,
          body: objectEnvelope({ created: result.created, updated: result.updated, unchanged: result.unchanged, keys: result.keys }),
        };
      },
    }),
    ...webhookRoutes({ webhooks }),
    ...meterRoutes({ usage }),
    ...creditRoutes({ usage }),
    ...usageRoutes({ usage }),
    ...balanceRoutes({ usage }),
    ...entitlementRoutes({ entitlements }),
  ];
}

/** The text of an uploaded catalog file: YAML (JSON is YAML too). */
function parseCatalogFile(text: string): unknown {
  try {
    return YAML.parse(text);
  } catch (e) {
    return invalid('file', `is not valid YAML or JSON: ${(e as Error).message.split('\n')[0]}`);
  }
}
