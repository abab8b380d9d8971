import { CLIENT_SCOPES, SCOPE_NAMES, type ApiKey, type Core } from '@tollgate/core';
import { bool, bodySchema, date, iso, ndate, noContent, resource, route, str, uuid, type AuthContext, type Route } from '@tollgate/http';
import { listOf, object, objectOf } from '../response-schemas';
import { pageQuery } from '../schemas';
import { listEnvelope, objectEnvelope, pageQueryOf } from '../views';

/**
 * API keys through the catalog API (the published createApiKey, listApiKeys, retrieveApiKey,
 * deleteApiKey). A key is shown once, in the creation's answer; afterwards `value` is its first
 * characters and an ellipsis (only its hash is kept). A key creates keys only within its own scopes.
 */

const createBody = bodySchema({
  type: 'object',
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 200 },
    scopes: { type: 'array', items: { enum: SCOPE_NAMES }, maxItems: SCOPE_NAMES.length, uniqueItems: true },
  },
  additionalProperties: false,
});

const apiKeyProps = {
  id: uuid,
  value: str,
  organisation: uuid,
  type: { enum: ['publishable', 'secret', 'restricted'] },
  name: str,
  scopes: { type: 'array', items: { enum: SCOPE_NAMES } },
  isTest: bool,
  revokedAt: ndate,
  createdAt: date,
  updatedAt: date,
};
const apiKeySchema = object(apiKeyProps);

/**
 * secret: may do everything; publishable: read-only client scopes (safe in a browser); restricted:
 * anything between (a key made with the old client scopes, `licenses:read` among them, is restricted).
 */
const keyType = (k: ApiKey) =>
  k.scopes.includes('*')
    ? ('secret' as const)
    : k.scopes.every((s) => (CLIENT_SCOPES as readonly string[]).includes(s))
      ? ('publishable' as const)
      : ('restricted' as const);

const apiKeyView = (k: ApiKey, value = `${k.prefix}…`) => ({
  id: k.id,
  value,
  organisation: k.organisationId,
  type: keyType(k),
  name: k.name,
  scopes: k.scopes,
  isTest: k.isTest,
  revokedAt: iso(k.revokedAt),
  createdAt: iso(k.createdAt),
  updatedAt: iso(k.revokedAt ?? k.createdAt),
});

export const apiKeyRoutes = ({ apiKeys }: Pick<Core, 'apiKeys'>): Route[] =>
  resource({ name: 'api-keys', description: "API keys of the key's organisation and mode" }, [
    route({
      method: 'get',
      path: '/api/api-keys',
      operationId: 'listApiKeys',
      summary: 'List API keys',
      description:
        "A page of the organisation's keys in the key's mode that are not revoked (oldest first); `value` shows only the first characters.",
      scope: ['api-keys', 'read'],
      query: pageQuery,
      response: { status: 200, schema: listOf(apiKeySchema) },
      handle: async ({ tenant, query }) => ({
        status: 200,
        body: listEnvelope(await apiKeys.page(tenant, pageQueryOf(query)), (k) => apiKeyView(k)),
      }),
    }),
    route({
      method: 'post',
      path: '/api/api-keys',
      operationId: 'createApiKey',
      summary: 'Create an API key (shown in this answer only; an idempotent replay shows it masked)',
      description:
        "A new key of the caller's organisation and mode, with the scopes given (default: the caller's own); a key cannot grant what it does not hold (403).",
      scope: ['api-keys', 'write'],
      body: createBody,
      response: { status: 201, schema: objectOf(apiKeySchema) },
      async handle({ tenant, body, res }) {
        const creator = (res.locals.auth as AuthContext).key;
        const { plaintext, record } = await apiKeys.createFor(tenant, creator, { name: body?.name, scopes: body?.scopes });
        // A replay under the idempotency-key answers the key without its value: it is shown once, never stored.
        return { status: 201, body: objectEnvelope(apiKeyView(record, plaintext)), kept: objectEnvelope(apiKeyView(record)) };
      },
    }),
    route({
      method: 'get',
      path: '/api/api-keys/:id',
      operationId: 'retrieveApiKey',
      summary: 'API key detail',
      description: 'One key that is not revoked (the key itself is not shown again).',
      scope: ['api-keys', 'read'],
      response: { status: 200, schema: objectOf(apiKeySchema) },
      handle: async ({ tenant, params }) => ({ status: 200, body: objectEnvelope(apiKeyView(await apiKeys.getFor(tenant, params.id))) }),
    }),
    route({
      method: 'delete',
      path: '/api/api-keys/:id',
      operationId: 'deleteApiKey',
      summary: 'Revoke an API key',
      description:
        "The key stops working on every instance at once (as `tollgate keys revoke`); it is no longer listed. A key may revoke only keys whose every scope it could grant (403 naming the key otherwise): `api-keys:write` alone cannot revoke a `*` key. The organisation's last `*` key of the mode is kept (409 naming it): make another first.",
      scope: ['api-keys', 'write'],
      response: { status: 204 },
      async handle({ tenant, params, res }) {
        await apiKeys.revokeFor(tenant, (res.locals.auth as AuthContext).key, params.id);
        return noContent;
      },
    }),
  ]);
