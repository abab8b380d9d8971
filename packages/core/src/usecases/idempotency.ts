import { createHash } from 'node:crypto';
import { ErrorCodes, fail, invalid } from '../errors';
import type { Id } from '../model';
import type { Clock, UnitOfWork } from '../ports';

/** How long an idempotency key is remembered. */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
export const IDEMPOTENCY_KEY_MAX = 255;

/** Method, path and a hash of the body: "the same request". */
export const requestFingerprint = (method: string, path: string, body: unknown): string =>
  `${method.toUpperCase()} ${path} ${createHash('sha256').update(JSON.stringify(body ?? null)).digest('hex')}`;

/**
 * `idempotency-key` on writes: the same key with the same request within 24 hours replays the
 * first answer (status and body); the same key with another request is refused.
 */
export class IdempotencyService {
  constructor(private readonly deps: { uow: UnitOfWork; clock: Clock }) {}

  /** The earlier answer to replay, or undefined for a key not seen in the last 24 hours. */
  async lookup(organisationId: Id, key: string, fingerprint: string): Promise<{ status: number; body: unknown } | undefined> {
    if (key.length === 0 || key.length > IDEMPOTENCY_KEY_MAX) invalid('idempotency-key', `must be 1 to ${IDEMPOTENCY_KEY_MAX} characters`);
    const since = new Date(this.deps.clock.now().getTime() - IDEMPOTENCY_TTL_MS);
    const found = await this.deps.uow.read((r) => r.idempotency.find(organisationId, key, since));
    if (!found) return undefined;
    if (found.fingerprint !== fingerprint) fail(ErrorCodes.IDEMPOTENCY_KEY_REUSED, 'this idempotency-key was used for a different request in the last 24 hours');
    return { status: found.status, body: found.body };
  }

  /** Remembers the answer to a request under its key (the first answer kept wins). */
  async remember(organisationId: Id, key: string, fingerprint: string, status: number, body: unknown): Promise<void> {
    const now = this.deps.clock.now();
    await this.deps.uow.run(async (r) => {
      await r.idempotency.purge(new Date(now.getTime() - IDEMPOTENCY_TTL_MS));
      await r.idempotency.save({ organisationId, key, fingerprint, status, body, createdAt: now });
    });
  }
}
