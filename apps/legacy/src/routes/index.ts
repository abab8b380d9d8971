import type { Core } from '@tollgate/core';
import type { Route } from '@tollgate/http';
import { licenseRoutes } from './licenses';
import { planRoutes } from './plans';
import { productRoutes } from './products';

export { legacyFeatureWithOptionsSchema } from './products';
export { legacyPlanFeatureSchema } from './plans';

/** What the legacy generation needs of the core. */
export type LegacyServices = Pick<Core, 'apiKeys' | 'queries' | 'licenses' | 'checks'>;

/** The legacy generation's route table: one module per resource (docs/architecture.md, "Adding a route"). */
export const legacyRoutes = (core: LegacyServices): Route[] => [...productRoutes(core), ...planRoutes(core), ...licenseRoutes(core)];
