import { pageOf } from '../../support/pagination';
import type { ProductRepository } from '../../ports';
import { type Changed, type Tables, byCreated, copy, inTenant, matchesSearch, values } from './tables';

export function productRepository(db: Tables, changed: Changed): ProductRepository {
  return {
    get: async (id) => copy(db.products.get(id)),
    getForUpdate: async (id) => copy(db.products.get(id)),
    findByKey: async (t, key) => values(db.products).find((p) => inTenant(p, t) && p.key === key),
    list: async (t, o) =>
      values(db.products)
        .filter((p) => inTenant(p, t) && (o?.includeArchived || !p.archivedAt))
        .sort(byCreated),
    page: async (t, q) =>
      pageOf(
        values(db.products).filter((p) => inTenant(p, t) && (q.includeArchived || !p.archivedAt) && matchesSearch(p.name, q)),
        q,
      ),
    getOwnership: async (id) => {
      const p = db.products.get(id);
      return p && { id: p.id, organisationId: p.organisationId, isTest: p.isTest, archivedAt: p.archivedAt };
    },
    capabilityProduct: async (capabilityId) => [...db.products.values()].find((p) => p.capabilities.some((c) => c.id === capabilityId))?.id,
    save: async (p) => {
      changed({ kind: 'product', productId: p.id });
      db.products.set(p.id, copy(p));
    },
    delete: async (id) => {
      changed({ kind: 'product', productId: id });
      db.products.delete(id);
      for (const plan of values(db.plans)) if (plan.productId === id) db.plans.delete(plan.id);
      for (const t of values(db.pricingTables)) if (t.productId === id) db.pricingTables.delete(t.id);
    },
  };
}
