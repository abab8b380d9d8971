import type { Core, LineItemChange } from '@tollgate/core';
import { noContent, querySchema, resource, route, typed, type Route } from '@tollgate/http';
import { lineItemBaseProps, lineItemView, lineItemSchema } from '../pricing-views';
import { listOf, object, objectOf } from '../response-schemas';
import { pageProps, quantity } from '../schemas';
import { listEnvelope, objectEnvelope, pageQueryOf } from '../views';
import { expandOf } from './products';

const listQuery = {
  ...querySchema({ ...pageProps, planId: { type: 'string', format: 'uuid' }, search: { type: 'string', maxLength: 200 } }),
  additionalProperties: false,
};
const detailQuery = { ...querySchema({ expand: { type: 'string' } }), additionalProperties: false };
const slug = { type: 'string', minLength: 1, maxLength: 100, pattern: '^[a-z0-9_]+$' };
/** The published update: the line item's whole description (its price type and meter must stay as saved). */
const updateBody = typed<LineItemChange>({
  type: 'object',
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 200 },
    slug,
    nickname: { type: 'string', maxLength: 200 },
    priceType: { enum: ['flat_rate', 'per_seat', 'metered'] },
    intervalType: { enum: ['one_off', 'recurring'] },
    billingScheme: { enum: ['fixed', 'per_unit', 'tiered', 'flat_rate'] },
    tiersMode: { enum: ['graduated', 'volume', null] },
    isActive: { type: 'boolean' },
    minQuantity: quantity(1),
    maxQuantity: quantity(1),
    allowChangingQuantity: { type: 'boolean' },
    meterSlug: { anyOf: [slug, { type: 'null' }] },
    unitLabel: { type: ['string', 'null'], maxLength: 50 },
  },
  required: ['name', 'slug', 'priceType', 'intervalType', 'billingScheme', 'maxQuantity', 'tiersMode', 'minQuantity'],
  additionalProperties: false,
  example: {
    name: 'Seats',
    slug: 'seats',
    nickname: 'Seats',
    priceType: 'per_seat',
    intervalType: 'recurring',
    billingScheme: 'per_unit',
    tiersMode: null,
    isActive: true,
    minQuantity: 1,
    maxQuantity: 50,
    allowChangingQuantity: true,
    meterSlug: null,
    unitLabel: 'seat',
  },
  allOf: [
    { if: { properties: { priceType: { const: 'metered' } } }, then: { required: ['meterSlug'], properties: { meterSlug: slug } } },
    { if: { properties: { priceType: { const: 'flat_rate' } } }, then: { properties: { tiersMode: { const: null } } } },
  ],
});

export const lineItemRoutes = ({ pricingParts }: Pick<Core, 'pricingParts'>): Route[] =>
  resource({ name: 'line-items', description: "The line items of the key's plans: what a plan charges for" }, [
    route({
      method: 'get',
      path: '/api/line-items',
      operationId: 'listLineItems',
      summary: 'List line items',
      description: 'A page of line items (oldest first), of one plan (`planId`) or by name or slug (`search`).',
      scope: ['plans', 'read'],
      query: listQuery,
      response: { status: 200, schema: listOf(object(lineItemBaseProps)) },
      handle: async ({ tenant, query }) => ({
        status: 200,
        body: listEnvelope(
          await pricingParts.list(tenant, 'lineItem', { ...pageQueryOf(query), planId: query.planId, search: query.search }),
          (x) => lineItemView(x),
        ),
      }),
    }),
    route({
      method: 'get',
      path: '/api/line-items/:id',
      operationId: 'retrieveLineItem',
      summary: 'Line item detail',
      description: 'One line item; `expand=prices` lists its prices.',
      scope: ['plans', 'read'],
      query: detailQuery,
      response: { status: 200, schema: objectOf(lineItemSchema) },
      handle: async ({ tenant, params, query }) => ({
        status: 200,
        body: objectEnvelope(
          lineItemView(await pricingParts.get(tenant, 'lineItem', params.id), expandOf(query.expand, ['prices']).has('prices')),
        ),
      }),
    }),
    route({
      method: 'put',
      path: '/api/line-items/:id',
      operationId: 'updateLineItem',
      summary: 'Update a line item',
      description: 'Replaces its description (name, slug, quantities, billing scheme, ...); its price type and meter stay as saved.',
      scope: ['plans', 'write'],
      body: updateBody,
      response: { status: 200, schema: objectOf(lineItemSchema) },
      handle: async ({ tenant, params, body }) => ({
        status: 200,
        body: objectEnvelope(lineItemView(await pricingParts.updateLineItem(tenant, params.id, body))),
      }),
    }),
    route({
      method: 'delete',
      path: '/api/line-items/:id',
      operationId: 'deleteLineItem',
      summary: 'Delete a line item',
      description: 'Removes a line item no subscription was sold with (409 otherwise: archive it).',
      scope: ['plans', 'write'],
      response: { status: 204 },
      async handle({ tenant, params }) {
        await pricingParts.deleteLineItem(tenant, params.id);
        return noContent;
      },
    }),
    route({
      method: 'post',
      path: '/api/line-items/:id/archive',
      operationId: 'archiveLineItem',
      summary: 'Archive a line item',
      description: 'It can no longer change nor be sold; 400 when already archived or its plan or product is.',
      scope: ['plans', 'write'],
      response: { status: 204 },
      async handle({ tenant, params }) {
        await pricingParts.archiveLineItem(tenant, params.id);
        return noContent;
      },
    }),
  ]);
