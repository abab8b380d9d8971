export { createCatalogApp, createCatalogMount, createCatalogRouter } from './app';
