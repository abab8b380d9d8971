import { invalid, type CartStatus, type Core, type Customer, type Id, type LineItemQuantities } from '@tollgate/core';
import { bodySchema, noContent, querySchema, resource, route, str, typed, type Route } from '@tollgate/http';
import {
  batchSchema,
  cartDetailSchema,
  cartItemView,
  cartPlanView,
  cartProps,
  cartSchema,
  cartView,
  checkoutPageProps,
  CURRENCY,
  INTERVAL,
  quantities,
} from '../cart-views';
import { listOf, object, objectOf } from '../response-schemas';
import { pageProps, storedCurrency } from '../schemas';
import { listEnvelope, objectEnvelope, pageQueryOf } from '../views';
import { expandOf } from './products';

/** Carts (the published catalog API's): an owner's plans of one interval, checked out together. */

const createBody = bodySchema({
  type: 'object',
  properties: {
    owner: { type: 'string', minLength: 1, maxLength: 255 },
    interval: INTERVAL,
    // Published as a number; a cart's prices repeat every whole number of intervals.
    intervalCount: { type: ['integer', 'null'], minimum: 1, maximum: 1095 },
    currency: CURRENCY,
  },
  required: ['owner', 'interval', 'intervalCount'],
  additionalProperties: false,
});
const updateBody = typed<{
  currency: string | null;
  owner: string;
  cartItems: { id: Id; granteeId?: string; metadata?: LineItemQuantities }[];
}>({
  type: 'object',
  properties: {
    // The list's codes, or the cart's own (core checks: a cart re-saved with a stored code the list lacks).
    currency: { anyOf: [storedCurrency, { type: 'null' }] },
    owner: { type: 'string', minLength: 1, maxLength: 255 },
    cartItems: {
      type: 'array',
      maxItems: 50,
      items: {
        type: 'object',
        properties: {
          id: { type: 'string', format: 'uuid' },
          granteeId: { type: 'string', minLength: 1, maxLength: 255 },
          metadata: quantities,
        },
        required: ['id'],
        additionalProperties: false,
      },
    },
  },
  required: ['currency', 'owner', 'cartItems'],
  additionalProperties: false,
});
const batchBody = bodySchema({
  type: 'object',
  properties: {
    action: { enum: ['abandon'] },
    // Any id (as published): one that names no cart refuses the batch with 404.
    cartIds: { type: 'array', minItems: 1, maxItems: 100, items: { type: 'string', minLength: 1, maxLength: 100 } },
  },
  required: ['action', 'cartIds'],
  additionalProperties: false,
});
const checkoutBody = bodySchema({
  type: 'object',
  properties: checkoutPageProps,
  additionalProperties: false,
});
const listQuery = {
  ...querySchema({
    ...pageProps,
    expand: { type: 'string' },
    status: { type: 'string', maxLength: 100 },
    ownerId: { type: 'string', maxLength: 4000 },
    search: { type: 'string', maxLength: 100 },
  }),
  additionalProperties: false,
};

const csv = (raw: string | undefined) =>
  raw === undefined
    ? undefined
    : raw
        .replace(/^\[|\]$/g, '')
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
const STATUSES: readonly CartStatus[] = ['active', 'abandoned', 'complete'];

export const cartRoutes = ({ carts }: Pick<Core, 'carts'>): Route[] =>
  resource({ name: 'carts', description: "An owner's plans bought together: one interval and currency, one checkout" }, [
    route({
      method: 'post',
      path: '/api/carts',
      operationId: 'createCart',
      summary: 'Create a cart',
      description: 'An empty cart for the owner (the customer who will pay), of one billing interval (null: one-off) and currency.',
      scope: ['carts', 'write'],
      body: createBody,
      response: { status: 201, schema: objectOf(object(cartProps)) },
      async handle({ tenant, body }) {
        const cart = await carts.create(tenant, body);
        return { status: 201, body: objectEnvelope(cartView({ cart, customer: undefined as unknown as Customer }, false)) };
      },
    }),
    route({
      method: 'get',
      path: '/api/carts',
      operationId: 'listCarts',
      summary: 'List carts',
      description:
        'A page of carts (oldest first), by `status` and `ownerId` (comma-separated), or whose id starts with `search`; `expand=owner`.',
      scope: ['carts', 'read'],
      query: listQuery,
      list: true,
      response: { status: 200, schema: listOf(cartSchema) },
      async handle({ tenant, query }) {
        const statuses = csv(query.status);
        for (const s of statuses ?? [])
          if (!STATUSES.includes(s as CartStatus)) invalid('status', `${s} is not a cart status (active, abandoned, complete)`);
        const page = await carts.list(tenant, {
          ...pageQueryOf(query),
          statuses: statuses as CartStatus[] | undefined,
          ownerIds: csv(query.ownerId),
          search: query.search,
        });
        const owner = expandOf(query.expand, ['owner']).has('owner');
        return { status: 200, body: listEnvelope(page, (v) => cartView(v, owner)) };
      },
    }),
    route({
      method: 'post',
      path: '/api/carts/batch',
      operationId: 'batchCartActions',
      summary: 'Abandon several carts',
      description:
        'Abandons each active cart named (a result per cart; carts not active are skipped), in one transaction; an unknown cart refuses the batch (404), another organisation’s too (403).',
      scope: ['carts', 'write'],
      body: batchBody,
      response: { status: 200, schema: batchSchema },
      handle: async ({ tenant, body }) => ({ status: 200, body: objectEnvelope(await carts.abandonMany(tenant, body.cartIds)) }),
    }),
    route({
      method: 'get',
      path: '/api/carts/:id',
      operationId: 'retrieveCart',
      summary: 'Cart detail',
      description: 'The cart with its owner and items, each with its plan, product, line items, prices and currency options.',
      scope: ['carts', 'read'],
      response: { status: 200, schema: objectOf(cartDetailSchema) },
      async handle({ tenant, params }) {
        const v = await carts.get(tenant, params.id);
        const items = v.cart.items.map((i) => {
          const bought = v.plans.get(i.planId);
          return { ...cartItemView(v.cart.organisationId, v.cart.id)(i), ...(bought ? { plan: cartPlanView(bought) } : {}) };
        });
        return { status: 200, body: objectEnvelope({ ...cartView(v, true), cartItems: { type: 'list', data: items } }) };
      },
    }),
    route({
      method: 'put',
      path: '/api/carts/:id',
      operationId: 'updateCart',
      summary: 'Replace a cart',
      description:
        'A full replace, as published: the currency, the owner, and the items kept (each by id, with its grantee and quantities); items not named leave the cart.',
      scope: ['carts', 'write'],
      body: updateBody,
      response: { status: 204 },
      async handle({ tenant, params, body }) {
        await carts.replace(tenant, params.id, body);
        return noContent;
      },
    }),
    route({
      method: 'delete',
      path: '/api/carts/:id',
      operationId: 'abandonCart',
      summary: 'Abandon a cart',
      description: 'The cart changes no more and cannot be checked out (400 when it is not active).',
      scope: ['carts', 'write'],
      response: { status: 204 },
      async handle({ tenant, params }) {
        await carts.abandon(tenant, params.id);
        return noContent;
      },
    }),
    route({
      method: 'post',
      path: '/api/carts/:id/checkout',
      operationId: 'generateCheckoutLink',
      summary: 'Check a cart out',
      description:
        'A payment link for every plan of the cart: the provider’s checkout of each, one after the other, then the success page (default: the product’s settings). The cart is complete once all are paid.',
      scope: ['carts', 'write'],
      body: checkoutBody,
      response: { status: 200, schema: objectOf(object({ url: str })) },
      handle: async ({ tenant, params, body }) => ({
        status: 200,
        body: objectEnvelope(await carts.checkoutLink(tenant, params.id, body)),
      }),
    }),
  ]);
