import type { Core } from '@tollgate/core';
import {
  adHocLicenseRequestSchema,
  arrayOf,
  checkRoute,
  legacyPlan,
  legacyPlanSchema,
  legacyProduct,
  legacyProductSchema,
  licenseSchema,
  licenseView,
  mapBatches,
  route,
  type Route,
} from '@tollgate/http';
import { legacyFeatureWithOptionsSchema, legacyPlanFeatureSchema } from './schemas';
import { legacyFeatureWithOptions, legacyPlanFeature } from './views';

/** What the legacy generation needs of the core. */
export type LegacyServices = Pick<Core, 'apiKeys' | 'queries' | 'licenses' | 'checks'>;

const licenseRequest = adHocLicenseRequestSchema;
type LicenseRequest = { planUuid: string; member: string; granteeId: string | null };

/** The legacy generation: seven operations over products, plans, features and licenses, each declared once. */
export function legacyRoutes({ queries, licenses, checks }: LegacyServices): Route[] {
  return [
    route({
      method: 'get',
      path: '/products',
      summary: "Products of the key's organisation",
      scope: ['products', 'read'],
      response: { status: 200, schema: arrayOf(legacyProductSchema) },
      list: true,
      handle: ({ tenant }) => ({ status: 200, stream: mapBatches(queries.productPages(tenant), legacyProduct) }),
    }),
    route({
      method: 'get',
      path: '/products/:uuid/plans',
      summary: 'Plans of a product',
      scope: ['plans', 'read'],
      response: { status: 200, schema: arrayOf(legacyPlanSchema) },
      handle: async ({ tenant, params }) => ({ status: 200, body: (await queries.listPlans(tenant, params.uuid)).map(legacyPlan) }),
    }),
    route({
      method: 'get',
      path: '/products/:uuid/features',
      summary: 'Features of a product, with enum options',
      scope: ['products', 'read'],
      response: { status: 200, schema: arrayOf(legacyFeatureWithOptionsSchema) },
      handle: async ({ tenant, params }) => ({
        status: 200,
        body: (await queries.productFeatures(tenant, params.uuid)).map(legacyFeatureWithOptions),
      }),
    }),
    route({
      method: 'get',
      path: '/plans/:uuid/features',
      summary: 'Feature values of a plan',
      scope: ['plans', 'read'],
      response: { status: 200, schema: arrayOf(legacyPlanFeatureSchema) },
      handle: async ({ tenant, params }) => ({
        status: 200,
        body: (await queries.planFeatures(tenant, params.uuid)).map((v) => legacyPlanFeature(params.uuid, v)),
      }),
    }),
    checkRoute(checks),
    route<Record<string, never>, LicenseRequest | LicenseRequest[]>({
      method: 'post',
      path: '/licenses',
      summary: 'Create ad hoc license(s): free or evaluation plans',
      scope: ['licenses', 'write'],
      body: { anyOf: [licenseRequest, { type: 'array', minItems: 1, maxItems: 100, items: licenseRequest }] },
      response: { status: 201, schema: { anyOf: [licenseSchema, arrayOf(licenseSchema)] } },
      async handle({ tenant, body }) {
        const created = await licenses.createAdHoc(tenant, Array.isArray(body) ? body : [body]);
        const caps = await licenses.capabilitiesOf(created);
        const views = created.map((l) => licenseView(l, caps.get(l.planId) ?? []));
        return { status: 201, body: Array.isArray(body) ? views : views[0] };
      },
    }),
  ];
}
