import { invalid } from '@tollgate/core';
import { object, ok, resource, route, typed } from '@tollgate/http';
import type { RouteModule } from './support';

/** How long a web component's session token lasts. */
export const SESSION_TTL_MS = 60 * 60 * 1000;

const SCOPES = ['web-components:invoices', 'web-components:pricing-table', 'web-components:checkout'] as const;
type Scope = (typeof SCOPES)[number];
type SessionRequest = { scope: Scope; metadata: Record<string, string> };

const id = { type: 'string', format: 'uuid' } as const;
export const sessionBody = typed<SessionRequest>({
  type: 'object',
  properties: {
    scope: { enum: SCOPES },
    metadata: {
      type: 'object',
      properties: { subscriptionUuid: id, productUuid: id, pricingTableUuid: id, planUuid: id },
      additionalProperties: false,
      minProperties: 1,
      maxProperties: 1,
    },
  },
  required: ['scope', 'metadata'],
  additionalProperties: false,
});
export const sessionSchema = object({ sessionToken: { type: 'string', minLength: 1 } });

/** Which record each scope's token is for. */
const RECORD_OF: Record<Scope, string[]> = {
  'web-components:invoices': ['subscriptionUuid'],
  'web-components:pricing-table': ['productUuid', 'pricingTableUuid'],
  'web-components:checkout': ['planUuid'],
};

/**
 * `POST /sessions`: a signed, expiring token for the real service's web components, naming the
 * key's organisation and mode, the scope, and the one record it shows (which must be the key's).
 */
export const sessionRoutes: RouteModule = ({ core: { queries, subscriptions }, links, clock }) =>
  resource({ name: 'sessions', description: 'Short-lived tokens for the web components a vendor embeds' }, [
    route({
      method: 'post',
      path: '/sessions',
      operationId: 'createSession',
      summary: 'Create a session token',
      description:
        'A token (an hour) that lets a web component in the customer’s browser show one record: invoices of a subscription, a pricing table, a checkout.',
      scope: ['subscriptions', 'read'],
      body: sessionBody,
      response: { status: 200, schema: sessionSchema },
      async handle({ tenant, body }) {
        const [[key, value]] = Object.entries(body.metadata);
        if (!RECORD_OF[body.scope].includes(key))
          invalid(`metadata.${key}`, `is not what ${body.scope} names (${RECORD_OF[body.scope].join(' or ')})`);
        if (key === 'subscriptionUuid') await subscriptions.get(tenant, value);
        else if (key === 'productUuid') await queries.getProduct(tenant, value);
        else if (key === 'pricingTableUuid') await queries.getPricingTable(tenant, value);
        else await queries.getPlan(tenant, value);
        const sessionToken = links.sign({ kind: 'session', scope: body.scope, [key]: value, ...tenant }, SESSION_TTL_MS, clock.now());
        return ok({ sessionToken });
      },
    }),
  ]);
