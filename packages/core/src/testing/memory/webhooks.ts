import { isWebhookSuccess } from '../../domain/webhook-retries';
import { compareKeys, pageOf } from '../../support/pagination';
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
        values(db.outbox).filter((e) => inTenant(e, tenant) && (!q.types?.length || q.types.includes(e.type))),
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
    getEventForDelivery: async (id) => copy(db.outbox.get(id)),
    saveDelivery: async (d) => void db.deliveries.set(d.id, copy(d)),
    // The SQL adapter's claim: fair by turns, capped by live leases; the map keeps insertion (sequence) order.
    claimNext: async (now, leaseUntil, caps) => {
      const open = [...db.deliveries.values()].filter((d) => d.status === 'pending');
      const leased = open.filter((d) => d.lockedUntil && d.lockedUntil > now);
      const turn = (key: string) => db.webhookTurns.get(key) ?? 0;
      const candidates = open.filter(
        (d, i) =>
          d.nextAttemptAt <= now &&
          (!d.lockedUntil || d.lockedUntil <= now) &&
          !open.slice(0, i).some((p) => p.endpointId === d.endpointId && p.orderingKey === d.orderingKey) &&
          leased.filter((l) => l.endpointId === d.endpointId).length < (caps?.perEndpoint ?? Infinity) &&
          leased.filter((l) => l.organisationId === d.organisationId).length < (caps?.perOrganisation ?? Infinity),
      );
      const next = candidates
        .map((d, i) => ({ d, i }))
        .sort(
          (a, b) =>
            turn(`o:${a.d.organisationId}`) - turn(`o:${b.d.organisationId}`) ||
            turn(`e:${a.d.endpointId}`) - turn(`e:${b.d.endpointId}`) ||
            a.i - b.i,
        )[0]?.d;
      if (!next) return undefined;
      const served = turn('#') + 1;
      db.webhookTurns.set('#', served);
      db.webhookTurns.set(`o:${next.organisationId}`, served);
      db.webhookTurns.set(`e:${next.endpointId}`, served);
      const claimed = { ...copy(next), lockedUntil: leaseUntil };
      db.deliveries.set(claimed.id, copy(claimed));
      return claimed;
    },
    getDelivery: async (id) => copy(db.deliveries.get(id)),
    pageDeliveries: async (tenant, q) =>
      pageOf(
        values(db.deliveries).filter((d) => {
          const e = db.endpoints.get(d.endpointId);
          return !!e && inTenant(e, tenant) && (!q.eventId || d.eventId === q.eventId) && (!q.endpointId || d.endpointId === q.endpointId);
        }),
        q,
      ),
    addAttempt: async (a) => void db.attempts.set(a.id, copy(a)),
    pageTenantAttempts: async (tenant, q) => {
      const mine = values(db.attempts).filter((a) => {
        const e = db.endpoints.get(a.endpointId);
        return !!e && inTenant(e, tenant) && (!q.deliveryId || a.deliveryId === q.deliveryId);
      });
      const page = pageOf(mine, q);
      const numberOf = (a: (typeof mine)[number]) =>
        values(db.attempts).filter((b) => b.deliveryId === a.deliveryId && compareKeys(b, a) <= 0).length;
      return { ...page, items: page.items.map((a) => ({ ...a, number: numberOf(a) })) };
    },
    pageAttempts: async (endpointId, q) =>
      pageOf(
        values(db.attempts).filter((a) => a.endpointId === endpointId),
        q,
      ),
    succeededSince: async (endpointId, since) =>
      values(db.attempts).some((a) => a.endpointId === endpointId && a.createdAt >= since && isWebhookSuccess(a.responseStatus)),
    countPending: async () => [...db.deliveries.values()].filter((d) => d.status === 'pending').length,
  };
}
