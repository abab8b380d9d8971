import type { Core } from '@tollgate/core';
import { resource, route, typed, type Route } from '@tollgate/http';
import { listOf, objectOf } from '../response-schemas';
import { pageProps } from '../schemas';
import { querySchema } from '@tollgate/http';
import { listEnvelope, objectEnvelope, pageQueryOf } from '../views';
import { meterSchema, meterView } from './usage-views';

export const meterBody = typed<{ slug: string; name: string; unitLabel?: string | null; scale?: number }>({
  type: 'object',
  properties: {
    slug: { type: 'string', minLength: 1, maxLength: 64 },
    name: { type: 'string', minLength: 1, maxLength: 255 },
    unitLabel: { type: ['string', 'null'], maxLength: 100 },
    // Decimal places of the meter's quantities (0: whole units); fixed once the meter is made.
    scale: { type: 'integer', minimum: 0, maximum: 6 },
  },
  required: ['slug', 'name'],
  additionalProperties: false,
});

/** The published list query: the page and `search` (in the slug or the name). */
const meterListQuery = typed<{ limit?: string; after?: string; before?: string; search?: string }>({
  ...querySchema({ ...pageProps, search: { type: 'string', maxLength: 200 } }),
  additionalProperties: false,
});

/** Meters: what a vendor counts (DESIGN section 14). */
export const meterRoutes = ({ usage }: Pick<Core, 'usage'>): Route[] =>
  resource({ name: 'meters', description: 'Meters: what a vendor counts (API calls, tokens, minutes)' }, [
    route({
      method: 'post',
      path: '/api/meters',
      operationId: 'createMeter',
      summary: 'Create a meter (slug ^[a-z0-9_]+$, unique per organisation and mode; 409 when taken)',
      description: 'A new meter that usage can be recorded, consumed and granted against.',
      scope: ['meters', 'write'],
      body: meterBody,
      response: { status: 201, schema: objectOf(meterSchema) },
      handle: async ({ tenant, body }) => ({ status: 201, body: objectEnvelope(meterView(await usage.createMeter(tenant, body))) }),
    }),
    route({
      method: 'get',
      path: '/api/meters',
      operationId: 'listMeters',
      summary: 'List meters',
      description:
        "A page of the organisation's meters of the key's mode, oldest first; `search` keeps those whose slug or name contains it.",
      scope: ['meters', 'read'],
      query: meterListQuery,
      response: { status: 200, schema: listOf(meterSchema) },
      handle: async ({ tenant, query }) => ({
        status: 200,
        body: listEnvelope(await usage.pageMeters(tenant, { ...pageQueryOf(query), search: query.search || undefined }), meterView),
      }),
    }),
  ]);
