import type { Request, RequestHandler, Response } from 'express';
import { requestFingerprint, type IdempotencyService } from '@tollgate/core';
import { tenantOf, type AuthContext } from './auth';
import { sendEmpty, sendJson } from './json';

/** What a route's work answers, before it is sent (so it can be kept under an idempotency key). */
export interface Answered {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
  /**
   * What is kept for a replay instead of `body`: an answer that shows a secret once (a new API
   * key, a webhook endpoint's secret) keeps it without, so the secret is never stored in the clear.
   */
  kept?: unknown;
}

/**
 * `idempotency-key` on a write: the first request with a key runs, and its answer is kept in the
 * same transaction as its work (core's `IdempotencyService.perform`); the same request again
 * replays that answer (`idempotent-replayed: true`), also while the first is still running (it
 * waits for it); another request under the same key is 409. A key belongs to the organisation,
 * the mode of the API key (live or test) and the route: it never replays across any of them.
 * The request is also the API key that sent it (its id is in the fingerprint): another key of the
 * organisation sending the same key is 409, never the first key's answer (which a key of fewer
 * scopes could otherwise read: a new secret key's value, say).
 * The route is its definition's path (`template`), not the raw one: the router is case-insensitive
 * and non-strict, so `/api/products/` and `/API/products` are the same route and must not run twice.
 * Without the header the work just runs.
 */
export function idempotent(
  service: IdempotencyService,
  work: (req: Request, res: Response) => Promise<Answered>,
  send: (res: Response, a: Answered) => Promise<void>,
  template: string,
): RequestHandler {
  return async (req, res) => {
    const key = req.header('idempotency-key');
    if (key === undefined) return send(res, await work(req, res));
    const { organisationId, isTest } = tenantOf(res);
    const sender = (res.locals.auth as AuthContext).key.id;
    const route = `${req.method.toUpperCase()} ${req.baseUrl.toLowerCase()}${template}`;
    // What the request names: the route, its parameters and its query (not how the path was spelt).
    const query = req.originalUrl.includes('?') ? req.originalUrl.slice(req.originalUrl.indexOf('?')) : '';
    const fingerprint = requestFingerprint(req.method, `${route} ${JSON.stringify(req.params)}${query} by ${sender}`, req.body);
    const outcome = await service.perform({ organisationId, isTest, key, route }, fingerprint, async () => {
      const answered = await work(req, res);
      return { status: answered.status, body: answered.kept === undefined ? answered.body : answered.kept, answered };
    });
    if (outcome.kind === 'ran') return send(res, outcome.answer.answered);
    res.setHeader('idempotent-replayed', 'true');
    return outcome.body === undefined || outcome.body === null
      ? sendEmpty(res, outcome.status)
      : sendJson(res, outcome.status, outcome.body);
  };
}

/**
 * The `unique-key` header of the v1 and v2 usage routes. The real clients copy an optional key
 * into their headers, so a client without one sends the literal `undefined` (fetch stringifies it):
 * that, like no header, is no key. Read as a key, every keyless call after the first would replay
 * the first one's answer and its units would be lost. An empty key stays an error (400).
 */
export function uniqueKeyOf(req: Request): string | undefined {
  const key = req.get('unique-key');
  return key === undefined || key === 'undefined' ? undefined : key;
}
