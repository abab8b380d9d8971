// Standalone entry: the v1 generation alone on its own port.
import { runStandalone } from '@tollgate/runtime';
import { createV1App } from './app';

runStandalone('v1', createV1App);
