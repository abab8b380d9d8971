import { WEBHOOK_EVENT_TYPES, type Core, type EndpointInput } from '@tollgate/core';
import { bool, date, int, ndate, noContent, querySchema, resource, route, str, typed, uuid, type Route } from '@tollgate/http';
import { listOf, object, objectOf } from '../response-schemas';
import { pageProps } from '../schemas';
import { attemptView, endpointView, listEnvelope, objectEnvelope, pageQueryOf as page } from '../views';

/** Outgoing webhooks (DESIGN section 12): endpoints and their delivery attempts. */

export const listQuery = { ...querySchema(pageProps), additionalProperties: false };
const eventTypes = { type: 'array', items: { enum: [...WEBHOOK_EVENT_TYPES] }, maxItems: WEBHOOK_EVENT_TYPES.length, uniqueItems: true };
const endpointProps = {
  url: { type: 'string', minLength: 1, maxLength: 2048 },
  events: eventTypes,
  description: { type: ['string', 'null'], maxLength: 500 },
  enabled: { type: 'boolean' },
};
const endpointBody = typed<EndpointInput & { url: string }>({
  type: 'object',
  properties: endpointProps,
  required: ['url'],
  additionalProperties: false,
});
const endpointUpdateBody = typed<EndpointInput>({
  type: 'object',
  properties: endpointProps,
  additionalProperties: false,
  minProperties: 1,
});

const endpointProps$ = {
  id: uuid,
  organisation: uuid,
  url: str,
  description: { type: ['string', 'null'] },
  events: { type: 'array', items: { enum: [...WEBHOOK_EVENT_TYPES] } },
  isActive: bool,
  disabledAt: ndate,
  isTest: bool,
  createdAt: date,
  updatedAt: date,
};
const endpointSchema = object(endpointProps$);
/** The signing secret is in the creation's answer only. */
const createdEndpointSchema = object({ ...endpointProps$, secret: str });
const attemptSchema = object({
  id: uuid,
  endpointId: uuid,
  eventId: uuid,
  deliveryId: uuid,
  responseStatus: { type: ['integer', 'null'] },
  responseBody: { type: ['string', 'null'] },
  durationMs: int,
  createdAt: date,
});

export const webhookRoutes = ({ webhooks }: Pick<Core, 'webhooks'>): Route[] =>
  resource({ name: 'webhooks', description: 'Webhook endpoints that receive the events, and their delivery attempts' }, [
    route({
      method: 'get',
      path: '/api/webhooks',
      operationId: 'listWebhookEndpoints',
      summary: 'List webhook endpoints',
      description: "A page of the organisation's webhook endpoints in the key's mode.",
      scope: ['webhooks', 'read'],
      query: listQuery,
      response: { status: 200, schema: listOf(endpointSchema) },
      handle: async ({ tenant, query }) => ({ status: 200, body: listEnvelope(await webhooks.list(tenant, page(query)), endpointView) }),
    }),
    route({
      method: 'post',
      path: '/api/webhooks',
      operationId: 'createWebhookEndpoint',
      summary: 'Create a webhook endpoint (its secret is shown in this answer only)',
      description: 'A new endpoint for the events it names (all when none are named); keep the secret to verify the signatures.',
      scope: ['webhooks', 'write'],
      body: endpointBody,
      response: { status: 201, schema: objectOf(createdEndpointSchema) },
      async handle({ tenant, body }) {
        const { endpoint, secret } = await webhooks.create(tenant, body);
        return { status: 201, body: objectEnvelope({ ...endpointView(endpoint), secret }) };
      },
    }),
    route({
      method: 'get',
      path: '/api/webhooks/:id',
      operationId: 'getWebhookEndpoint',
      summary: 'Webhook endpoint detail',
      description: 'One endpoint (without its secret).',
      scope: ['webhooks', 'read'],
      response: { status: 200, schema: objectOf(endpointSchema) },
      handle: async ({ tenant, params }) => ({ status: 200, body: objectEnvelope(endpointView(await webhooks.get(tenant, params.id))) }),
    }),
    route({
      method: 'patch',
      path: '/api/webhooks/:id',
      operationId: 'updateWebhookEndpoint',
      summary: 'Update a webhook endpoint (url, events, description; enabled: false stops it, true starts it again)',
      description: 'Changes what is given; a disabled endpoint receives nothing until enabled again.',
      scope: ['webhooks', 'write'],
      body: endpointUpdateBody,
      response: { status: 200, schema: objectOf(endpointSchema) },
      handle: async ({ tenant, params, body }) => ({
        status: 200,
        body: objectEnvelope(endpointView(await webhooks.update(tenant, params.id, body))),
      }),
    }),
    route({
      method: 'delete',
      path: '/api/webhooks/:id',
      operationId: 'deleteWebhookEndpoint',
      summary: 'Delete a webhook endpoint',
      description: 'Removes the endpoint; its pending deliveries are dropped.',
      scope: ['webhooks', 'write'],
      response: { status: 204 },
      async handle({ tenant, params }) {
        await webhooks.delete(tenant, params.id);
        return noContent;
      },
    }),
    route({
      method: 'get',
      path: '/api/webhooks/:id/attempts',
      operationId: 'listDeliveryAttempts',
      summary: 'Delivery attempts of a webhook endpoint',
      description: 'A page of the attempts to deliver events to the endpoint, with the status and body it answered.',
      scope: ['webhooks', 'read'],
      query: listQuery,
      response: { status: 200, schema: listOf(attemptSchema) },
      handle: async ({ tenant, params, query }) => ({
        status: 200,
        body: listEnvelope(await webhooks.attempts(tenant, params.id, page(query)), attemptView),
      }),
    }),
  ]);
