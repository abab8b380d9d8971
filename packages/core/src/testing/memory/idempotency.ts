import type { IdempotencyScope } from '../../model';
import type { IdempotencyRepository } from '../../ports';
import { type Tables, copy } from './tables';

const scopeId = (s: IdempotencyScope) => `${s.organisationId}|${s.isTest}|${s.route}|${s.key}`;

export function idempotencyRepository(db: Tables): IdempotencyRepository {
  return {
    find: async (scope, since) => {
      const r = db.idempotency.get(scopeId(scope));
      return r && r.createdAt >= since ? copy(r) : undefined;
    },
    // Transactions here run one at a time: a claim is never met in flight.
    claim: async (rec, expiredBefore) => {
      const held = db.idempotency.get(scopeId(rec));
      if (held && held.createdAt >= expiredBefore && held.status !== null) return false;
      db.idempotency.set(scopeId(rec), copy({ ...rec, status: null, body: null }));
      return true;
    },
    complete: async (scope, status, body) => {
      const r = db.idempotency.get(scopeId(scope));
      if (r) db.idempotency.set(scopeId(scope), copy({ ...r, status, body: body === undefined ? null : body }));
    },
    purge: async (before) => {
      let n = 0;
      for (const [k, r] of db.idempotency) if (r.createdAt < before && db.idempotency.delete(k)) n++;
      return n;
    },
  };
}
