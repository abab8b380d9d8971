import { ErrorCodes, fail, invalid } from '../../errors';
import type { Capability, Id, Page, Product, Tenant } from '../../model';
import { assertProductOpen } from '../../domain/catalog';
import { assertAccessible } from '../../domain/tenancy';
import { pageOf } from '../../support/pagination';
import type { Repositories } from '../../ports';
import type { CoreDeps } from '../deps';

/** An archived product is read-only (published archiveProduct): its entitlements with it. */
const refuseArchived = (product: Product, property: string) =>
  assertProductOpen(product, property, `product ${product.id} is archived: its entitlements are read-only`);

/** An entitlement as the catalog API shows it: a capability of one of the tenant's products. */
export interface EntitlementRecord {
  capability: Capability;
  organisationId: Id;
}

/**
 * Entitlements of the catalog API (published #23, #24, #26-28): the capabilities of the tenant's
 * products, listed across them, created (on the tenant's only product, as a plan without
 * `productId`), renamed and removed (from every plan that grants it, in one transaction).
 */
export class EntitlementAdmin {
  constructor(private readonly deps: Pick<CoreDeps, 'uow' | 'clock' | 'ids'>) {}

  async list(
    tenant: Tenant,
    q: { limit: number; after?: string; before?: string; planId?: Id; search?: string },
  ): Promise<Page<EntitlementRecord>> {
    return this.deps.uow.read(async (r) => {
      let all = (await r.products.list(tenant, { includeArchived: true })).flatMap((p) => p.capabilities);
      if (q.planId) {
        const plan = assertAccessible(await r.plans.get(q.planId), tenant, 'plan');
        all = all.filter((c) => plan.capabilityIds.includes(c.id));
      }
      if (q.search) {
        const s = q.search.toLowerCase();
        all = all.filter((c) => c.name.toLowerCase().includes(s));
      }
      const page = pageOf(all, q);
      return { ...page, items: page.items.map((capability) => ({ capability, organisationId: tenant.organisationId })) };
    });
  }

  async get(tenant: Tenant, id: Id): Promise<EntitlementRecord> {
    return this.deps.uow.read(async (r) => ({
      capability: (await this.owning(r, tenant, id, false)).capability,
      organisationId: tenant.organisationId,
    }));
  }

  /**
   * A new entitlement of the product named, or of the tenant's only product (without `productId`
   * and with several products: 400); a taken name is 409.
   */
  async create(tenant: Tenant, input: { name: string; productId?: Id }): Promise<EntitlementRecord> {
    const now = this.deps.clock.now();
    const { name } = input;
    return this.deps.uow.run(async (r) => {
      let product: Product;
      if (input.productId) {
        // Read under its row lock: an archive of the product waits for this write, or this write sees it.
        product = assertAccessible(await r.products.getForUpdate(input.productId), tenant, 'product');
      } else {
        const products = (await r.products.list(tenant)).filter((p) => !p.archivedAt);
        if (products.length !== 1)
          invalid('productId', `is required: this organisation has ${products.length} products in this mode, name the entitlement's one`);
        product = assertAccessible(await r.products.getForUpdate(products[0].id), tenant, 'product');
      }
      refuseArchived(product, 'productId');
      if (product.capabilities.some((c) => c.name === name))
        fail(ErrorCodes.CONFLICT, `an entitlement named ${name} exists`, [{ property: 'name', error: 'is taken' }]);
      const capability: Capability = {
        id: this.deps.ids.newId(),
        productId: product.id,
        name,
        description: '',
        status: 'ACTIVE',
        createdAt: now,
        updatedAt: now,
      };
      await r.products.save({ ...product, capabilities: [...product.capabilities, capability], updatedAt: now });
      return { capability, organisationId: tenant.organisationId };
    });
  }

  /** Renames the entitlement; without a name changes nothing, once the entitlement is found (404/403 as with one). */
  async rename(tenant: Tenant, id: Id, name: string | undefined): Promise<void> {
    const now = this.deps.clock.now();
    await this.deps.uow.run(async (r) => {
      const { product, capability } = await this.owning(r, tenant, id);
      if (name === undefined) return;
      refuseArchived(product, 'id');
      if (name.trim() === '') invalid('name', 'must not be empty');
      if (product.capabilities.some((c) => c.name === name && c.id !== id))
        fail(ErrorCodes.CONFLICT, `an entitlement named ${name} exists`, [{ property: 'name', error: 'is taken' }]);
      const capabilities = product.capabilities.map((c) => (c.id === capability.id ? { ...c, name, updatedAt: now } : c));
      await r.products.save({ ...product, capabilities, updatedAt: now });
    });
  }

  /** Removes the entitlement from its product and from every plan that grants it. */
  async delete(tenant: Tenant, id: Id): Promise<void> {
    const now = this.deps.clock.now();
    await this.deps.uow.run(async (r) => {
      const { product } = await this.owning(r, tenant, id);
      refuseArchived(product, 'id');
      for (const listed of await r.plans.listByProduct(product.id)) {
        if (!listed.capabilityIds.includes(id)) continue;
        // Under the plan's lock too (after the product's): the plan is saved as read, archive included.
        const plan = await r.plans.getForUpdate(listed.id);
        if (plan?.capabilityIds.includes(id))
          await r.plans.save({ ...plan, capabilityIds: plan.capabilityIds.filter((c) => c !== id), updatedAt: now });
      }
      await r.products.save({ ...product, capabilities: product.capabilities.filter((c) => c.id !== id), updatedAt: now });
    });
  }

  /** The entitlement's product (for a write: under its row lock, as the write saves it as read, `archivedAt` included). */
  private async owning(r: Repositories, tenant: Tenant, id: Id, forUpdate = true): Promise<{ product: Product; capability: Capability }> {
    const productId = await r.products.capabilityProduct(id);
    const read = (pid: Id) => (forUpdate ? r.products.getForUpdate(pid) : r.products.get(pid));
    const product = assertAccessible(productId ? await read(productId) : undefined, tenant, 'entitlement');
    const capability = product.capabilities.find((c) => c.id === id) ?? fail(ErrorCodes.NOT_FOUND, 'entitlement not found');
    return { product, capability };
  }
}
