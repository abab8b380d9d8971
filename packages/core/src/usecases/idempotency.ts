import { createHash } from 'node:crypto';
import { ErrorCodes, fail, invalid } from '../errors';
import type { Id } from '../model';
import type { Clock, UnitOfWork } from '../ports';

/** How long an idempotency key is remembered. */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
export const IDEMPOTENCY_KEY_MAX = 255;
/** An in-flight claim older than this belongs to a request that died: the key may be claimed again. */
export const IDEMPOTENCY_ABANDONED_MS = 60_000;
/** How long a request waits for the first request of its key to finish before answering 409. */
export const IDEMPOTENCY_WAIT_MS = 10_000;

/** Method, path and a hash of the body: "the same request". */
export const requestFingerprint = (method: string, path: string, body: unknown): string =>
  `${method.toUpperCase()} ${path} ${createHash('sha256')
    .update(JSON.stringify(body ?? null))
    .digest('hex')}`;

export type IdempotencyStart = { kind: 'run' } | { kind: 'replay'; status: number; body: unknown };

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * `idempotency-key` on writes, safe under concurrency: the first request claims the key in the
 * database (insert first), runs, and stores its answer; a request with the same key and body waits
 * for that answer and replays it (or gets 409 while it is still running after IDEMPOTENCY_WAIT_MS);
 * the same key with another request is refused. Kept 24 hours.
 */
export class IdempotencyService {
  constructor(private readonly deps: { uow: UnitOfWork; clock: Clock; waitMs?: number }) {}

  /** Claims the key for this request, or gives the earlier answer to replay. */
  async begin(organisationId: Id, key: string, fingerprint: string): Promise<IdempotencyStart> {
    if (key.length === 0 || key.length > IDEMPOTENCY_KEY_MAX) invalid('idempotency-key', `must be 1 to ${IDEMPOTENCY_KEY_MAX} characters`);
    const started = this.deps.clock.monotonicMs();
    for (let pause = 20; ; pause = Math.min(pause * 2, 250)) {
      const now = this.deps.clock.now();
      const since = new Date(now.getTime() - IDEMPOTENCY_TTL_MS);
      const claimed = await this.deps.uow.run((r) =>
        r.idempotency.claim(
          { organisationId, key, fingerprint, status: null, body: null, createdAt: now },
          since,
          new Date(now.getTime() - IDEMPOTENCY_ABANDONED_MS),
        ),
      );
      if (claimed) return { kind: 'run' };
      const found = await this.deps.uow.read((r) => r.idempotency.find(organisationId, key, since));
      if (found && found.fingerprint !== fingerprint)
        fail(ErrorCodes.IDEMPOTENCY_KEY_REUSED, 'this idempotency-key was used for a different request in the last 24 hours');
      if (found && found.status !== null) return { kind: 'replay', status: found.status, body: found.body };
      if (this.deps.clock.monotonicMs() - started >= (this.deps.waitMs ?? IDEMPOTENCY_WAIT_MS)) {
        fail(ErrorCodes.IDEMPOTENCY_KEY_IN_USE, 'a request with this idempotency-key is still in progress; retry later');
      }
      await sleep(pause);
    }
  }

  /** Stores the answer of a request that claimed its key. */
  async complete(organisationId: Id, key: string, status: number, body: unknown): Promise<void> {
    const now = this.deps.clock.now();
    await this.deps.uow.run(async (r) => {
      await r.idempotency.complete(organisationId, key, status, body);
      await r.idempotency.purge(new Date(now.getTime() - IDEMPOTENCY_TTL_MS));
    });
  }

  /** The claiming request failed: its key may be used again. */
  async release(organisationId: Id, key: string): Promise<void> {
    await this.deps.uow.run((r) => r.idempotency.release(organisationId, key));
  }
}
