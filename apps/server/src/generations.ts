import type { Container } from 'inversify';
import { createV1Router, v1Serves } from '@tollgate/app-v1';
import type { ServerGenerations } from './app';

/** The generations this build mounts next to legacy. */
export function generations(container: Container): ServerGenerations {
  return {
    v1: { router: createV1Router(container), serves: v1Serves },
  };
}
