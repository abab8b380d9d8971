import { ok, resource, route } from '@tollgate/http';
import { eventV2Schema } from '../schemas';
import { eventV2 } from '../views';
import type { RouteModule } from './support';

/** The status of an accepted change (a seat change), as the real service's events show it. */
export const eventRoutes: RouteModule = ({ core: { worker } }) =>
  resource({ name: 'events', description: 'Accepted changes (seat changes) and how they went' }, [
    route({
      method: 'get',
      path: '/events/:eventUuid',
      operationId: 'getEvent',
      summary: 'Status of an accepted change',
      description: 'Whether an accepted seat change is queued, pending, applied (`success`) or failed, and why.',
      scope: ['subscriptions', 'read'],
      response: { status: 200, schema: eventV2Schema },
      handle: async ({ tenant, params }) => ok(eventV2(await worker.get(tenant, params.eventUuid))),
    }),
  ]);
