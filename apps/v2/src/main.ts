// Standalone entry: the v2 and v3 generations alone on their own port.
import { runStandalone } from '@tollgate/runtime';
import { createV2App } from './app';

runStandalone('v2', createV2App);
