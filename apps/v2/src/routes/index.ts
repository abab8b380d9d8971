import type { Route } from '@tollgate/http';
import { billingRoutes } from './billing';
import { couponRoutes } from './coupons';
import { entitlementRoutes } from './entitlements';
import { eventRoutes } from './events';
import { featureRoutes } from './features';
import { licenseRoutes } from './licenses';
import { planRoutes } from './plans';
import { pricingTableRoutes } from './pricing-tables';
import { productRoutes } from './products';
import { seatRoutes } from './seats';
import { sessionRoutes } from './sessions';
import { signingKeyRoutes } from './signing-keys';
import { subscriptionRoutes } from './subscriptions';
import type { V2Services, Version } from './support';
import { usageRoutes } from './usage';

export { VERSIONS, type V2Services, type Version } from './support';

/** The route table of v2 or v3: one module per resource, each giving its routes for the version (docs/architecture.md). */
export const versionRoutes = (s: V2Services, version: Version): Route[] =>
  [
    productRoutes,
    planRoutes,
    pricingTableRoutes,
    featureRoutes,
    subscriptionRoutes,
    seatRoutes,
    billingRoutes,
    couponRoutes,
    licenseRoutes,
    entitlementRoutes,
    signingKeyRoutes,
    usageRoutes,
    sessionRoutes,
    eventRoutes,
  ].flatMap((m) => m(s, version));
