// Standalone entry: the catalog generation alone on its own port.
import { runStandalone } from '@tollgate/runtime';
import { createCatalogApp } from './app';

runStandalone('catalog', createCatalogApp);
