import { ok, querySchema, resource, route } from '@tollgate/http';
import { pricingTableSchema } from '../schemas';
import { pricingTableView } from '../views';
import type { RouteModule } from './support';

const str = { type: 'string' } as const;

/** A pricing table with its product and plans in full; v3 names the customer (`owner`), v2 may name the grantee. */
export const pricingTableRoutes: RouteModule = ({ core: { queries } }, version) =>
  resource({ name: 'pricing-tables', description: 'Pricing tables: the plans a customer chooses from' }, [
    route({
      method: 'get',
      path: '/pricing-tables/:pricingTableUuid',
      operationId: 'getPricingTable',
      summary: 'Get a pricing table',
      description:
        version === 'v3'
          ? 'A pricing table with its product (features, currencies) and plans in full, for the customer `owner`.'
          : 'A pricing table with its features, product and plans in full.',
      scope: ['pricing-tables', 'read'],
      query:
        version === 'v3'
          ? querySchema({ owner: { type: 'string', minLength: 1 }, currency: str }, ['owner'])
          : querySchema({ granteeId: str, currency: str }),
      response: { status: 200, schema: pricingTableSchema(version) },
      handle: async ({ tenant, params }) => ok(pricingTableView(version, await queries.getPricingTable(tenant, params.pricingTableUuid))),
    }),
  ]);
