import {
  EVENT_TYPE_SPELLINGS,
  publishedEventType,
  WEBHOOK_EVENT_TYPES,
  type Core,
  type EndpointInput,
  type WebhookEndpoint,
} from '@tollgate/core';
import { bool, date, int, iso, ndate, noContent, querySchema, resource, route, str, typed, uuid, type Route } from '@tollgate/http';
import { listOf, nestedListOf, object, objectOf } from '../response-schemas';
import { pageProps } from '../schemas';
import { attemptView, endpointView, listEnvelope, nestedList, objectEnvelope, outboxEventView, pageQueryOf as page } from '../views';
import { destinationSchema, destinationView } from './destinations';
import { expandOf } from './products';

/**
 * Outgoing webhooks (DESIGN section 12): endpoints and their delivery attempts, under the
 * published catalog API's names (`POST /api/webhooks` is its createWebhookDestination). Event
 * types are accepted in both spellings (`subscription.created`, `subscription_created`).
 */

const WEBHOOK_EXPAND = ['eventTypes', 'destinations'] as const;
export const listQuery = { ...querySchema({ ...pageProps, expand: { type: 'string' } }), additionalProperties: false };
const detailQuery = { ...querySchema({ expand: { type: 'string' } }), additionalProperties: false };
const pageQuery = { ...querySchema(pageProps), additionalProperties: false };
const eventTypes = { type: 'array', items: { enum: [...EVENT_TYPE_SPELLINGS] }, maxItems: EVENT_TYPE_SPELLINGS.length };
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

const eventTypeSchema = object({
  id: str,
  event: { enum: [...EVENT_TYPE_SPELLINGS] },
  webhookId: uuid,
  organisation: uuid,
  deletedAt: ndate,
  createdAt: date,
  updatedAt: date,
});
const endpointProps$ = {
  id: uuid,
  organisation: uuid,
  url: str,
  /** Shown on creation only; null afterwards (the published schema returns it everywhere: docs/decisions.md). */
  secret: { type: ['string', 'null'] },
  description: { type: ['string', 'null'] },
  events: { type: 'array', items: { enum: [...EVENT_TYPE_SPELLINGS] } },
  isActive: bool,
  disabledAt: ndate,
  isTest: bool,
  createdAt: date,
  updatedAt: date,
};
const outboxEventSchema = object({
  id: uuid,
  organisation: uuid,
  type: str,
  isTest: bool,
  payload: { type: 'object' },
  createdAt: date,
  updatedAt: date,
});
const endpointSchema = object(endpointProps$, {
  eventTypes: nestedListOf(eventTypeSchema),
  destinations: nestedListOf(object({ ...destinationSchema.properties, event: outboxEventSchema })),
});
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

/** An endpoint's event types as the published API lists them (one row per type, in its spelling; all of them when it takes every type). */
const webhookEventTypesView = (e: WebhookEndpoint) =>
  nestedList(e.events.length ? e.events : [...WEBHOOK_EVENT_TYPES], `/api/webhooks/${e.id}?expand=eventTypes`, (t) => ({
    id: `${e.id}:${publishedEventType(t)}`,
    event: publishedEventType(t),
    webhookId: e.id,
    organisation: e.organisationId,
    deletedAt: null,
    createdAt: iso(e.createdAt),
    updatedAt: iso(e.updatedAt),
  }));

const withExpand = (e: Parameters<typeof endpointView>[0], expand: Set<string>) => ({
  ...endpointView(e),
  ...(expand.has('eventTypes') ? { eventTypes: webhookEventTypesView(e) } : {}),
});

export const webhookRoutes = ({ webhooks, webhookDestinations }: Pick<Core, 'webhooks' | 'webhookDestinations'>): Route[] =>
  resource({ name: 'webhooks', description: 'Webhook endpoints (destinations) that receive the events, and their delivery attempts' }, [
    route({
      method: 'get',
      path: '/api/webhooks',
      operationId: 'listWebhookDestinations',
      summary: 'List webhook endpoints',
      description: "A page of the organisation's webhook endpoints in the key's mode; `expand=eventTypes` lists each one's event types.",
      scope: ['webhooks', 'read'],
      query: listQuery,
      response: { status: 200, schema: listOf(endpointSchema) },
      handle: async ({ tenant, query }) => {
        const expand = expandOf(query.expand, WEBHOOK_EXPAND);
        return { status: 200, body: listEnvelope(await webhooks.list(tenant, page(query)), (e) => withExpand(e, expand)) };
      },
    }),
    route({
      method: 'post',
      path: '/api/webhooks',
      operationId: 'createWebhookDestination',
      summary: 'Create a webhook endpoint (its secret is shown in this answer only)',
      description:
        'A new endpoint for the events it names (all when none are named; either spelling); keep the secret to verify the signatures.',
      scope: ['webhooks', 'write'],
      body: endpointBody,
      response: { status: 201, schema: objectOf(endpointSchema) },
      async handle({ tenant, body }) {
        const { endpoint, secret } = await webhooks.create(tenant, body);
        // A replay under the idempotency-key answers the endpoint without its secret: it is shown once, never stored.
        return {
          status: 201,
          body: objectEnvelope({ ...endpointView(endpoint), secret }),
          kept: objectEnvelope({ ...endpointView(endpoint), secret: null }),
        };
      },
    }),
    route({
      method: 'get',
      path: '/api/webhooks/:id',
      operationId: 'retrieveWebhookDestination',
      summary: 'Webhook endpoint detail',
      description:
        'One endpoint (its secret is not shown again); `expand=eventTypes` lists its event types, `expand=destinations` the first 100 deliveries to it with their events.',
      scope: ['webhooks', 'read'],
      query: detailQuery,
      response: { status: 200, schema: objectOf(endpointSchema) },
      async handle({ tenant, params, query }) {
        const expand = expandOf(query.expand, WEBHOOK_EXPAND);
        const endpoint = await webhooks.get(tenant, params.id);
        if (!expand.has('destinations')) return { status: 200, body: objectEnvelope(withExpand(endpoint, expand)) };
        const { page: sent, events } = await webhookDestinations.ofEndpoint(tenant, endpoint.id, 100);
        const destinations = nestedList(
          sent.items.filter((d) => events.has(d.eventId)),
          `/api/webhooks/${endpoint.id}?expand=destinations`,
          (d) => ({ ...destinationView(d), event: outboxEventView(events.get(d.eventId)!) }),
        );
        return {
          status: 200,
          body: objectEnvelope({ ...withExpand(endpoint, expand), destinations: { ...destinations, hasMore: sent.hasMore } }),
        };
      },
    }),
    route({
      method: 'patch',
      path: '/api/webhooks/:id',
      operationId: 'updateDestination',
      summary: 'Update a webhook endpoint (url, events, description; enabled: false stops it, true starts it again)',
      description:
        'Changes what is given (the published clients send url and events); a disabled endpoint receives nothing until enabled again.',
      scope: ['webhooks', 'write'],
      body: endpointUpdateBody,
      response: { status: 204 },
      async handle({ tenant, params, body }) {
        await webhooks.update(tenant, params.id, body);
        return noContent;
      },
    }),
    route({
      method: 'delete',
      path: '/api/webhooks/:id',
      operationId: 'deleteDestination',
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
      query: pageQuery,
      response: { status: 200, schema: listOf(attemptSchema) },
      handle: async ({ tenant, params, query }) => ({
        status: 200,
        body: listEnvelope(await webhooks.attempts(tenant, params.id, page(query)), attemptView),
      }),
    }),
  ]);
