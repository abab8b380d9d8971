import type { Id, Plan } from '../../model';
import { pageOf } from '../../support/pagination';
import type { PlanListQuery, PlanRepository } from '../../ports';
import { type Changed, type Tables, byCreated, copy, inTenant, matchesSearch, values } from './tables';

export function planRepository(db: Tables, changed: Changed): PlanRepository {
  return {
    get: async (id) => copy(db.plans.get(id)),
    getForUpdate: async (id) => copy(db.plans.get(id)),
    getMany: async (ids) =>
      ids
        .map((id) => db.plans.get(id))
        .filter((p): p is Plan => !!p)
        .map(copy),
    findByKey: async (productId, key) => values(db.plans).find((p) => p.productId === productId && p.key === key),
    listByProduct: async (productId) =>
      values(db.plans)
        .filter((p) => p.productId === productId)
        .sort(byCreated),
    page: async (t, q: PlanListQuery) =>
      pageOf(
        values(db.plans).filter((p) => inTenant(p, t) && planMatches(p, q)),
        q,
      ),
    capabilityNames: async (planIds) => {
      const out = new Map<Id, string[]>();
      for (const id of planIds) {
        const plan = db.plans.get(id);
        const product = plan && db.products.get(plan.productId);
        if (!plan || !product || plan.capabilityIds.length === 0) continue;
        const byId = new Map(product.capabilities.map((c) => [c.id, c.name]));
        out.set(
          id,
          plan.capabilityIds.map((c) => byId.get(c)).filter((n): n is string => !!n),
        );
      }
      return out;
    },
    planOfPart: async (id) =>
      values(db.plans).find((p) =>
        p.lineItems.some(
          (li) =>
            li.id === id ||
            li.prices.some((pr) => pr.id === id || pr.currencyOptions.some((o) => o.id === id || o.tiers.some((t) => t.id === id))),
        ),
      )?.id,
    filterOptions: async (t) => {
      const currencies = new Set<string>();
      const intervals = new Map<string, { interval: string | null; intervalCount: number | null }>();
      for (const p of values(db.plans).filter((x) => inTenant(x, t))) {
        for (const li of p.lineItems)
          for (const pr of li.prices) {
            intervals.set(`${pr.interval}/${pr.intervalCount}`, { interval: pr.interval, intervalCount: pr.intervalCount });
            for (const o of pr.currencyOptions) currencies.add(o.currency);
          }
      }
      return { currencies: [...currencies].sort(), intervals: [...intervals.values()] };
    },
    save: async (p) => {
      changed({ kind: 'product', productId: p.productId });
      if (p.tierTag) db.tierTags.set(p.tierTag.id, copy(p.tierTag));
      db.plans.set(p.id, copy(p));
    },
    delete: async (id) => {
      const plan = db.plans.get(id);
      if (plan) changed({ kind: 'product', productId: plan.productId });
      db.plans.delete(id);
      // A deleted plan leaves the carts it was in (as adapter-postgres's cascade).
      for (const c of db.carts.values())
        if (c.items.some((i) => i.planId === id)) db.carts.set(c.id, { ...c, items: c.items.filter((i) => i.planId !== id) });
    },
    getTierTag: async (id) => copy(db.tierTags.get(id)),
    saveTierTag: async (tag) => void db.tierTags.set(tag.id, copy(tag)),
    findTierTag: async (orgId, name) =>
      values(db.tierTags)
        .sort(byCreated)
        .find((t) => t.organisationId === orgId && t.name.toLowerCase() === name.toLowerCase()),
    pageTierTags: async (orgId, q) =>
      pageOf(
        values(db.tierTags).filter(
          (t) => t.organisationId === orgId && (!q.search || t.name.toLowerCase().includes(q.search.toLowerCase())),
        ),
        q,
      ),
  };
}

function planMatches(p: Plan, q: PlanListQuery): boolean {
  if (!q.includeArchived && p.archivedAt) return false;
  if (!matchesSearch(p.name, q)) return false;
  if (q.productId && p.productId !== q.productId) return false;
  if (q.isActive !== undefined && (p.active && !p.archivedAt) !== q.isActive) return false;
  const prices = p.lineItems.flatMap((li) => li.prices);
  if (q.currency && !prices.some((pr) => pr.currencyOptions.some((o) => o.currency === q.currency?.toLowerCase()))) return false;
  if (
    q.interval &&
    !prices.some(
      (pr) =>
        pr.interval === (q.interval === 'one_off' ? null : q.interval) &&
        (q.intervalCount === undefined || pr.intervalCount === q.intervalCount),
    )
  )
    return false;
  if (!q.interval && q.intervalCount !== undefined && !prices.some((pr) => pr.intervalCount === q.intervalCount)) return false;
  return true;
}
