import { ok, resource, route, type Route } from '@tollgate/http';
import { eventSchema } from '../schemas';
import { eventView } from '../views';
import type { V1Services } from './support';

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
