export { createLegacyApp, createLegacyRouter, legacyOpenApi, type LegacyAppServices } from './app';
export { legacyRoutes, type LegacyServices } from './routes';
export { legacyFeatureWithOptionsSchema, legacyPlanFeatureSchema } from './routes';
