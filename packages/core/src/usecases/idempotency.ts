import { createHash } from 'node:crypto';
import { ErrorCodes, fail, invalid } from '../errors';
import type { IdempotencyScope } from '../model';
import type { Clock, UnitOfWork } from '../ports';

/** How long an idempotency key is remembered. */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
export const IDEMPOTENCY_KEY_MAX = 255;
/** How long a request waits for the first request of its key to finish before answering 409. */
export const IDEMPOTENCY_WAIT_MS = 10_000;

/** Method, path and a hash of the body: "the same request". */
export const requestFingerprint = (method: string, path: string, body: unknown): string =>
  `${method.toUpperCase()} ${path} ${createHash('sha256')
    .update(JSON.stringify(body ?? null))
    .digest('hex')}`;

/** What a request answered, as it is kept under its key. */
export interface IdempotentAnswer {
  status: number;
  body?: unknown;
}

export type IdempotentOutcome<A extends IdempotentAnswer> = { kind: 'ran'; answer: A } | { kind: 'replay'; status: number; body: unknown };

/**
 * `idempotency-key` on writes, scoped by organisation, mode, key and route: the first request
 * claims the key, does its work and stores its answer in ONE transaction, so a crash anywhere
 * leaves either nothing (a retry runs) or the work with its answer (a retry replays), never the
 * work without its answer. A request with the same key and body while the first still runs waits
 * for it (the database holds it at the claim) and replays its answer, or gets 409 after
 * IDEMPOTENCY_WAIT_MS; the same key with another request is refused. Kept 24 hours.
 */
export class IdempotencyService {
  constructor(private readonly deps: { uow: UnitOfWork; clock: Clock; waitMs?: number }) {}

  /** Runs `work` under the key (its use cases join this transaction), or replays the earlier answer. */
  async perform<A extends IdempotentAnswer>(
    scope: IdempotencyScope,
    fingerprint: string,
    work: () => Promise<A>,
  ): Promise<IdempotentOutcome<A>> {
    if (scope.key.length === 0 || scope.key.length > IDEMPOTENCY_KEY_MAX)
      invalid('idempotency-key', `must be 1 to ${IDEMPOTENCY_KEY_MAX} characters`);
    const now = this.deps.clock.now();
    const since = new Date(now.getTime() - IDEMPOTENCY_TTL_MS);
    return this.deps.uow.run(async (r): Promise<IdempotentOutcome<A>> => {
      const claimed = await r.idempotency.claim(
        { ...scope, fingerprint, status: null, body: null, createdAt: now },
        since,
        this.deps.waitMs ?? IDEMPOTENCY_WAIT_MS,
      );
      if (!claimed) {
        const found = await r.idempotency.find(scope, since);
        if (found && found.fingerprint !== fingerprint)
          fail(ErrorCodes.IDEMPOTENCY_KEY_REUSED, 'this idempotency-key was used for a different request in the last 24 hours');
        if (!found || found.status === null)
          return fail(ErrorCodes.IDEMPOTENCY_KEY_IN_USE, 'a request with this idempotency-key is still in progress; retry later');
        return { kind: 'replay', status: found.status, body: found.body };
      }
      const answer = await work();
      await r.idempotency.complete(scope, answer.status, answer.body);
      await r.idempotency.purge(new Date(now.getTime() - IDEMPOTENCY_TTL_MS));
      return { kind: 'ran', answer };
    });
  }
}
