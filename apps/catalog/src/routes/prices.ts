import type { Core } from '@tollgate/core';
import { noContent, querySchema, resource, route, type Route } from '@tollgate/http';
import { priceSchema, priceView } from '../pricing-views';
import { listOf, objectOf } from '../response-schemas';
import { pageProps } from '../schemas';
import { listEnvelope, objectEnvelope, pageQueryOf } from '../views';

const listQuery = { ...querySchema({ ...pageProps, planId: { type: 'string', format: 'uuid' } }), additionalProperties: false };

export const priceRoutes = ({ pricingParts }: Pick<Core, 'pricingParts'>): Route[] =>
  resource({ name: 'prices', description: "The prices of the key's line items: an interval and its currency options" }, [
    route({
      method: 'get',
      path: '/api/prices',
      operationId: 'listPrices',
      summary: 'List prices',
      description: 'A page of prices (oldest first); `planId` keeps one plan’s.',
      scope: ['plans', 'read'],
      query: listQuery,
      response: { status: 200, schema: listOf(priceSchema) },
      handle: async ({ tenant, query }) => ({
        status: 200,
        body: listEnvelope(await pricingParts.list(tenant, 'price', { ...pageQueryOf(query), planId: query.planId }), (x) =>
          priceView(x.plan.organisationId, x.lineItemId)(x.item),
        ),
      }),
    }),
    route({
      method: 'get',
      path: '/api/prices/:id',
      operationId: 'retrievePrice',
      summary: 'Price detail',
      description: 'One price of a line item.',
      scope: ['plans', 'read'],
      response: { status: 200, schema: objectOf(priceSchema) },
      async handle({ tenant, params }) {
        const x = await pricingParts.get(tenant, 'price', params.id);
        return { status: 200, body: objectEnvelope(priceView(x.plan.organisationId, x.lineItemId)(x.item)) };
      },
    }),
    route({
      method: 'delete',
      path: '/api/prices/:id',
      operationId: 'deletePrice',
      summary: 'Delete a price',
      description: 'Removes a price of a line item no subscription was sold with (409 otherwise: archive it).',
      scope: ['plans', 'write'],
      response: { status: 204 },
      async handle({ tenant, params }) {
        await pricingParts.deletePrice(tenant, params.id);
        return noContent;
      },
    }),
    route({
      method: 'post',
      path: '/api/prices/:id/archive',
      operationId: 'archivePrice',
      summary: 'Archive a price',
      description:
        'It is no longer offered; 400 when already archived, when its line item, plan or product is, or when it is its line item’s last active price.',
      scope: ['plans', 'write'],
      response: { status: 204 },
      async handle({ tenant, params }) {
        await pricingParts.archivePrice(tenant, params.id);
        return noContent;
      },
    }),
  ]);
