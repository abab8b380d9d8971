import { ok, querySchema, resource, route } from '@tollgate/http';
import { pricingTableSchema } from '../schemas';
import { pricingTableView } from '../views';
import { currencyOf, type RouteModule } from './support';

const str = { type: 'string' } as const;

/** A pricing table with its product and plans in full; v3 names the customer (`owner`), v2 may name the grantee. */
export const pricingTableRoutes: RouteModule = ({ core: { queries, subscriptionAdmin } }, version) =>
  resource({ name: 'pricing-tables', description: 'Pricing tables: the plans a customer chooses from' }, [
    route({
      method: 'get',
      path: '/pricing-tables/:pricingTableUuid',
      operationId: 'getPricingTable',
      summary: 'Get a pricing table',
      description:
        version === 'v3'
          ? 'A pricing table with its product (features, currencies) and plans in full, for the customer `owner` (the plans it subscribes to marked `isSubscribed`); `currency` shows only its prices.'
          : 'A pricing table with its features, product and plans in full; `granteeId` marks the plans the grantee holds (`isSubscribed`), `currency` shows only its prices.',
      scope: ['pricing-tables', 'read'],
      query:
        version === 'v3'
          ? querySchema({ owner: { type: 'string', minLength: 1 }, currency: str }, ['owner'])
          : querySchema({ granteeId: str, currency: str }),
      response: { status: 200, schema: pricingTableSchema(version) },
      async handle({ tenant, params, query }) {
        const view = await queries.getPricingTable(tenant, params.pricingTableUuid);
        const q = query as { owner?: string; granteeId?: string; currency?: string };
        const who = { owner: q.owner, granteeId: q.granteeId };
        const held = (who.owner ?? who.granteeId) ? await subscriptionAdmin.plansHeld(tenant, view.catalog.product.id, who) : undefined;
        return ok(pricingTableView(version, view, { currency: currencyOf(view.catalog, q.currency), held }));
      },
    }),
  ]);
