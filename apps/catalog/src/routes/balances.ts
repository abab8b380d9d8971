import type { Core } from '@tollgate/core';
import { resource, route, typed, type Route } from '@tollgate/http';
import { listOf } from '../response-schemas';
import { balanceSchema, balanceView } from './usage-views';

const balanceQuery = typed<{ owner: string; meterSlug?: string }>({
  type: 'object',
  properties: { owner: { type: 'string', minLength: 1, maxLength: 255 }, meterSlug: { type: 'string', minLength: 1, maxLength: 64 } },
  required: ['owner'],
  additionalProperties: false,
});

/** Balances: what an owner has granted, used, reserved and left per meter in the current period. */
export const balanceRoutes = ({ usage }: Pick<Core, 'usage'>): Route[] =>
  resource({ name: 'balances', description: 'Balances: granted, used, reserved and remaining units of an owner per meter' }, [
    route({
      method: 'get',
      path: '/api/balances',
      operationId: 'listBalances',
      summary: "An owner's balances (remaining is null where nothing caps the meter)",
      description: "The owner's balances of the current period, one per meter (of one meter with meterSlug).",
      scope: ['usage', 'read'],
      query: balanceQuery,
      response: { status: 200, schema: listOf(balanceSchema) },
      handle: async ({ tenant, query }) => {
        const views = await usage.balances(tenant, query.owner, query.meterSlug);
        return {
          status: 200,
          body: { type: 'list', data: views.map(balanceView), nextCursor: null, previousCursor: null, hasMore: false },
        };
      },
    }),
  ]);
