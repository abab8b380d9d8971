import type { Core } from '@tollgate/core';
import { bodySchema, resource, route, uuid, type Route } from '@tollgate/http';
import { object } from '../response-schemas';

const copyBody = bodySchema({
  type: 'object',
  properties: { id: { type: 'string', minLength: 1, maxLength: 100 } },
  required: ['id'],
  additionalProperties: false,
});

/** A test-mode product copied into live mode (the published `POST /api/products/copy-to-live-mode`). */
export const copyToLiveRoutes = ({ copyToLive }: Pick<Core, 'copyToLive'>): Route[] =>
  resource({ name: 'products', description: "The products of the key's organisation and mode" }, [
    route({
      method: 'post',
      path: '/api/products/copy-to-live-mode',
      operationId: 'copyProductToLiveMode',
      summary: 'Copy a test-mode product to live mode',
      description:
        'Called with a test-mode key: the product with its plans, entitlements and pricing is written into live mode as a catalog file is imported (copying again updates the live copy). Answers the live product id, without an envelope, as published.',
      scope: ['products', 'write'],
      body: copyBody,
      response: { status: 201, schema: object({ id: uuid }) },
      handle: async ({ tenant, body }) => ({ status: 201, body: await copyToLive.copy(tenant, body.id) }),
    }),
  ]);
