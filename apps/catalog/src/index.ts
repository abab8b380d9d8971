export { catalogOpenApi, createCatalogApp, createCatalogRouter, type CatalogAppServices } from './app';
export { catalogRoutes, type CatalogServices } from './routes';
export { catalogErrorBody } from './views';
