import { invalid, type Core, type DeliveryAttempt, type OutboxDelivery } from '@tollgate/core';
import { bodySchema, date, int, iso, noContent, nstr, querySchema, resource, route, uuid, type Route } from '@tollgate/http';
import { listOf, nestedListOf, object, objectOf } from '../response-schemas';
import { pageProps } from '../schemas';
import { listEnvelope, nestedList, objectEnvelope, pageQueryOf as page } from '../views';
import { expandOf } from './products';

/**
 * Destinations and event attempts, the published catalog API's names for the outbox's deliveries
 * (one event's way to one webhook endpoint) and each POST of one (docs/decisions.md, "Commerce
 * resources"). Reading them takes `events:read`; resending `webhooks:write`, as resending an event.
 */

const uuidText = { type: 'string', format: 'uuid' } as const;
const destinationListQuery = { ...querySchema({ ...pageProps, eventId: uuidText }), additionalProperties: false };
const destinationQuery = { ...querySchema({ expand: { type: 'string' } }), additionalProperties: false };
const attemptListQuery = { ...querySchema({ ...pageProps, destinationId: uuidText }), additionalProperties: false };
/** The published resend of an attempt declares an `id` it has no place for: taken from the query or the body. */
const attemptResendQuery = { ...querySchema({ id: uuidText, destinationId: uuidText }), additionalProperties: false };
const attemptResendBody = bodySchema({
  type: 'object',
  properties: { id: uuidText, destinationId: uuidText },
  additionalProperties: false,
});

export const destinationSchema = object({
  id: uuid,
  eventId: uuid,
  webhookId: uuid,
  organisation: uuid,
  status: { enum: ['pending', 'delivered', 'failed'] },
  createdAt: date,
  updatedAt: date,
});
const attemptSchema = object({
  id: uuid,
  destinationId: uuid,
  attempt: int,
  status: { enum: ['success', 'error', 'pending'] },
  message: nstr,
  organisation: uuid,
  sentCount: int,
  scheduledAt: { anyOf: [date, { type: 'null' }] },
  responseStatus: { type: ['integer', 'null'] },
  createdAt: date,
  updatedAt: date,
});
const destinationDetailSchema = object(destinationSchema.properties, { attempts: nestedListOf(attemptSchema) });

export const destinationView = (d: OutboxDelivery) => ({
  id: d.id,
  eventId: d.eventId,
  webhookId: d.endpointId,
  organisation: d.organisationId,
  status: d.status,
  createdAt: iso(d.createdAt),
  updatedAt: iso(d.updatedAt),
});

/** One POST of a delivery: success when the receiver answered 2xx, else error (its answer, or why none came, is the message). */
const attemptView = (organisation: string) => (a: DeliveryAttempt & { number: number }) => ({
  id: a.id,
  destinationId: a.deliveryId,
  attempt: a.number,
  status: a.responseStatus !== null && a.responseStatus >= 200 && a.responseStatus < 300 ? ('success' as const) : ('error' as const),
  message: a.responseBody,
  organisation,
  sentCount: a.number,
  scheduledAt: null,
  responseStatus: a.responseStatus,
  createdAt: iso(a.createdAt),
  updatedAt: iso(a.createdAt),
});

export const destinationRoutes = ({ webhookDestinations: destinations }: Pick<Core, 'webhookDestinations'>): Route[] => [
  ...resource({ name: 'destinations', description: "Where an event was sent: one event's delivery to one webhook endpoint" }, [
    route({
      method: 'get',
      path: '/api/destinations',
      operationId: 'listDestinations',
      summary: 'List destinations',
      description: "A page of the deliveries of the key's events to its endpoints (oldest first); `eventId` keeps one event's.",
      scope: ['events', 'read'],
      query: destinationListQuery,
      response: { status: 200, schema: listOf(destinationSchema) },
      handle: async ({ tenant, query }) => ({
        status: 200,
        body: listEnvelope(await destinations.list(tenant, { ...page(query), eventId: query.eventId }), destinationView),
      }),
    }),
    route({
      method: 'get',
      path: '/api/destinations/:id',
      operationId: 'retrieveDestination',
      summary: 'Destination detail',
      description: 'One delivery; `expand=attempts` lists its attempts (the first 100, oldest first).',
      scope: ['events', 'read'],
      query: destinationQuery,
      response: { status: 200, schema: objectOf(destinationDetailSchema) },
      handle: async ({ tenant, params, query }) => {
        const { delivery } = await destinations.get(tenant, params.id);
        if (!expandOf(query.expand, ['attempts']).has('attempts')) return { status: 200, body: objectEnvelope(destinationView(delivery)) };
        const attempts = await destinations.attempts(tenant, { limit: 100, deliveryId: delivery.id });
        const nested = nestedList(attempts.items, `/api/event-attempts?destinationId=${delivery.id}`, attemptView(delivery.organisationId));
        return { status: 200, body: objectEnvelope({ ...destinationView(delivery), attempts: { ...nested, hasMore: attempts.hasMore } }) };
      },
    }),
    route({
      method: 'post',
      path: '/api/destinations/:id',
      operationId: 'resendDestination',
      summary: 'Resend a webhook event to this destination',
      description:
        'A pending delivery is tried at once; a finished one is queued again (a new destination of the same event and endpoint). ' +
        '409 while the endpoint is disabled (enable it first: PATCH /api/webhooks/:id {enabled: true}); 404 once the event is gone (deleted after the retention).',
      scope: ['webhooks', 'write'],
      response: { status: 204 },
      async handle({ tenant, params }) {
        await destinations.resend(tenant, params.id);
        return noContent;
      },
    }),
  ]),
  ...resource({ name: 'event-attempts', description: 'Each POST of an event to a webhook endpoint, with what the receiver answered' }, [
    route({
      method: 'get',
      path: '/api/event-attempts',
      operationId: 'listEventAttempts',
      summary: 'List event attempts',
      description: "A page of the attempts to deliver the key's events (oldest first); `destinationId` keeps one destination's.",
      scope: ['events', 'read'],
      query: attemptListQuery,
      response: { status: 200, schema: listOf(attemptSchema) },
      handle: async ({ tenant, query }) => ({
        status: 200,
        body: listEnvelope(
          await destinations.attempts(tenant, { ...page(query), deliveryId: query.destinationId }),
          attemptView(tenant.organisationId),
        ),
      }),
    }),
    route({
      method: 'post',
      path: '/api/event-attempts',
      operationId: 'resendEventAttempt',
      summary: 'Resend a webhook event (the destination named by `id` or `destinationId`, in the query or the body)',
      description: 'As `POST /api/destinations/{id}`: the published document declares an id this path has no place for.',
      scope: ['webhooks', 'write'],
      query: attemptResendQuery,
      body: attemptResendBody,
      response: { status: 204 },
      async handle({ tenant, query, body }) {
        const id = query.id ?? query.destinationId ?? body?.id ?? body?.destinationId;
        if (!id) return invalid('id', 'the destination to resend is required (query or body)');
        await destinations.resend(tenant, id);
        return noContent;
      },
    }),
  ]),
];
