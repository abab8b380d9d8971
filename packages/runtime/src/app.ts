import type { Express } from 'express';
import type { Container } from 'inversify';
import { createHttpApp, type Logger } from '@tollgate/http';
import type { Config } from './config';
import { TOKENS } from './tokens';

/** A generation's express app with the shared plumbing, configured from the container. */
export function wrapApp(container: Container, mount: (app: Express) => void, beforeBody?: (app: Express) => void): Express {
  const config = container.get<Config>(TOKENS.Config);
  return createHttpApp({ logger: container.get<Logger>(TOKENS.Logger), logRequests: config.logRequests }, mount, beforeBody);
}
