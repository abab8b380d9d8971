import type { Container } from 'inversify';
import type { ServerGenerations } from './app';

/** The generations this build mounts next to legacy (v1 and catalog join as they land). */
export function generations(_container: Container): ServerGenerations {
  return {};
}
