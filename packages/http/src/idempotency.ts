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
 * `idempotency-key` on a write: the first request with a key runs and its answer is kept; the same
 * request again replays that answer (`idempotent-replayed: true`), also while the first is still
 * running (it waits for it); another request under the same key is 409. Without the header the
 * work just runs.
 */
export function idempotent(
  service: IdempotencyService,
  work: (req: Request, res: Response) => Promise<Answered>,
  send: (res: Response, a: Answered) => Promise<void>,
): RequestHandler {
  return async (req, res) => {
    const key = req.header('idempotency-key');
    if (key === undefined) return send(res, await work(req, res));
    const { organisationId } = tenantOf(res);
    const fingerprint = requestFingerprint(req.method, req.originalUrl, req.body);
    const start = await service.begin(organisationId, key, fingerprint);
    if (start.kind === 'replay') {
      res.setHeader('idempotent-replayed', 'true');
      return start.body === undefined || start.body === null ? sendEmpty(res, start.status) : sendJson(res, start.status, start.body);
    }
    let answer: Answered;
    try {
      answer = await work(req, res);
    } catch (e) {
      await service.release(organisationId, key);
      throw e;
    }
    await service.complete(organisationId, key, answer.status, answer.body);
    await send(res, answer);
  };
}
