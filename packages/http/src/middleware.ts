import { randomUUID } from 'node:crypto';
import express, { type RequestHandler } from 'express';
import type { Logger } from './errors';

/** A request id from `x-request-id` (if sane) or a new one, echoed back. */
export const requestId: RequestHandler = (req, res, next) => {
  const given = req.header('x-request-id');
  const id = given && /^[\w.-]{1,100}$/.test(given) ? given : randomUUID();
  res.locals.requestId = id;
  res.setHeader('x-request-id', id);
  next();
};

/** JSON bodies up to 1 MB; anything else is refused by the error table. */
export const jsonBody = express.json({ limit: '1mb', strict: false });

/** One log line per request: method, path, status, time. Never headers (they hold API keys). */
export function requestLog(logger: Logger): RequestHandler {
  return (req, res, next) => {
    const start = process.hrtime.bigint();
    res.on('finish', () => {
      logger.info('request', {
        requestId: res.locals.requestId, method: req.method, path: req.path, status: res.statusCode,
        ms: Number((process.hrtime.bigint() - start) / 1000n) / 1000,
      });
    });
    next();
  };
}

/** The query string value of a parameter given once; arrays (repeated parameters) are refused later by validation. */
export const queryOf = (q: unknown): Record<string, unknown> => (q && typeof q === 'object' ? { ...(q as Record<string, unknown>) } : {});

export interface HttpAppOptions {
  logger: Logger;
  logRequests: boolean;
}

/**
 * The plumbing every generation's app shares: request ids, request log, then routes that need the
 * raw body (signed webhooks), then JSON bodies, then the generation's routes.
 */
export function createHttpApp(options: HttpAppOptions, mount: (app: express.Express) => void, beforeBody?: (app: express.Express) => void): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('query parser', 'simple');
  app.use(requestId);
  if (options.logRequests) app.use(requestLog(options.logger));
  beforeBody?.(app);
  app.use(jsonBody);
  mount(app);
  return app;
}
