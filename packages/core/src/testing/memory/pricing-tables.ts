import type { PricingTableRepository } from '../../ports';
import { type Tables, copy, values } from './tables';

export function pricingTableRepository(db: Tables): PricingTableRepository {
  return {
    get: async (id) => copy(db.pricingTables.get(id)),
    listByProduct: async (productId) => values(db.pricingTables).filter((t) => t.productId === productId),
    save: async (t) => void db.pricingTables.set(t.id, copy(t)),
  };
}
