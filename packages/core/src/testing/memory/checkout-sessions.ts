import type { CheckoutSessionRepository } from '../../ports';
import { pageOf } from '../../support/pagination';
import { type Tables, copy, inTenant, values } from './tables';

export function checkoutSessionRepository(db: Tables): CheckoutSessionRepository {
  return {
    get: async (id) => copy(db.checkoutSessions.get(id)),
    getForUpdate: async (id) => copy(db.checkoutSessions.get(id)),
    save: async (cs) => void db.checkoutSessions.set(cs.id, copy(cs)),
    lockDeferredLink: async (key) => ({ sessionId: db.deferredCheckouts.get(key) ?? null }),
    setDeferredLink: async (key, sessionId) => void db.deferredCheckouts.set(key, sessionId),
    pageCompleted: async (tenant, q) =>
      pageOf(
        values(db.checkoutSessions).filter(
          (cs) =>
            inTenant(cs, tenant) &&
            cs.status === 'completed' &&
            (!q.subscriptionId || cs.subscriptionId === q.subscriptionId) &&
            (!q.members || q.members.includes(cs.member)) &&
            (!q.planIds || [cs.planId, ...cs.extraItems.map((e) => e.planId)].some((p) => q.planIds!.includes(p))) &&
            (!q.search || cs.member.toLowerCase().includes(q.search.toLowerCase())),
        ),
        q,
      ),
    hasOpenForPlan: async (planId, since, providers) =>
      values(db.checkoutSessions).some(
        (cs) =>
          cs.status === 'open' &&
          cs.createdAt >= since &&
          providers.includes(cs.provider) &&
          [cs.planId, ...cs.extraItems.map((e) => e.planId)].includes(planId),
      ),
  };
}
