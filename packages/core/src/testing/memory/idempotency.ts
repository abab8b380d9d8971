import type { IdempotencyRepository } from '../../ports';
import { type Tables, copy } from './tables';

export function idempotencyRepository(db: Tables): IdempotencyRepository {
  return {
    find: async (orgId, key, since) => {
      const r = db.idempotency.get(`${orgId}:${key}`);
      return r && r.createdAt >= since ? copy(r) : undefined;
    },
    claim: async (rec, expiredBefore, abandonedBefore) => {
      const id = `${rec.organisationId}:${rec.key}`;
      const held = db.idempotency.get(id);
      if (held && held.createdAt >= expiredBefore && !(held.status === null && held.createdAt < abandonedBefore)) return false;
      db.idempotency.set(id, copy({ ...rec, status: null, body: null }));
      return true;
    },
    complete: async (orgId, key, status, body) => {
      const r = db.idempotency.get(`${orgId}:${key}`);
      if (r) db.idempotency.set(`${orgId}:${key}`, copy({ ...r, status, body: body === undefined ? null : body }));
    },
    release: async (orgId, key) => {
      if (db.idempotency.get(`${orgId}:${key}`)?.status === null) db.idempotency.delete(`${orgId}:${key}`);
    },
    purge: async (before) => {
      let n = 0;
      for (const [k, r] of db.idempotency) if (r.createdAt < before && db.idempotency.delete(k)) n++;
      return n;
    },
  };
}
