import type { Core } from '@tollgate/core';
import { route, type Route } from '@tollgate/http';
import { balanceSchema, balanceView, listOf } from './usage-views';

/** Balances: what an owner has granted, used, reserved and left per meter in the current period. */
export function balanceRoutes({ usage }: Pick<Core, 'usage'>): Route[] {
  return [
    route({
      method: 'get',
      path: '/api/balances',
      summary: "An owner's balances (remaining is null where nothing caps the meter)",
      scope: ['usage', 'read'],
      query: {
        type: 'object',
        properties: { owner: { type: 'string', minLength: 1, maxLength: 255 }, meterSlug: { type: 'string', minLength: 1, maxLength: 64 } },
        required: ['owner'],
        additionalProperties: false,
      },
      response: { status: 200, schema: listOf(balanceSchema) },
      handle: async ({ tenant, query }) => {
        const views = await usage.balances(tenant, query.owner as string, query.meterSlug);
        return {
          status: 200,
          body: { type: 'list', data: views.map(balanceView), nextCursor: null, previousCursor: null, hasMore: false },
        };
      },
    }),
  ];
}
