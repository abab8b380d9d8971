import type { Core } from '@tollgate/core';
import { route, type Route } from '@tollgate/http';
import { pageQuery } from '../schemas';
import { listEnvelope, objectEnvelope, pageQueryOf } from '../views';
import { listOf, meterSchema, meterView, objectOf } from './usage-views';

/** Meters: what a vendor counts (DESIGN section 14). */
export function meterRoutes({ usage }: Pick<Core, 'usage'>): Route[] {
  return [
    route<Record<string, string>, { slug: string; name: string; unitLabel?: string | null }>({
      method: 'post',
      path: '/api/meters',
      summary: 'Create a meter (slug ^[a-z0-9_]+$, unique per organisation and mode)',
      scope: ['meters', 'write'],
      body: {
        type: 'object',
        properties: {
          slug: { type: 'string', minLength: 1, maxLength: 64 },
          name: { type: 'string', minLength: 1, maxLength: 255 },
          unitLabel: { type: ['string', 'null'], maxLength: 100 },
        },
        required: ['slug', 'name'],
        additionalProperties: false,
      },
      response: { status: 201, schema: objectOf(meterSchema) },
      handle: async ({ tenant, body }) => ({ status: 201, body: objectEnvelope(meterView(await usage.createMeter(tenant, body))) }),
    }),
    route({
      method: 'get',
      path: '/api/meters',
      summary: 'List meters',
      scope: ['meters', 'read'],
      query: pageQuery,
      response: { status: 200, schema: listOf(meterSchema) },
      handle: async ({ tenant, query }) => ({
        status: 200,
        body: listEnvelope(await usage.pageMeters(tenant, pageQueryOf(query)), meterView),
      }),
    }),
  ];
}
