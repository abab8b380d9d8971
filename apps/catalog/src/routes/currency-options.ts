import type { Core } from '@tollgate/core';
import { querySchema, resource, route, type Route } from '@tollgate/http';
import { currencyOptionSchema, currencyOptionView, tierSchema, tierView } from '../pricing-views';
import { listOf, objectOf } from '../response-schemas';
import { pageProps } from '../schemas';
import { listEnvelope, objectEnvelope, pageQueryOf } from '../views';
import { expandOf } from './products';

const expand = { type: 'string' } as const;
const optionListQuery = {
  ...querySchema({ ...pageProps, priceId: { type: 'string', format: 'uuid' }, expand }),
  additionalProperties: false,
};
const optionQuery = { ...querySchema({ expand }), additionalProperties: false };
const tierListQuery = { ...querySchema(pageProps), additionalProperties: false };

/** Currency options (an amount of a price in one currency) and tiers (a band of a tiered currency option). */
export const currencyOptionRoutes = ({ pricingParts }: Pick<Core, 'pricingParts'>): Route[] => [
  ...resource({ name: 'currency-options', description: 'The amounts of a price, one per currency' }, [
    route({
      method: 'get',
      path: '/api/currency-options',
      operationId: 'listCurrencyOptions',
      summary: 'List currency options',
      description: 'A page of currency options (oldest first); `priceId` keeps one price’s; `expand=tiers` brings their tiers.',
      scope: ['plans', 'read'],
      query: optionListQuery,
      response: { status: 200, schema: listOf(currencyOptionSchema) },
      handle: async ({ tenant, query }) => {
        const tiers = expandOf(query.expand, ['tiers']).has('tiers');
        return {
          status: 200,
          body: listEnvelope(await pricingParts.list(tenant, 'currencyOption', { ...pageQueryOf(query), priceId: query.priceId }), (x) =>
            currencyOptionView(x, tiers),
          ),
        };
      },
    }),
    route({
      method: 'get',
      path: '/api/currency-options/:id',
      operationId: 'retrieveCurrencyOption',
      summary: 'Currency option detail',
      description: 'One currency option; `expand=tiers` brings its tiers.',
      scope: ['plans', 'read'],
      query: optionQuery,
      response: { status: 200, schema: objectOf(currencyOptionSchema) },
      handle: async ({ tenant, params, query }) => ({
        status: 200,
        body: objectEnvelope(
          currencyOptionView(await pricingParts.get(tenant, 'currencyOption', params.id), expandOf(query.expand, ['tiers']).has('tiers')),
        ),
      }),
    }),
  ]),
  ...resource({ name: 'tiers', description: 'The bands of a tiered currency option' }, [
    route({
      method: 'get',
      path: '/api/tiers',
      operationId: 'listTiers',
      summary: 'List tiers',
      description: 'A page of tiers (oldest first).',
      scope: ['plans', 'read'],
      query: tierListQuery,
      response: { status: 200, schema: listOf(tierSchema) },
      handle: async ({ tenant, query }) => ({
        status: 200,
        body: listEnvelope(await pricingParts.list(tenant, 'tier', pageQueryOf(query)), (x) =>
          tierView(x.plan.organisationId, x.currencyOptionId)(x.item),
        ),
      }),
    }),
    route({
      method: 'get',
      path: '/api/tiers/:id',
      operationId: 'retrieveTier',
      summary: 'Tier detail',
      description: 'One tier of a currency option.',
      scope: ['plans', 'read'],
      response: { status: 200, schema: objectOf(tierSchema) },
      async handle({ tenant, params }) {
        const x = await pricingParts.get(tenant, 'tier', params.id);
        return { status: 200, body: objectEnvelope(tierView(x.plan.organisationId, x.currencyOptionId)(x.item)) };
      },
    }),
  ]),
];
