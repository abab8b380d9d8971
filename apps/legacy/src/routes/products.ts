import type { Core } from '@tollgate/core';
import {
  arrayOf,
  enumOptionSchema,
  featureProps,
  legacyPlan,
  legacyPlanSchema,
  legacyProduct,
  legacyProductSchema,
  mapBatches,
  object,
  resource,
  route,
  type Route,
} from '@tollgate/http';
import { legacyFeatureWithOptions } from '../views';

export const legacyFeatureWithOptionsSchema = object({ ...featureProps, featureEnumOptions: arrayOf(enumOptionSchema) });

/** Products of the key's organisation and mode, with their plans and features. */
export const productRoutes = ({ queries }: Pick<Core, 'queries'>): Route[] =>
  resource({ name: 'products', description: "The products of the key's organisation and mode, their plans and features" }, [
    route({
      method: 'get',
      path: '/products',
      operationId: 'listProducts',
      summary: "Products of the key's organisation",
      description: "Every product of the key's organisation and mode, streamed (a long list costs no more memory than a short one).",
      scope: ['products', 'read'],
      response: { status: 200, schema: arrayOf(legacyProductSchema) },
      list: true,
      handle: ({ tenant }) => ({ status: 200, stream: mapBatches(queries.productPages(tenant), legacyProduct) }),
    }),
    route({
      method: 'get',
      path: '/products/:uuid/plans',
      operationId: 'listProductPlans',
      summary: 'Plans of a product',
      description: 'Every plan of the product, archived ones included (their status says so).',
      scope: ['plans', 'read'],
      response: { status: 200, schema: arrayOf(legacyPlanSchema) },
      handle: async ({ tenant, params }) => ({ status: 200, body: (await queries.listPlans(tenant, params.uuid)).map(legacyPlan) }),
    }),
    route({
      method: 'get',
      path: '/products/:uuid/features',
      operationId: 'listProductFeatures',
      summary: 'Features of a product, with enum options',
      description: 'The features of the product; an enum feature lists the options its plans choose from.',
      scope: ['products', 'read'],
      response: { status: 200, schema: arrayOf(legacyFeatureWithOptionsSchema) },
      handle: async ({ tenant, params }) => ({
        status: 200,
        body: (await queries.productFeatures(tenant, params.uuid)).map(legacyFeatureWithOptions),
      }),
    }),
  ]);
