import type { Request, RequestHandler, Response } from 'express';
import { requestFingerprint, type IdempotencyService } from '@tollgate/core';
import { tenantOf } from './auth';
import { sendEmpty, sendJson } from './json';

/** What a route's work answers, before it is sent (so it can be kept under an idempotency key). */
export interface Answered {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

/**
 * `idempotency-key` on a write: the first request with a key runs, and its answer is kept in the
 * same transaction as its work (core's `IdempotencyService.perform`); the same request again
 * replays that answer (`idempotent-replayed: true`), also while the first is still running (it
 * waits for it); another request under the same key is 409. A key belongs to the organisation,
 * the mode of the API key (live or test) and the route: it never replays across any of them.
 * Without the header the work just runs.
 */
export function idempotent(
  service: IdempotencyService,
  work: (req: Request, res: Response) => Promise<Answered>,
  send: (res: Response, a: Answered) => Promise<void>,
): RequestHandler {
  return async (req, res) => {
    const key = req.header('idempotency-key');
    if (key === undefined) return send(res, await work(req, res));
    const { organisationId, isTest } = tenantOf(res);
    const path = req.originalUrl.split('?')[0];
    const fingerprint = requestFingerprint(req.method, req.originalUrl, req.body);
    const outcome = await service.perform({ organisationId, isTest, key, route: `${req.method.toUpperCase()} ${path}` }, fingerprint, () =>
      work(req, res),
    );
    if (outcome.kind === 'ran') return send(res, outcome.answer);
    res.setHeader('idempotent-replayed', 'true');
    return outcome.body === undefined || outcome.body === null
      ? sendEmpty(res, outcome.status)
      : sendJson(res, outcome.status, outcome.body);
  };
}
