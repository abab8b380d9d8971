import type { Route } from '@tollgate/http';
import { checkoutRoutes } from './checkout';
import { eventRoutes } from './events';
import { licenseRoutes } from './licenses';
import { planRoutes } from './plans';
import { pricingTableRoutes } from './pricing-tables';
import { productRoutes } from './products';
import { signingKeyRoutes } from './signing-keys';
import { subscriptionRoutes } from './subscriptions';
import type { V1Services } from './support';
import { v1UsageRoutes } from './usage';

export { checkoutStartRoutes } from './checkout';
export type { V1Services } from './support';

/** The v1 generation's route table: one module per resource (docs/architecture.md, "Adding a route"). */
export const v1Routes = (s: V1Services): Route[] => [
  ...productRoutes(s),
  ...planRoutes(s),
  ...checkoutRoutes(s),
  ...pricingTableRoutes(s),
  ...subscriptionRoutes(s),
  ...licenseRoutes(s),
  ...v1UsageRoutes(s.core),
  ...signingKeyRoutes(s),
  ...eventRoutes(s),
];
