import type { SigningKeys } from '@tollgate/core';
import { iso } from './json';
import { route, type RouteDef } from './routes';

/** The public signing key as the real service's newer API answers it (envelope of the catalog). */
export const signingKeySchema = {
  type: 'object',
  required: ['type', 'data'],
  properties: {
    type: { const: 'object' },
    data: {
      type: 'object',
      required: ['id', 'organisation', 'publicKey', 'createdAt', 'updatedAt'],
      properties: {
        id: { type: 'string', format: 'uuid' },
        organisation: { type: 'string', format: 'uuid' },
        publicKey: { type: ['string', 'null'], description: 'PEM (SPKI) of the ECDSA P-256 key; null with the HMAC signer' },
        createdAt: { type: 'string', format: 'date-time' },
        updatedAt: { type: 'string', format: 'date-time' },
      },
    },
  },
};

/**
 * The current public signing key of the caller's organisation and mode (a test-mode API key gets
 * the test key, a live one the live key), for verifying checks offline (docs/api/verifying.md): v1
 * `GET /signing-key`, catalog `GET /api/signing-keys`. Any key that may read licenses may read it
 * (client libraries verify the checks they get).
 */
export function signingKeyRoute(path: string, signing: Pick<SigningKeys, 'publicKey'>): RouteDef {
  return route({
    method: 'get',
    path,
    operationId: 'getSigningKey',
    summary: 'The public key that verifies capability checks offline',
    description:
      "The current public signing key (PEM) of the organisation's mode the API key belongs to (test keys get the test " +
      'key, live keys the live key): apps verify the signature of a capability check of that mode with it, without ' +
      'calling Tollgate again. null with the HMAC signer.',
    scope: ['checks', 'read'],
    response: { status: 200, schema: signingKeySchema },
    async handle({ tenant }) {
      const k = await signing.publicKey(tenant);
      const at = iso(k.createdAt);
      return {
        status: 200,
        body: {
          type: 'object',
          data: { id: k.id, organisation: k.organisationId, publicKey: k.publicKeyPem, createdAt: at, updatedAt: at },
        },
      };
    },
  });
}
