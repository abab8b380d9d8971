import { WEBHOOK_EVENT_TYPES, type Core } from '@tollgate/core';
import { bool, date, int, querySchema, resource, route, str, bodySchema, uuid, type Route } from '@tollgate/http';
import { listOf, object, objectOf } from '../response-schemas';
import { pageProps } from '../schemas';
import { listEnvelope, objectEnvelope, outboxEventView, pageQueryOf as page } from '../views';

const eventListQuery = { ...querySchema({ ...pageProps, type: { enum: [...WEBHOOK_EVENT_TYPES] } }), additionalProperties: false };
const resendBody = bodySchema({
  type: 'object',
  properties: { endpointId: { type: 'string', format: 'uuid' } },
  additionalProperties: false,
});

const eventProps = { id: uuid, organisation: uuid, type: str, isTest: bool, payload: { type: 'object' }, createdAt: date };
const eventSchema = object(eventProps);
/** A resent event, with how many deliveries were queued. */
const resentSchema = object({ ...eventProps, deliveries: int });

/** The events of the outbox (what the webhooks deliver). */
export const eventRoutes = ({ webhooks }: Pick<Core, 'webhooks'>): Route[] =>
  resource({ name: 'events', description: 'The events of changes, as the webhooks deliver them' }, [
    route({
      method: 'get',
      path: '/api/events',
      operationId: 'listEvents',
      summary: 'List events (oldest first)',
      description: "A page of the organisation's events in the key's mode, optionally of one type.",
      scope: ['events', 'read'],
      query: eventListQuery,
      response: { status: 200, schema: listOf(eventSchema) },
      handle: async ({ tenant, query }) => ({
        status: 200,
        body: listEnvelope(await webhooks.events(tenant, { ...page(query), type: query.type }), outboxEventView),
      }),
    }),
    route({
      method: 'get',
      path: '/api/events/:id',
      operationId: 'getEvent',
      summary: 'Event detail',
      description: 'One event with its payload.',
      scope: ['events', 'read'],
      response: { status: 200, schema: objectOf(eventSchema) },
      handle: async ({ tenant, params }) => ({
        status: 200,
        body: objectEnvelope(outboxEventView(await webhooks.event(tenant, params.id))),
      }),
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
        const { event, deliveries } = await webhooks.resend(tenant, params.id, body?.endpointId);
        return { status: 202, body: objectEnvelope({ ...outboxEventView(event), deliveries }) };
      },
    }),
  ]);
