import type { Core } from '@tollgate/core';
import { resource, route, typed, type Route } from '@tollgate/http';
import { object, objectOf } from '../response-schemas';
import { objectEnvelope } from '../views';

const entrySchema = {
  type: 'object',
  properties: {
    type: { enum: ['entitlement', 'meter'] },
    value: { type: 'string' },
    expiryDate: { type: ['string', 'null'] },
    // In the meter's units: whole on a whole-unit meter, decimals on one with a scale.
    remaining: { type: ['number', 'null'] },
    used: { type: 'number' },
    granted: { type: 'number' },
  },
  required: ['type', 'value', 'expiryDate'],
  additionalProperties: false,
};
const checkQuery = typed<{ granteeId: string; owner?: string }>({
  type: 'object',
  properties: { granteeId: { type: 'string', minLength: 1, maxLength: 255 }, owner: { type: 'string', minLength: 1, maxLength: 255 } },
  required: ['granteeId'],
  additionalProperties: false,
});

/** The entitlement check of the catalog API, with meters: signed, with an expiry. */
export const entitlementRoutes = ({ entitlements }: Pick<Core, 'entitlements'>): Route[] =>
  resource({ name: 'entitlements', description: 'Entitlement checks: what a grantee may use and what is left of each meter, signed' }, [
    route({
      method: 'get',
      path: '/api/entitlements/check',
      operationId: 'checkEntitlements',
      summary: "A grantee's entitlements and meters, signed; cache it until expiresAt",
      description:
        "The signature covers `signed` (JSON of {granteeId, entitlements, expiresAt}; with `owner`, {granteeId, owner, entitlements, expiresAt}) with the signing key of the organisation and the caller's mode, so a client may verify it offline. `owner` adds the meters of that owner's balances, and is then signed too: check it is the owner you asked for.",
      scope: ['checks', 'read'],
      query: checkQuery,
      response: {
        status: 200,
        schema: objectOf(
          object({
            entitlements: { type: 'array', items: entrySchema },
            expiresAt: { type: 'string' },
            signed: { type: 'string' },
            signature: { type: 'string' },
            publicHash: { type: 'string' },
          }),
        ),
      },
      handle: async ({ tenant, query }) => ({
        status: 200,
        body: objectEnvelope(await entitlements.check(tenant, query.granteeId, query.owner)),
      }),
    }),
  ]);
