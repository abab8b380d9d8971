import type { Core } from '@tollgate/core';
import { noContent, querySchema, resource, route, str, typed, uuid, type Route } from '@tollgate/http';
import { granteeSchema, groupSchema, membershipSchema } from '../people-schemas';
import { granteeView, groupView, membershipView } from '../people-views';
import { listOf, nestedListOf, object, objectOf } from '../response-schemas';
import { pageProps } from '../schemas';
import { listEnvelope, nestedList, objectEnvelope, pageQueryOf } from '../views';
import { expandOf } from './products';

/** Grantees (published operations #33-37): who uses a product, by the vendor's `granteeId` (the licenses' and the check's). */

const granteeId = { type: 'string', minLength: 1, maxLength: 255 };
const createBody = typed<{ granteeId: string; name?: string }>({
  type: 'object',
  additionalProperties: false,
  required: ['granteeId'],
  properties: { granteeId, name: { type: 'string', maxLength: 255 } },
});
const updateBody = typed<{ granteeId: string; name?: string | null }>({
  type: 'object',
  additionalProperties: false,
  required: ['granteeId'],
  properties: { granteeId, name: { type: ['string', 'null'], maxLength: 255 } },
});
export const granteeDetailSchema = object(granteeSchema.properties, {
  memberships: nestedListOf(object({ ...membershipSchema.properties, group: groupSchema })),
});

export function granteeRoutes({ grantees }: Pick<Core, 'grantees'>): Route[] {
  return resource({ name: 'grantees', description: "Grantees: who uses a product, by the vendor's own identifier" }, [
    route({
      method: 'get',
      path: '/api/grantees',
      operationId: 'listGrantees',
      summary: 'List grantees',
      description: 'A page of grantees in creation order; `groupId` gives the members of a group.',
      scope: ['grantees', 'read'],
      query: { ...querySchema({ ...pageProps, groupId: uuid }), additionalProperties: false },
      list: true,
      response: { status: 200, schema: listOf(granteeSchema) },
      handle: async ({ tenant, query }) => ({
        status: 200,
        body: listEnvelope(await grantees.list(tenant, { ...pageQueryOf(query), groupId: query.groupId }), granteeView),
      }),
    }),
    route({
      method: 'post',
      path: '/api/grantees',
      operationId: 'createGrantee',
      summary: 'Create a grantee',
      description: 'A grantee with its `granteeId` (unique: 409 when taken) and a name. Answers 200, as published.',
      scope: ['grantees', 'write'],
      body: createBody,
      response: { status: 200, schema: objectOf(granteeSchema) },
      handle: async ({ tenant, body }) => ({ status: 200, body: objectEnvelope(granteeView(await grantees.create(tenant, body))) }),
    }),
    route({
      method: 'get',
      path: '/api/grantees/:id',
      operationId: 'retrieveGrantee',
      summary: 'Retrieve a grantee',
      description: "One grantee; `expand=memberships` brings the groups it is in (a subscription's group when it holds one of its seats).",
      scope: ['grantees', 'read'],
      query: { ...querySchema({ expand: str }), additionalProperties: false },
      response: { status: 200, schema: objectOf(granteeDetailSchema) },
      handle: async ({ tenant, params, query }) => {
        const { grantee, memberships } = await grantees.get(tenant, params.id);
        const expand = expandOf(query.expand, ['memberships']);
        return {
          status: 200,
          body: objectEnvelope({
            ...granteeView(grantee),
            ...(expand.has('memberships')
              ? {
                  memberships: nestedList(memberships, `/api/grantees/${grantee.id}?expand=memberships`, (m) => ({
                    ...membershipView(m.member),
                    group: groupView(m.group),
                  })),
                }
              : {}),
          }),
        };
      },
    }),
    route({
      method: 'put',
      path: '/api/grantees/:id',
      operationId: 'updateGrantee',
      summary: 'Update a grantee',
      description: "Renames the grantee; a new `granteeId` (400 when another grantee has it) takes the grantee's licenses along.",
      scope: ['grantees', 'write'],
      body: updateBody,
      response: { status: 204 },
      async handle({ tenant, params, body }) {
        await grantees.update(tenant, params.id, body);
        return noContent;
      },
    }),
    route({
      method: 'delete',
      path: '/api/grantees/:id',
      operationId: 'deleteGrantee',
      summary: 'Delete a grantee',
      description: 'Removes the grantee from its groups and frees the seats it held (its licenses answer nothing for it any more).',
      scope: ['grantees', 'write'],
      response: { status: 204 },
      async handle({ tenant, params }) {
        await grantees.delete(tenant, params.id);
        return noContent;
      },
    }),
  ]);
}
