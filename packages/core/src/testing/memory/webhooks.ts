import { pageOf } from '../../support/pagination';
import type { OutboxRepository, WebhookRepository } from '../../ports';
import { type Tables, byCreated, copy, inTenant, values } from './tables';

export function outboxRepository(db: Tables): OutboxRepository {
  return {
    append: async (events) => events.forEach((e) => db.outbox.set(e.id, copy(e))),
    get: async (id) => copy(db.outbox.get(id)),
    purge: async (before, limit) => {
      const waiting = new Set([...db.deliveries.values()].filter((d) => d.status === 'pending').map((d) => d.eventId));
      const old = [...db.outbox.values()].filter((e) => e.createdAt < before && !waiting.has(e.id)).slice(0, limit);
      for (const e of old) {
        db.outbox.delete(e.id);
        for (const d of [...db.deliveries.values()])
          if (d.eventId === e.id) {
            db.deliveries.delete(d.id);
            for (const a of [...db.attempts.values()]) if (a.deliveryId === d.id) db.attempts.delete(a.id);
          }
      }
      return old.length;
    },
    page: async (tenant, q) =>
      pageOf(
        values(db.outbox).filter((e) => inTenant(e, tenant) && (!q.type || e.type === q.type)),
        q,
      ),
  };
}

export function webhookRepository(db: Tables): WebhookRepository {
  return {
    getEndpoint: async (id) => copy(db.endpoints.get(id)),
    pageEndpoints: async (tenant, q) =>
      pageOf(
        values(db.endpoints).filter((e) => inTenant(e, tenant)),
        q,
      ),
    enabledEndpoints: async (tenant) =>
      values(db.endpoints)
        .filter((e) => inTenant(e, tenant) && !e.disabledAt)
        .sort(byCreated),
    saveEndpoint: async (e) => void db.endpoints.set(e.id, copy(e)),
    deleteEndpoint: async (id) => {
      db.endpoints.delete(id);
      for (const d of values(db.deliveries)) if (d.endpointId === id) db.deliveries.delete(d.id);
      for (const a of values(db.attempts)) if (a.endpointId === id) db.attempts.delete(a.id);
    },
    addDeliveries: async (ds) => ds.forEach((d) => db.deliveries.set(d.id, copy(d))),
    getDeliveryForUpdate: async (id) => copy(db.deliveries.get(id)),
    saveDelivery: async (d) => void db.deliveries.set(d.id, copy(d)),
    // First written first: the map keeps insertion order, like the SQL adapter's sequence.
    claimNext: async (now, leaseUntil) => {
      const open = [...db.deliveries.values()].filter((d) => d.status === 'pending');
      const next = open.find(
        (d, i) =>
          d.nextAttemptAt <= now &&
          (!d.lockedUntil || d.lockedUntil <= now) &&
          !open.slice(0, i).some((p) => p.endpointId === d.endpointId && p.orderingKey === d.orderingKey),
      );
      if (!next) return undefined;
      const leased = { ...copy(next), lockedUntil: leaseUntil };
      db.deliveries.set(leased.id, copy(leased));
      return leased;
    },
    addAttempt: async (a) => void db.attempts.set(a.id, copy(a)),
    pageAttempts: async (endpointId, q) =>
      pageOf(
        values(db.attempts).filter((a) => a.endpointId === endpointId),
        q,
      ),
    countPending: async () => [...db.deliveries.values()].filter((d) => d.status === 'pending').length,
  };
}
