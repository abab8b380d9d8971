import type { Cart, Id, Tenant } from '../../model';
import type { CartRepository } from '../../ports';
import { pageOf } from '../../support/pagination';

// Its own helpers (tables.ts spreads these tables into its own: importing it back would be a circle).
const copy = <T>(v: T): T => structuredClone(v);
const inTenant = (c: Cart, t: Tenant) => c.organisationId === t.organisationId && c.isTest === t.isTest;

/** The in-memory carts (with their items), as adapter-postgres keeps them. */
export interface CartTables {
  carts: Map<Id, Cart>;
}

export const emptyCartTables = (): CartTables => ({ carts: new Map() });

export function memoryCartRepository(db: CartTables): CartRepository {
  return {
    get: async (id) => copy(db.carts.get(id)),
    getForUpdate: async (id) => copy(db.carts.get(id)),
    save: async (cart) => void db.carts.set(cart.id, copy(cart)),
    cartOfItem: async (itemId) => [...db.carts.values()].find((c) => c.items.some((i) => i.id === itemId))?.id,
    page: async (tenant, q) =>
      pageOf(
        [...db.carts.values()]
          .filter(
            (c) =>
              inTenant(c, tenant) &&
              (!q.statuses || q.statuses.includes(c.status)) &&
              (!q.customerIds || q.customerIds.includes(c.customerId)) &&
              (!q.search || c.id.startsWith(q.search.toLowerCase())),
          )
          .map(copy),
        q,
      ),
  };
}
