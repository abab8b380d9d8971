import type { Core } from '@tollgate/core';
import { route, type Route } from '@tollgate/http';
import { objectEnvelope } from '../views';
import { objectOf } from './usage-views';

const entrySchema = {
  type: 'object',
  properties: {
    type: { enum: ['entitlement', 'meter'] },
    value: { type: 'string' },
    expiryDate: { type: ['string', 'null'] },
    remaining: { type: ['integer', 'null'] },
    used: { type: 'integer' },
    granted: { type: 'integer' },
  },
  required: ['type', 'value', 'expiryDate'],
};

/** The entitlement check of the catalog API, with meters: signed, with an expiry. */
export function entitlementRoutes({ entitlements }: Pick<Core, 'entitlements'>): Route[] {
  return [
    route({
      method: 'get',
      path: '/api/entitlements/check',
      summary:
        "A grantee's entitlements and what is left of each meter, signed (the signature covers `signed`, which is JSON of {granteeId, entitlements, expiresAt}); cache it until expiresAt",
      scope: ['licenses', 'read'],
      query: {
        type: 'object',
        properties: { granteeId: { type: 'string', minLength: 1, maxLength: 255 } },
        required: ['granteeId'],
        additionalProperties: false,
      },
      response: {
        status: 200,
        schema: objectOf({
          type: 'object',
          properties: {
            entitlements: { type: 'array', items: entrySchema },
            signature: { type: 'string' },
            publicHash: { type: 'string' },
            expiresAt: { type: 'string' },
            signed: { type: 'string' },
          },
          required: ['entitlements', 'signature', 'expiresAt', 'signed'],
        }),
      },
      handle: async ({ tenant, query }) => ({
        status: 200,
        body: objectEnvelope(await entitlements.check(tenant, query.granteeId as string)),
      }),
    }),
  ];
}
