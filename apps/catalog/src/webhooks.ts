import {
  WEBHOOK_EVENT_TYPES,
  type DeliveryAttempt,
  type EndpointInput,
  type OutboxEvent,
  type WebhookEndpoint,
  type Core,
} from '@tollgate/core';
import { iso, route, type Route } from '@tollgate/http';
import { listEnvelope, objectEnvelope, pageQueryOf as page } from './views';

/** Outgoing webhooks (DESIGN section 12): endpoints, their attempts, and the events of the outbox. */

const pageQuery = {
  limit: { type: 'string', pattern: '^(100|[1-9][0-9]?)$' },
  after: { type: 'string' },
  before: { type: 'string' },
};
const listQuery = { type: 'object', properties: pageQuery, additionalProperties: false };
const eventListQuery = {
  type: 'object',
  properties: { ...pageQuery, type: { enum: [...WEBHOOK_EVENT_TYPES] } },
  additionalProperties: false,
};
const endpointProps = {
  url: { type: 'string', minLength: 1, maxLength: 2048 },
  events: { type: 'array', items: { enum: [...WEBHOOK_EVENT_TYPES] }, maxItems: WEBHOOK_EVENT_TYPES.length, uniqueItems: true },
  description: { type: ['string', 'null'], maxLength: 500 },
  enabled: { type: 'boolean' },
};
const endpointBody = { type: 'object', properties: endpointProps, required: ['url'], additionalProperties: false };
const endpointUpdateBody = { type: 'object', properties: endpointProps, additionalProperties: false, minProperties: 1 };
const resendBody = { type: 'object', properties: { endpointId: { type: 'string', format: 'uuid' } }, additionalProperties: false };

type Q = Record<string, string | undefined>;

export const endpointView = (e: WebhookEndpoint) => ({
  id: e.id,
  organisation: e.organisationId,
  url: e.url,
  description: e.description,
  events: e.events,
  isActive: !e.disabledAt,
  disabledAt: iso(e.disabledAt),
  isTest: e.isTest,
  createdAt: iso(e.createdAt),
  updatedAt: iso(e.updatedAt),
});

export const outboxEventView = (e: OutboxEvent) => ({
  id: e.id,
  organisation: e.organisationId,
  type: e.type,
  isTest: e.isTest,
  payload: e.payload,
  createdAt: iso(e.createdAt),
});

export const attemptView = (a: DeliveryAttempt) => ({
  id: a.id,
  endpointId: a.endpointId,
  eventId: a.eventId,
  deliveryId: a.deliveryId,
  responseStatus: a.responseStatus,
  responseBody: a.responseBody,
  durationMs: a.durationMs,
  createdAt: iso(a.createdAt),
});

export function webhookRoutes({ webhooks }: Pick<Core, 'webhooks'>): Route[] {
  return [
    route<Q>({
      method: 'get',
      path: '/api/webhooks',
      summary: 'List webhook endpoints',
      scope: ['webhooks', 'read'],
      query: listQuery,
      response: { status: 200 },
      handle: async ({ tenant, query }) => ({ status: 200, body: listEnvelope(await webhooks.list(tenant, page(query)), endpointView) }),
    }),
    route<Q, EndpointInput & { url: string }>({
      method: 'post',
      path: '/api/webhooks',
      summary: 'Create a webhook endpoint (its secret is shown in this answer only)',
      scope: ['webhooks', 'write'],
      body: endpointBody,
      response: { status: 201 },
      async handle({ tenant, body }) {
        const { endpoint, secret } = await webhooks.create(tenant, body);
        return { status: 201, body: objectEnvelope({ ...endpointView(endpoint), secret }) };
      },
    }),
    route({
      method: 'get',
      path: '/api/webhooks/:id',
      summary: 'Webhook endpoint detail',
      scope: ['webhooks', 'read'],
      response: { status: 200 },
      handle: async ({ tenant, params }) => ({ status: 200, body: objectEnvelope(endpointView(await webhooks.get(tenant, params.id))) }),
    }),
    route<Q, EndpointInput>({
      method: 'patch',
      path: '/api/webhooks/:id',
      summary: 'Update a webhook endpoint (url, events, description; enabled: false stops it, true starts it again)',
      scope: ['webhooks', 'write'],
      body: endpointUpdateBody,
      response: { status: 200 },
      handle: async ({ tenant, params, body }) => ({
        status: 200,
        body: objectEnvelope(endpointView(await webhooks.update(tenant, params.id, body))),
      }),
    }),
    route({
      method: 'delete',
      path: '/api/webhooks/:id',
      summary: 'Delete a webhook endpoint',
      scope: ['webhooks', 'write'],
      response: { status: 204 },
      async handle({ tenant, params }) {
        await webhooks.delete(tenant, params.id);
        return { status: 204 };
      },
    }),
    route<Q>({
      method: 'get',
      path: '/api/webhooks/:id/attempts',
      summary: 'Delivery attempts of a webhook endpoint',
      scope: ['webhooks', 'read'],
      query: listQuery,
      response: { status: 200 },
      handle: async ({ tenant, params, query }) => ({
        status: 200,
        body: listEnvelope(await webhooks.attempts(tenant, params.id, page(query)), attemptView),
      }),
    }),
    route<Q>({
      method: 'get',
      path: '/api/events',
      summary: 'List events (oldest first)',
      scope: ['events', 'read'],
      query: eventListQuery,
      response: { status: 200 },
      handle: async ({ tenant, query }) => ({
        status: 200,
        body: listEnvelope(await webhooks.events(tenant, { ...page(query), type: query.type }), outboxEventView),
      }),
    }),
    route({
      method: 'get',
      path: '/api/events/:id',
      summary: 'Event detail',
      scope: ['events', 'read'],
      response: { status: 200 },
      handle: async ({ tenant, params }) => ({
        status: 200,
        body: objectEnvelope(outboxEventView(await webhooks.event(tenant, params.id))),
      }),
    }),
    route<Q, { endpointId?: string }>({
      method: 'post',
      path: '/api/events/:id/resend',
      summary: 'Deliver an event again (to one endpoint, or to every enabled endpoint that receives its type)',
      scope: ['webhooks', 'write'],
      body: resendBody,
      response: { status: 202 },
      async handle({ tenant, params, body }) {
        const { event, deliveries } = await webhooks.resend(tenant, params.id, body?.endpointId);
        return { status: 202, body: objectEnvelope({ ...outboxEventView(event), deliveries }) };
      },
    }),
  ];
}
