import { arrayOf, capabilityEnds, object, ok, parseGranteeIds, querySchema, resource, route, str } from '@tollgate/http';
import type { RouteModule } from './support';

export const entitlementCheckSchema = object({
  features: arrayOf(object({ feature: str, expiry: { type: 'string', format: 'date-time' } })),
  signature: str,
});

/**
 * v3 `GET /entitlements/check`: the signed capability check (the same use case as
 * `/licenses/check`) in v3's shape: each capability with its latest end; an empty list (and an
 * empty signature) when the grantees have none.
 */
export const entitlementRoutes: RouteModule = ({ core: { checks } }, version) =>
  version === 'v2'
    ? []
    : resource({ name: 'entitlements', description: 'What grantees may use of a product, signed' }, [
        route({
          method: 'get',
          path: '/entitlements/check',
          operationId: 'checkEntitlements',
          summary: 'Check entitlements',
          description: 'The features (capabilities) the grantees hold in the product with when each ends, and a signature of them.',
          scope: ['checks', 'read'],
          query: querySchema({ granteeIds: { type: 'string', minLength: 1 }, productUuid: { type: 'string', format: 'uuid' } }, [
            'granteeIds',
            'productUuid',
          ]),
          response: { status: 200, schema: entitlementCheckSchema },
          async handle({ tenant, query }) {
            const c = await checks.check(tenant, {
              productId: query.productUuid,
              granteeIds: parseGranteeIds(query.granteeIds),
              graceDays: 0,
              encoding: 'der',
            });
            if (!c) return ok({ features: [], signature: '' });
            return ok({
              features: capabilityEnds(c).map(({ name, expiry }) => ({ feature: name, expiry })),
              signature: c.signature,
            });
          },
        }),
      ]);
