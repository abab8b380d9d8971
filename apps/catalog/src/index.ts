export { catalogOpenApi, createCatalogApp, createCatalogRouter, type CatalogAppServices } from './app';
export { catalogRoutes, type CatalogServices } from './routes';
export { catalogErrorBody } from './views';
export { createUsageFastPath, USAGE_FAST_PATHS, type UsageFastPath, type UsageFastPathStats } from './usage-fast-path';
