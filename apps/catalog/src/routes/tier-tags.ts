import type { Core } from '@tollgate/core';
import { bodySchema, querySchema, resource, route, type Route } from '@tollgate/http';
import { listOf, objectOf, tierTagSchema } from '../response-schemas';
import { pageProps } from '../schemas';

const listQuery = { ...querySchema({ ...pageProps, search: { type: 'string', maxLength: 200 } }), additionalProperties: false };
import { listEnvelope, objectEnvelope, pageQueryOf, tierTagView } from '../views';

export const tierTagBody = bodySchema({
  type: 'object',
  properties: { name: { type: 'string', minLength: 1, maxLength: 100 } },
  required: ['name'],
  additionalProperties: false,
});

export const tierTagRoutes = ({ tierTags }: Pick<Core, 'tierTags'>): Route[] =>
  resource({ name: 'tier-tags', description: 'Tier tags: names that group plans of the same level across products' }, [
    route({
      method: 'get',
      path: '/api/tier-tags',
      operationId: 'listTierTags',
      summary: 'List tier tags (of the organisation, both modes; `search` in the name)',
      description: "A page of the organisation's tier tags.",
      scope: ['plans', 'read'],
      query: listQuery,
      response: { status: 200, schema: listOf(tierTagSchema) },
      handle: async ({ tenant, query }) => ({
        status: 200,
        body: listEnvelope(await tierTags.listTierTags(tenant, { ...pageQueryOf(query), search: query.search }), tierTagView),
      }),
    }),
    route({
      method: 'post',
      path: '/api/tier-tags',
      operationId: 'createTierTag',
      summary: 'Create a tier tag (200 as published; 409 when the name is taken)',
      description: 'A new tier tag; names are unique in the organisation.',
      scope: ['plans', 'write'],
      body: tierTagBody,
      response: { status: 200, schema: objectOf(tierTagSchema) },
      handle: async ({ tenant, body }) => ({
        status: 200,
        body: objectEnvelope(tierTagView(await tierTags.createTierTag(tenant, body.name))),
      }),
    }),
  ]);
