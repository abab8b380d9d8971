import type { Core, EntitlementRecord } from '@tollgate/core';
import { noContent, querySchema, resource, route, typed, uuid, type Route } from '@tollgate/http';
import { entitlementSchema, listOf, objectOf } from '../response-schemas';
import { pageProps } from '../schemas';
import { entitlementView, listEnvelope, objectEnvelope, pageQueryOf } from '../views';

/**
 * Entitlements as records (published #23, #24, #26-28): the capabilities of the tenant's products.
 * The check (#25) is its own module (`entitlements.ts`); both carry the `entitlements` tag.
 */

// `productId` is Tollgate's: entitlements belong to a product here (published bodies are `{name}`).
const createBody = typed<{ name: string; productId?: string }>({
  type: 'object',
  additionalProperties: false,
  required: ['name'],
  properties: { name: { type: 'string', minLength: 1, maxLength: 100, pattern: '^[a-z_]+$' }, productId: uuid },
});
// As published: an update's name has neither the pattern nor a minimum length of a new one's.
const updateBody = typed<{ name?: string }>({
  type: 'object',
  additionalProperties: false,
  properties: { name: { type: 'string', maxLength: 100 } },
});
const view = (e: EntitlementRecord) => entitlementView(e.organisationId)(e.capability);

export function entitlementRecordRoutes({ entitlementAdmin: admin }: Pick<Core, 'entitlementAdmin'>): Route[] {
  return resource({ name: 'entitlements', description: 'Entitlements: what plans grant, and the signed check of a grantee' }, [
    route({
      method: 'get',
      path: '/api/entitlements',
      operationId: 'listEntitlements',
      summary: 'List entitlements',
      description:
        "A page of the entitlements of the key's products, in creation order; `planId` gives a plan's, `search` matches part of the name.",
      scope: ['plans', 'read'],
      query: { ...querySchema({ ...pageProps, planId: uuid, search: { type: 'string', maxLength: 200 } }), additionalProperties: false },
      list: true,
      response: { status: 200, schema: listOf(entitlementSchema) },
      handle: async ({ tenant, query }) => ({
        status: 200,
        body: listEnvelope(await admin.list(tenant, { ...pageQueryOf(query), planId: query.planId, search: query.search }), view),
      }),
    }),
    route({
      method: 'post',
      path: '/api/entitlements',
      operationId: 'createEntitlement',
      summary: 'Create an entitlement',
      description:
        "A new entitlement (lower-case letters and underscores) of the product `productId`, or of the organisation's only product in this mode (with several and no `productId`: 400); a taken name is 409.",
      scope: ['plans', 'write'],
      body: createBody,
      response: { status: 201, schema: objectOf(entitlementSchema) },
      handle: async ({ tenant, body }) => ({ status: 201, body: objectEnvelope(view(await admin.create(tenant, body))) }),
    }),
    route({
      method: 'get',
      path: '/api/entitlements/:id',
      operationId: 'retrieveEntitlement',
      summary: 'Retrieve an entitlement',
      description: 'One entitlement.',
      scope: ['plans', 'read'],
      response: { status: 200, schema: objectOf(entitlementSchema) },
      handle: async ({ tenant, params }) => ({ status: 200, body: objectEnvelope(view(await admin.get(tenant, params.id))) }),
    }),
    route({
      method: 'put',
      path: '/api/entitlements/:id',
      operationId: 'updateEntitlement',
      summary: 'Rename an entitlement',
      description: 'Renames the entitlement (a name another entitlement of its product has: 409); the plans that grant it keep it.',
      scope: ['plans', 'write'],
      body: updateBody,
      response: { status: 204 },
      async handle({ tenant, params, body }) {
        await admin.rename(tenant, params.id, body.name);
        return noContent;
      },
    }),
    route({
      method: 'delete',
      path: '/api/entitlements/:id',
      operationId: 'deleteEntitlement',
      summary: 'Delete an entitlement',
      description: 'Removes the entitlement from its product and from every plan that grants it: checks stop answering it.',
      scope: ['plans', 'write'],
      response: { status: 204 },
      async handle({ tenant, params }) {
        await admin.delete(tenant, params.id);
        return noContent;
      },
    }),
  ]);
}
