import { ErrorCodes, fail, invalid } from '../../errors';
import type { Capability, Id, Page, Product, Tenant } from '../../model';
import { assertAccessible } from '../../domain/tenancy';
import { pageOf } from '../../support/pagination';
import type { Repositories } from '../../ports';
import type { CoreDeps } from '../deps';

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
      capability: (await this.owning(r, tenant, id)).capability,
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
      if (input.productId) product = assertAccessible(await r.products.get(input.productId), tenant, 'product');
      else {
        const products = (await r.products.list(tenant)).filter((p) => !p.archivedAt);
        if (products.length !== 1)
          invalid('productId', `is required: this organisation has ${products.length} products in this mode, name the entitlement's one`);
        product = products[0];
      }
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

  async rename(tenant: Tenant, id: Id, name: string | undefined): Promise<void> {
    if (name === undefined) return;
    const now = this.deps.clock.now();
    await this.deps.uow.run(async (r) => {
      const { product, capability } = await this.owning(r, tenant, id);
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
      for (const plan of await r.plans.listByProduct(product.id))
        if (plan.capabilityIds.includes(id))
          await r.plans.save({ ...plan, capabilityIds: plan.capabilityIds.filter((c) => c !== id), updatedAt: now });
      await r.products.save({ ...product, capabilities: product.capabilities.filter((c) => c.id !== id), updatedAt: now });
    });
  }

  private async owning(r: Repositories, tenant: Tenant, id: Id): Promise<{ product: Product; capability: Capability }> {
    const productId = await r.products.capabilityProduct(id);
    const product = assertAccessible(productId ? await r.products.get(productId) : undefined, tenant, 'entitlement');
    return { product, capability: product.capabilities.find((c) => c.id === id) as Capability };
  }
}
