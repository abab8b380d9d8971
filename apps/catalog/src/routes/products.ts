import type { Core, ProductUpdate } from '@tollgate/core';
import { noContent, parseExpandList, querySchema, resource, route, typed, type Route } from '@tollgate/http';
import { listOf, nestedListOf, object, objectOf, planSchema, productProps, productSchema, settingsSchema } from '../response-schemas';
import { expandQuery, listProps, name } from '../schemas';
import { catalogProduct, listEnvelope, objectEnvelope, pageQueryOf, productView } from '../views';

const url = { type: ['string', 'null'], maxLength: 2048 };
/** A product's checkout settings (each optional: what is given is changed). */
const productSettings = {
  type: 'object',
  properties: {
    successUrl: url,
    cancelUrl: url,
    allowPromoCodes: { type: 'boolean' },
    automaticTax: { type: 'boolean' },
    collectBillingAddress: { type: 'boolean' },
    collectShippingAddress: { type: 'boolean' },
    cardPrefillPreference: { enum: ['none', 'always', 'choice'] },
    pastDueEntitlements: { type: 'boolean' },
  },
  additionalProperties: false,
};
export const productBody = typed<{ name: string; description?: string; isActive?: boolean }>({
  type: 'object',
  properties: { name, description: { type: 'string', maxLength: 2000 }, isActive: { type: 'boolean' } },
  required: ['name'],
  additionalProperties: false,
});
export const productUpdateBody = typed<ProductUpdate>({
  type: 'object',
  properties: { name, description: { type: 'string', maxLength: 2000 }, isActive: { type: 'boolean' }, settings: productSettings },
  additionalProperties: false,
  minProperties: 1,
});
export const productListQuery = { ...querySchema(listProps), additionalProperties: false };

export const PRODUCT_EXPAND = ['plans', 'settings'] as const;

/** A product as a list or a detail shows it: `plans` and `settings` when expanded. */
const expandedProductSchema = object(productProps, { plans: nestedListOf(planSchema), settings: settingsSchema });

/** The list filters every catalog list takes: a page, `search` and `includeArchived`. */
export const listQuery = (q: { limit?: string; after?: string; before?: string; search?: string; includeArchived?: string }) => ({
  ...pageQueryOf(q),
  search: q.search,
  includeArchived: q.includeArchived === 'true',
});

export const expandOf = (raw: string | undefined, allowed: readonly string[]) => new Set(parseExpandList(raw, allowed));

export function productRoutes({ products: productAdmin, plans: planAdmin }: Pick<Core, 'products' | 'plans'>): Route[] {
  const plansOf = (tenant: Parameters<typeof planAdmin.plansOf>[0], ids: string[], expand: Set<string>) =>
    expand.has('plans') ? planAdmin.plansOf(tenant, ids) : Promise.resolve(undefined);
  return resource({ name: 'products', description: "The products of the key's organisation and mode" }, [
    route({
      method: 'get',
      path: '/api/products',
      operationId: 'listProducts',
      summary: 'List products',
      description: 'A page of products (oldest first), by name search; `expand=plans,settings` brings their plans and checkout settings.',
      scope: ['products', 'read'],
      query: productListQuery,
      response: { status: 200, schema: listOf(expandedProductSchema) },
      async handle({ tenant, query }) {
        const expand = expandOf(query.expand, PRODUCT_EXPAND);
        const page = await productAdmin.listProducts(tenant, listQuery(query));
        const plans = await plansOf(
          tenant,
          page.items.map((p) => p.id),
          expand,
        );
        return { status: 200, body: listEnvelope(page, (p) => productView(p, plans, expand)) };
      },
    }),
    route({
      method: 'post',
      path: '/api/products',
      operationId: 'createProduct',
      summary: 'Create a product',
      description: 'A new product in the key’s organisation and mode.',
      scope: ['products', 'write'],
      body: productBody,
      response: { status: 201, schema: objectOf(productSchema) },
      handle: async ({ tenant, body }) => ({
        status: 201,
        body: objectEnvelope(catalogProduct(await productAdmin.createProduct(tenant, body))),
      }),
    }),
    route({
      method: 'get',
      path: '/api/products/:id',
      operationId: 'getProduct',
      summary: 'Product detail',
      description: 'One product; `expand=plans,settings` brings its plans and checkout settings.',
      scope: ['products', 'read'],
      query: expandQuery,
      response: { status: 200, schema: objectOf(expandedProductSchema) },
      async handle({ tenant, params, query }) {
        const expand = expandOf(query.expand, PRODUCT_EXPAND);
        const product = await productAdmin.getProduct(tenant, params.id);
        return { status: 200, body: objectEnvelope(productView(product, await plansOf(tenant, [product.id], expand), expand)) };
      },
    }),
    route({
      method: 'put',
      path: '/api/products/:id',
      operationId: 'updateProduct',
      summary: 'Update a product',
      description: 'Changes what is given: name, description, active flag, checkout settings.',
      scope: ['products', 'write'],
      body: productUpdateBody,
      response: { status: 200, schema: objectOf(productSchema) },
      handle: async ({ tenant, params, body }) => ({
        status: 200,
        body: objectEnvelope(catalogProduct(await productAdmin.updateProduct(tenant, params.id, body))),
      }),
    }),
    route({
      method: 'delete',
      path: '/api/products/:id',
      operationId: 'deleteProduct',
      summary: 'Delete a product',
      description: 'Removes a product that never had a subscription (409 otherwise: archive it instead).',
      scope: ['products', 'write'],
      response: { status: 204 },
      async handle({ tenant, params }) {
        await productAdmin.deleteProduct(tenant, params.id);
        return noContent;
      },
    }),
    route({
      method: 'post',
      path: '/api/products/:id/archive',
      operationId: 'archiveProduct',
      summary: 'Archive a product',
      description: 'Stops selling the product; existing subscriptions and licenses go on.',
      scope: ['products', 'write'],
      response: { status: 204 },
      async handle({ tenant, params }) {
        await productAdmin.archiveProduct(tenant, params.id);
        return noContent;
      },
    }),
  ]);
}
