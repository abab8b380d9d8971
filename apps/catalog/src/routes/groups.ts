import { invalid, type Core, type MembershipChange } from '@tollgate/core';
import { noContent, querySchema, resource, route, str, typed, type Route } from '@tollgate/http';
import { granteeSchema, groupSchema, membershipSchema, ownerSchema, subscriptionPlanProps } from '../people-schemas';
import { granteeView, groupView, membershipView, ownerView, subscriptionPlansOf } from '../people-views';
import { listOf, nestedListOf, object, objectOf } from '../response-schemas';
import { pageProps } from '../schemas';
import { listEnvelope, nestedList, objectEnvelope, pageQueryOf } from '../views';
import { expandOf } from './products';

/**
 * Groups (published operations #38-43): teams of grantees of one owner. A subscription's group has
 * the subscription's id (its subscription plan's `groupId`); its members take the seats.
 */

const granteeId = { type: 'string', minLength: 1, maxLength: 255 };
const name = { type: 'string', maxLength: 255 };
const createBody = typed<{ owner: string; name?: string; grantees?: { granteeId: string; name?: string }[] }>({
  type: 'object',
  additionalProperties: false,
  required: ['owner'],
  properties: {
    owner: { type: 'string', minLength: 1, maxLength: 255 },
    name,
    grantees: {
      type: 'array',
      maxItems: 100,
      items: { type: 'object', additionalProperties: false, required: ['granteeId'], properties: { granteeId, name } },
    },
  },
});
const updateBody = typed<{ id: string; name?: string | null; grantees: { id: string; granteeId: string; name?: string | null }[] }>({
  type: 'object',
  additionalProperties: false,
  required: ['id', 'grantees'],
  properties: {
    id: { type: 'string', format: 'uuid' },
    name: { type: ['string', 'null'], maxLength: 255 },
    grantees: {
      type: 'array',
      maxItems: 100,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['id', 'granteeId'],
        properties: { id: { type: 'string', format: 'uuid' }, granteeId, name: { type: ['string', 'null'], maxLength: 255 } },
      },
    },
  },
});
/** A JSON array of changes, each one of three shapes (as published). */
const manageBody = typed<MembershipChange[]>({
  type: 'array',
  minItems: 1,
  maxItems: 100,
  items: {
    anyOf: [
      {
        type: 'object',
        additionalProperties: false,
        required: ['granteeId', 'type'],
        properties: { granteeId, type: { const: 'add' }, name },
      },
      {
        type: 'object',
        additionalProperties: false,
        required: ['granteeId', 'type'],
        properties: { granteeId, type: { const: 'remove' } },
      },
      {
        type: 'object',
        additionalProperties: false,
        required: ['granteeId', 'type', 'newGranteeId'],
        properties: { granteeId, type: { const: 'replace' }, name, newGranteeId: granteeId },
      },
    ],
  },
});
export const groupItemSchema = object(groupSchema.properties, {
  owner: ownerSchema,
  memberships: nestedListOf(object({ ...membershipSchema.properties, grantee: granteeSchema })),
  subscriptionPlans: nestedListOf(object(subscriptionPlanProps)),
});

export function groupRoutes({ groups, subscriptionDirectory }: Pick<Core, 'groups' | 'subscriptionDirectory'>): Route[] {
  return resource({ name: 'groups', description: "Groups: teams of grantees of an owner; a subscription's group takes its seats" }, [
    route({
      method: 'get',
      path: '/api/groups',
      operationId: 'listGroups',
      summary: 'List groups',
      description:
        "A page of groups in creation order (every subscription's group among them), of one owner (its value) if given; `expand=owner`.",
      scope: ['grantees', 'read'],
      query: {
        ...querySchema({ ...pageProps, owner: { type: 'string', minLength: 1, maxLength: 255 }, expand: str }),
        additionalProperties: false,
      },
      list: true,
      response: { status: 200, schema: listOf(groupItemSchema) },
      handle: async ({ tenant, query }) => {
        const expand = expandOf(query.expand, ['owner']);
        const page = await groups.list(tenant, { ...pageQueryOf(query), owner: query.owner });
        return {
          status: 200,
          body: listEnvelope(page, ({ group, owner }) => ({
            ...groupView(group),
            ...(expand.has('owner') && owner ? { owner: ownerView(owner) } : {}),
          })),
        };
      },
    }),
    route({
      method: 'post',
      path: '/api/groups',
      operationId: 'createGroup',
      summary: 'Create a group',
      description: 'A group of the owner (made when new) with these grantees (made when new, named by `name`). Answers 200, as published.',
      scope: ['grantees', 'write'],
      body: createBody,
      response: { status: 200, schema: objectOf(groupSchema) },
      handle: async ({ tenant, body }) => ({ status: 200, body: objectEnvelope(groupView(await groups.create(tenant, body))) }),
    }),
    route({
      method: 'get',
      path: '/api/groups/:id',
      operationId: 'retrieveGroup',
      summary: 'Retrieve a group',
      description:
        "One group; `expand=owner,memberships,subscriptionPlans` brings its owner, its members (a subscription's group: the grantees holding its seats) and the subscription plan whose seats it takes (none for a group of no subscription).",
      scope: ['grantees', 'read'],
      query: { ...querySchema({ expand: str }), additionalProperties: false },
      response: { status: 200, schema: objectOf(groupItemSchema) },
      handle: async ({ tenant, params, query }) => {
        const expand = expandOf(query.expand, ['owner', 'memberships', 'subscriptionPlans']);
        const { group, owner, members } = await groups.get(tenant, params.id);
        const held =
          expand.has('subscriptionPlans') && group.subscriptionId
            ? [(await subscriptionDirectory.get(tenant, group.subscriptionId)).subscription]
            : [];
        return {
          status: 200,
          body: objectEnvelope({
            ...groupView(group),
            ...(expand.has('owner') && owner ? { owner: ownerView(owner) } : {}),
            ...(expand.has('memberships')
              ? {
                  memberships: nestedList(members, `/api/grantees?groupId=${group.id}`, (m) => ({
                    ...membershipView(m),
                    grantee: granteeView(m.grantee),
                  })),
                }
              : {}),
            ...(expand.has('subscriptionPlans')
              ? {
                  subscriptionPlans: nestedList(
                    held.flatMap(subscriptionPlansOf),
                    `/api/groups/${group.id}?expand=subscriptionPlans`,
                    (x) => x,
                  ),
                }
              : {}),
          }),
        };
      },
    }),
    route({
      method: 'put',
      path: '/api/groups/:id',
      operationId: 'updateGroup',
      summary: 'Update a group',
      description:
        "Renames the group and its members: each of `grantees` names a member by its record id with its `granteeId` (a new one takes the member's licenses along) and name.",
      scope: ['grantees', 'write'],
      body: updateBody,
      response: { status: 204 },
      async handle({ tenant, params, body }) {
        if (body.id.toLowerCase() !== params.id.toLowerCase()) invalid('id', 'must be the id of the path');
        await groups.update(tenant, params.id, body);
        return noContent;
      },
    }),
    route({
      method: 'delete',
      path: '/api/groups/:id',
      operationId: 'deleteGroup',
      summary: 'Delete a group',
      description: "Removes a group and its memberships; a subscription's group goes with its subscription (400).",
      scope: ['grantees', 'write'],
      response: { status: 204 },
      async handle({ tenant, params }) {
        await groups.delete(tenant, params.id);
        return noContent;
      },
    }),
    route({
      method: 'post',
      path: '/api/groups/:id/grantees',
      operationId: 'manageGrantees',
      summary: 'Add, remove or replace members',
      description:
        "A JSON array of changes, applied all or none. In a subscription's group an added grantee takes an unassigned seat (none left: 400) and the check answers for it at once; a removed one frees its seat; a replaced one hands it over.",
      scope: ['grantees', 'write'],
      body: manageBody,
      response: { status: 204 },
      async handle({ tenant, params, body }) {
        await groups.manage(tenant, params.id, body);
        return noContent;
      },
    }),
  ]);
}
