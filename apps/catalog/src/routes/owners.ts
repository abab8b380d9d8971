import type { Core, Customer, SubscriptionRecord, Tenant } from '@tollgate/core';
import { noContent, querySchema, resource, route, str, typed, type Route } from '@tollgate/http';
import { groupSchema, ownerSchema, subscriptionSchema } from '../people-schemas';
import { cartSchema, cartView } from '../cart-views';
import { receiptSchema, receiptView } from './receipts';
import { groupView, ownerView, subscriptionView } from '../people-views';
import { listOf, nestedListOf, object, objectOf } from '../response-schemas';
import { pageProps } from '../schemas';
import { listEnvelope, NESTED_LIMIT, nestedList, objectEnvelope, pageQueryOf } from '../views';
import { expandOf } from './products';

/** Owners (published operations #52-55): the customers who pay, as the catalog API names them. */

const listQuery = {
  ...querySchema({
    ...pageProps,
    search: { type: 'string', maxLength: 200 },
    paymentCustomerId: { type: 'string', maxLength: 255 },
    // The published name of the same filter, as vendors' code sends it.
    stripeCustomerId: { type: 'string', maxLength: 255 },
    expand: str,
  }),
  additionalProperties: false,
};
const updateBody = typed<{ owner: string; email?: string }>({
  type: 'object',
  additionalProperties: false,
  required: ['owner'],
  properties: {
    owner: { type: 'string', minLength: 1, maxLength: 255 },
    email: { anyOf: [{ type: 'string', format: 'email', maxLength: 320 }, { const: '' }] },
  },
});
export const ownerItemSchema = object(ownerSchema.properties, {
  subscriptions: nestedListOf(subscriptionSchema),
  receipts: nestedListOf(receiptSchema),
});
const ownerDetailSchema = object(ownerSchema.properties, {
  subscriptions: nestedListOf(subscriptionSchema),
  groups: nestedListOf(groupSchema),
  carts: nestedListOf(cartSchema),
});

export function ownerRoutes({
  owners,
  subscriptionDirectory,
  groups,
  receipts,
  carts,
}: Pick<Core, 'owners' | 'subscriptionDirectory' | 'groups' | 'receipts' | 'carts'>): Route[] {
  /** Each owner's first receipts (`expand=receipts` of the list). */
  const receiptsOf = async (tenant: Tenant, list: Customer[]) => {
    const out = new Map<string, Awaited<ReturnType<typeof receipts.list>>['items']>();
    for (const c of list) out.set(c.id, (await receipts.list(tenant, { limit: NESTED_LIMIT + 1, ownerIds: [c.id] })).items);
    return out;
  };
  /** Each owner with its first subscriptions, when `expand` asks for them. */
  const withSubscriptions = async (tenant: Tenant, list: Customer[], expand: Set<string>) => {
    const subs = expand.has('subscriptions')
      ? await subscriptionDirectory.ofCustomers(
          tenant,
          list.map((c) => c.id),
          NESTED_LIMIT,
        )
      : undefined;
    const nested = (c: Customer) => {
      const found = subs?.get(c.id) ?? { items: [] as SubscriptionRecord[], hasMore: false };
      return {
        type: 'list' as const,
        data: found.items.map((x) => subscriptionView(x.subscription, x.customer, x.plan)),
        hasMore: found.hasMore,
        path: `/api/subscriptions?owner=${encodeURIComponent(c.value)}`,
      };
    };
    return (c: Customer) => ({ ...ownerView(c), ...(subs ? { subscriptions: nested(c) } : {}) });
  };
  return resource({ name: 'owners', description: 'Owners: the customers who pay for subscriptions (the checkout member)' }, [
    route({
      method: 'get',
      path: '/api/owners',
      operationId: 'listOwners',
      summary: 'List owners',
      description:
        "A page of owners in creation order; `search` matches part of the value or e-mail address, `paymentCustomerId` (or `stripeCustomerId`) the provider's customer; `expand=subscriptions,receipts` brings each one's first subscriptions and receipts.",
      scope: ['owners', 'read'],
      query: listQuery,
      list: true,
      response: { status: 200, schema: listOf(ownerItemSchema) },
      handle: async ({ tenant, query }) => {
        const page = await owners.list(tenant, {
          ...pageQueryOf(query),
          search: query.search,
          paymentCustomerId: query.paymentCustomerId ?? query.stripeCustomerId,
        });
        const expand = expandOf(query.expand, ['subscriptions', 'receipts']);
        const view = await withSubscriptions(tenant, page.items, expand);
        const bought = expand.has('receipts') ? await receiptsOf(tenant, page.items) : undefined;
        return {
          status: 200,
          body: listEnvelope(page, (c) => ({
            ...view(c),
            ...(bought
              ? { receipts: nestedList(bought.get(c.id) ?? [], `/api/receipts?owner=${c.id}`, (x) => receiptView(x, new Set())) }
              : {}),
          })),
        };
      },
    }),
    route({
      method: 'get',
      path: '/api/owners/:id',
      operationId: 'retrieveOwner',
      summary: 'Retrieve an owner',
      description:
        "One owner; `expand=carts,subscriptions,groups` brings its carts, its subscriptions and its groups (each subscription's among them).",
      scope: ['owners', 'read'],
      query: { ...querySchema({ expand: str }), additionalProperties: false },
      response: { status: 200, schema: objectOf(ownerDetailSchema) },
      handle: async ({ tenant, params, query }) => {
        const owner = await owners.get(tenant, params.id);
        const expand = expandOf(query.expand, ['carts', 'subscriptions', 'groups']);
        const ownCarts = expand.has('carts') ? await carts.list(tenant, { limit: NESTED_LIMIT + 1, ownerIds: [owner.id] }) : undefined;
        const view = await withSubscriptions(tenant, [owner], expand);
        const ownGroups = expand.has('groups') ? await groups.list(tenant, { limit: NESTED_LIMIT + 1, owner: owner.value }) : undefined;
        return {
          status: 200,
          body: objectEnvelope({
            ...view(owner),
            ...(ownGroups
              ? {
                  groups: nestedList(ownGroups.items, `/api/groups?owner=${encodeURIComponent(owner.value)}`, ({ group }) =>
                    groupView(group),
                  ),
                }
              : {}),
            ...(ownCarts ? { carts: nestedList(ownCarts.items, `/api/carts?ownerId=${owner.id}`, (v) => cartView(v, false)) } : {}),
          }),
        };
      },
    }),
    route({
      method: 'put',
      path: '/api/owners/:id',
      operationId: 'updateOwner',
      summary: 'Update an owner',
      description: 'Changes the owner\'s value (unique among the owners: 400 when another has it) and e-mail address (`""` clears it).',
      scope: ['owners', 'write'],
      body: updateBody,
      response: { status: 204 },
      async handle({ tenant, params, body }) {
        await owners.update(tenant, params.id, body);
        return noContent;
      },
    }),
    route({
      method: 'delete',
      path: '/api/owners/:id',
      operationId: 'deleteOwner',
      summary: 'Delete an owner',
      description: 'Removes an owner without subscriptions (409 while it has any).',
      scope: ['owners', 'write'],
      response: { status: 204 },
      async handle({ tenant, params }) {
        await owners.delete(tenant, params.id);
        return noContent;
      },
    }),
  ]);
}
