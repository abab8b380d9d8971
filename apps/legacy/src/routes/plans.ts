import type { Core } from '@tollgate/core';
import { arrayOf, enumOptionSchema, legacyFeatureSchema, object, planFeatureProps, resource, route, type Route } from '@tollgate/http';
import { legacyPlanFeature } from '../views';

export const legacyPlanFeatureSchema = object({
  ...planFeatureProps,
  feature: legacyFeatureSchema,
  enumValue: { anyOf: [enumOptionSchema, { type: 'null' }] },
});

/** What a plan gives: its feature values. */
export const planRoutes = ({ queries }: Pick<Core, 'queries'>): Route[] =>
  resource({ name: 'plans', description: 'Plans and the feature values they give' }, [
    route({
      method: 'get',
      path: '/plans/:uuid/features',
      operationId: 'listPlanFeatures',
      summary: 'Feature values of a plan',
      description: 'The value the plan gives each feature of its product, with the feature and (for an enum) the chosen option.',
      scope: ['plans', 'read'],
      response: { status: 200, schema: arrayOf(legacyPlanFeatureSchema) },
      handle: async ({ tenant, params }) => ({
        status: 200,
        body: (await queries.planFeatures(tenant, params.uuid)).map((v) => legacyPlanFeature(params.uuid, v)),
      }),
    }),
  ]);
