import type { CheckoutSessionRepository } from '../../ports';
import { type Tables, copy } from './tables';

export function checkoutSessionRepository(db: Tables): CheckoutSessionRepository {
  return {
    get: async (id) => copy(db.checkoutSessions.get(id)),
    getForUpdate: async (id) => copy(db.checkoutSessions.get(id)),
    save: async (cs) => void db.checkoutSessions.set(cs.id, copy(cs)),
  };
}
