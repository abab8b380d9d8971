import type { Core, Interval, LineItemQuantities } from '@tollgate/core';
import { noContent, resource, route, typed, type Route } from '@tollgate/http';
import { object, objectOf } from '../response-schemas';
import { objectEnvelope } from '../views';
import { cartItemProps, cartItemView, INTERVAL, quantities } from '../cart-views';

const createBody = typed<{
  planId: string;
  cartId: string;
  grantee?: string;
  interval: Interval | null;
  intervalCount: number | null;
  metadata?: LineItemQuantities;
}>({
  type: 'object',
  properties: {
    planId: { type: 'string', format: 'uuid' },
    cartId: { type: 'string', format: 'uuid' },
    grantee: { type: 'string', minLength: 1, maxLength: 255 },
    interval: INTERVAL,
    intervalCount: { type: ['integer', 'null'], minimum: 1, maximum: 1095 },
    metadata: quantities,
  },
  required: ['planId', 'cartId', 'interval', 'intervalCount'],
  additionalProperties: false,
});

/** The plans in a cart. */
export const cartItemRoutes = ({ carts }: Pick<Core, 'carts'>): Route[] =>
  resource({ name: 'cart-items', description: 'The plans in a cart, each for a grantee' }, [
    route({
      method: 'post',
      path: '/api/cart-items',
      operationId: 'createCartItem',
      summary: 'Add a plan to a cart',
      description:
        'The plan (of the cart’s interval, sellable) for `grantee` (default: the owner); `metadata` gives line item quantities by slug (the per-seat one: the seats).',
      scope: ['carts', 'write'],
      body: createBody,
      response: { status: 201, schema: objectOf(object(cartItemProps)) },
      async handle({ tenant, body }) {
        const { cart, item } = await carts.addItem(tenant, body);
        return { status: 201, body: objectEnvelope(cartItemView(cart.organisationId, cart.id)(item)) };
      },
    }),
    route({
      method: 'delete',
      path: '/api/cart-items/:id',
      operationId: 'deleteCartItem',
      summary: 'Remove a plan from a cart',
      description:
        'The item leaves its cart (400 when the cart is no longer active). The published document names this operation deleteCart.',
      scope: ['carts', 'write'],
      response: { status: 204 },
      async handle({ tenant, params }) {
        await carts.removeItem(tenant, params.id);
        return noContent;
      },
    }),
  ]);
