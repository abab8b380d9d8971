import { canonicalEventType, EVENT_TYPE_SPELLINGS, invalid, type Core } from '@tollgate/core';
import { bool, date, int, querySchema, resource, route, str, bodySchema, uuid, type Route } from '@tollgate/http';
import { listOf, nestedListOf, object, objectOf } from '../response-schemas';
import { pageProps } from '../schemas';
import { listEnvelope, nestedList, objectEnvelope, outboxEventView, pageQueryOf as page } from '../views';
import { destinationSchema, destinationView } from './destinations';
import { expandOf } from './products';

const eventListQuery = {
  ...querySchema({ ...pageProps, type: { enum: [...EVENT_TYPE_SPELLINGS] }, types: { type: 'string', maxLength: 1000 } }),
  additionalProperties: false,
};
const eventDetailQuery = { ...querySchema({ expand: { type: 'string' } }), additionalProperties: false };
const resendBody = bodySchema({
  type: 'object',
  properties: { endpointId: { type: 'string', format: 'uuid' } },
  additionalProperties: false,
});

const eventProps = { id: uuid, organisation: uuid, type: str, isTest: bool, payload: { type: 'object' }, createdAt: date, updatedAt: date };
const webhookSchema = object({ id: uuid, url: str, organisation: uuid, secret: { type: 'null' }, createdAt: date, updatedAt: date });
const eventSchema = object(eventProps, { destinations: nestedListOf(object(destinationSchema.properties, { webhook: webhookSchema })) });
/** A resent event, with how many deliveries were queued. */
const resentSchema = object({ ...eventProps, deliveries: int });

/** `a,b` (or `[a,b]`): the values of a comma-separated query parameter. */
const csv = (raw: string | undefined): string[] =>
  (raw ?? '')
    .replace(/^\[|\]$/g, '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

/** The events of the outbox (what the webhooks deliver). */
export const eventRoutes = ({ webhookEvents, webhookDestinations }: Pick<Core, 'webhookEvents' | 'webhookDestinations'>): Route[] =>
  resource({ name: 'events', description: 'The events of changes, as the webhooks deliver them' }, [
    route({
      method: 'get',
      path: '/api/events',
      operationId: 'listEvents',
      summary: 'List events (oldest first)',
      description:
        "A page of the organisation's events in the key's mode; `types=a,b` (or `type`) keeps those types, in either spelling (`subscription.created`, `subscription_created`).",
      scope: ['events', 'read'],
      query: eventListQuery,
      response: { status: 200, schema: listOf(object(eventProps)) },
      handle: async ({ tenant, query }) => {
        const types = [...(query.type ? [query.type] : []), ...csv(query.types)];
        for (const t of types) if (!canonicalEventType(t)) invalid('types', `${t} is not an event type`);
        return { status: 200, body: listEnvelope(await webhookEvents.list(tenant, { ...page(query), types }), outboxEventView) };
      },
    }),
    route({
      method: 'get',
      path: '/api/events/:id',
      operationId: 'retrieveEvent',
      summary: 'Event detail',
      description: 'One event with its payload; `expand=destinations` lists where it was sent (each with its endpoint).',
      scope: ['events', 'read'],
      query: eventDetailQuery,
      response: { status: 200, schema: objectOf(eventSchema) },
      handle: async ({ tenant, params, query }) => {
        const event = await webhookEvents.get(tenant, params.id);
        if (!expandOf(query.expand, ['destinations']).has('destinations'))
          return { status: 200, body: objectEnvelope(outboxEventView(event)) };
        const { page: sent, endpoints } = await webhookDestinations.ofEvent(tenant, event.id, 100);
        const destinations = nestedList(sent.items, `/api/destinations?eventId=${event.id}`, (d) => {
          const e = endpoints.get(d.endpointId);
          return {
            ...destinationView(d),
            webhook: e && {
              id: e.id,
              url: e.url,
              organisation: e.organisationId,
              secret: null,
              createdAt: e.createdAt.toISOString(),
              updatedAt: e.updatedAt.toISOString(),
            },
          };
        });
        return {
          status: 200,
          body: objectEnvelope({ ...outboxEventView(event), destinations: { ...destinations, hasMore: sent.hasMore } }),
        };
      },
    }),
    route({
      method: 'post',
      path: '/api/events/:id/resend',
      operationId: 'resendEvent',
      summary: 'Deliver an event again (to one endpoint, or to every enabled endpoint that receives its type)',
      description: 'Queues the event again; the answer says how many deliveries were queued.',
      scope: ['webhooks', 'write'],
      body: resendBody,
      response: { status: 202, schema: objectOf(resentSchema) },
      async handle({ tenant, params, body }) {
        const { event, deliveries } = await webhookEvents.resend(tenant, params.id, body?.endpointId);
        return { status: 202, body: objectEnvelope({ ...outboxEventView(event), deliveries }) };
      },
    }),
  ]);
