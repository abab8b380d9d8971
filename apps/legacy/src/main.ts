// Standalone entry: the legacy generation alone on its own port.
import { runStandalone } from '@tollgate/runtime';
import { createLegacyApp } from './app';

runStandalone('legacy', createLegacyApp);
