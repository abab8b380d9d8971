import { ok, querySchema, resource, route } from '@tollgate/http';
import { featureSchema } from '../schemas';
import { featureView } from '../views';
import { paged, pageOfList, pageProps, pageSchema, type RouteModule } from './support';

/** v3 `GET /features`: a product's features by sort order, a page at a time. */
export const featureRoutes: RouteModule = ({ core: { queries } }, version) =>
  version === 'v2'
    ? []
    : resource({ name: 'features', description: "A product's features (what plans give values of)" }, [
        route({
          method: 'get',
          path: '/features',
          operationId: 'getFeatures',
          summary: 'Get features (a page)',
          description: "A page of the product's features in their sort order, each with its enum options.",
          scope: ['products', 'read'],
          query: querySchema({ ...pageProps, productUuid: { type: 'string', format: 'uuid' } }, ['productUuid']),
          response: { status: 200, schema: pageSchema(featureSchema('v3')) },
          async handle({ tenant, query }) {
            const features = (await queries.productFeatures(tenant, query.productUuid)).map((f) => featureView('v3', f));
            return ok(paged(pageOfList(features, (f) => f.uuid, query)));
          },
        }),
      ]);
