import { date, int, nstr, object, ok, resource, route, str, uuid, type Route } from '@tollgate/http';
import { eventView } from '../views';
import type { V1Services } from './support';

export const eventSchema = object({
  uuid,
  type: str,
  status: { enum: ['queued', 'pending', 'success', 'failed'] },
  subscriptionUuid: { anyOf: [uuid, { type: 'null' }] },
  attempts: int,
  error: nstr,
  errorCode: nstr,
  createdAt: date,
  updatedAt: date,
});

/** Events (beyond the contract): the status of an accepted seat change. */
export const eventRoutes = ({ core: { worker } }: V1Services): Route[] =>
  resource({ name: 'events', description: 'Accepted changes (seat changes) and how they went' }, [
    route({
      method: 'get',
      path: '/events/:eventUuid',
      operationId: 'getEvent',
      summary: 'Status of an accepted change',
      description: 'Whether an accepted seat change is pending, applied or failed (and why).',
      scope: ['subscriptions', 'read'],
      response: { status: 200, schema: eventSchema },
      handle: async ({ tenant, params }) => ok(eventView(await worker.get(tenant, params.eventUuid))),
    }),
  ]);
