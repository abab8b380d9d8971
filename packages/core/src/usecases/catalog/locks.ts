import type { Id, Plan, Product, Tenant } from '../../model';
import { assertAccessible } from '../../domain/tenancy';
import type { Repositories } from '../../ports';

/**
 * A plan read for a write, with its product: the product's row locked first, then the plan's (the
 * order every catalog write takes, so two never wait on each other), both read under their locks.
 * A write that read them so cannot write over an archive committed meanwhile, nor write into a plan
 * or product archived meanwhile: the archive waits for it, or it waits for the archive and sees it.
 *
 * The plan is read twice, deliberately: first without a lock, only to learn its product (a plan never
 * moves to another product), then under its lock after the product's. Locking the plan on the first
 * read would take it before its product, against the writes that lock a product and then its plans
 * (savePlan, entitlement deletes, the catalog-file import): two such writes could deadlock. Reading
 * it once would need a port that locks a plan's product by the plan's id (or names a plan's product
 * without loading the plan) in each adapter, for one read more in a catalog write.
 */
export async function lockedPlan(
  r: Repositories,
  tenant: Tenant,
  id: Id,
  what = 'plan',
): Promise<{ plan: Plan; product: Product | undefined }> {
  const seen = assertAccessible(await r.plans.get(id), tenant, what);
  const product = await r.products.getForUpdate(seen.productId);
  const plan = assertAccessible(await r.plans.getForUpdate(id), tenant, what);
  return { plan, product };
}
