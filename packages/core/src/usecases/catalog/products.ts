import { ErrorCodes, fail } from '../../errors';
import type { Id, Page, Product, Tenant } from '../../model';
import { archiveProduct, assertProductOpen } from '../../domain/catalog';
import { newProduct } from '../../domain/builders';
import { assertAccessible } from '../../domain/tenancy';
import { invalid } from '../../errors';
import type { ListQuery } from '../../ports';
import type { CoreDeps } from '../deps';
import { DEFAULT_PAYMENT_INTEGRATION, ensurePaymentIntegration } from '../integrations';
import type { ProductInput, ProductSettingsInput, ProductUpdate } from './inputs';

const httpUrl = (property: string, raw: string | null | undefined): string | null | undefined => {
  if (raw === undefined || raw === null) return raw;
  try {
    const u = new URL(raw);
    if (u.protocol === 'http:' || u.protocol === 'https:') return raw;
  } catch {
    // fall through
  }
  return invalid(property, 'must be an absolute http or https URL');
};

/** Products of the catalog generation: create, change, archive, delete, list. */
export class ProductAdmin {
  constructor(private readonly deps: Pick<CoreDeps, 'uow' | 'clock' | 'ids'>) {}

  private id = () => this.deps.ids.newId();

  async listProducts(tenant: Tenant, query: ListQuery): Promise<Page<Product>> {
    return this.deps.uow.run((r) => r.products.page(tenant, query));
  }

  async getProduct(tenant: Tenant, id: Id): Promise<Product> {
    return this.deps.uow.run(async (r) => assertAccessible(await r.products.get(id), tenant, 'product'));
  }

  async createProduct(tenant: Tenant, input: ProductInput): Promise<Product> {
    const now = this.deps.clock.now();
    return this.deps.uow.run(async (r) => {
      const integration = await ensurePaymentIntegration(r, tenant, DEFAULT_PAYMENT_INTEGRATION, this.deps.ids, now);
      const product = newProduct(
        tenant,
        { id: this.id(), settingsId: this.id() },
        { name: input.name, description: input.description ?? '', paymentIntegrationId: integration.id },
        now,
      );
      const saved = input.isActive === false ? archiveProduct(product, now) : product;
      await r.products.save(saved);
      return saved;
    });
  }

  async updateProduct(tenant: Tenant, id: Id, input: ProductUpdate): Promise<Product> {
    const { settings, isActive, ...fields } = input;
    const checked: ProductSettingsInput | undefined = settings && {
      ...settings,
      successUrl: httpUrl('settings.successUrl', settings.successUrl),
      cancelUrl: httpUrl('settings.cancelUrl', settings.cancelUrl),
    };
    return this.deps.uow.run(async (r) => {
      // Its row lock: a write of the product, its plans or entitlements waits for this one (and this for it).
      const current = assertAccessible(await r.products.getForUpdate(id), tenant, 'product');
      // An archived product is read-only (published archiveProduct); `isActive: true` un-archives it
      // (docs/decisions.md), with whatever else the body changes.
      if (isActive !== true)
        assertProductOpen(
          current,
          'id',
          `product ${id} is archived: it is read-only ({"isActive": true} un-archives it)`,
          'names an archived product',
        );
      const now = this.deps.clock.now();
      let updated: Product = { ...current, ...definedOnly(fields), updatedAt: now };
      if (checked) updated = { ...updated, settings: { ...current.settings, ...definedOnly(checked), updatedAt: now } };
      if (isActive === false && !current.archivedAt) updated = archiveProduct(updated, now);
      if (isActive === true && current.archivedAt) updated = { ...updated, archivedAt: null };
      await r.products.save(updated);
      return updated;
    });
  }

  async archiveProduct(tenant: Tenant, id: Id): Promise<Product> {
    return this.deps.uow.run(async (r) => {
      const archived = archiveProduct(assertAccessible(await r.products.getForUpdate(id), tenant, 'product'), this.deps.clock.now());
      await r.products.save(archived);
      return archived;
    });
  }

  /** Deletes a product no subscription references (archive it otherwise). */
  async deleteProduct(tenant: Tenant, id: Id): Promise<void> {
    await this.deps.uow.run(async (r) => {
      assertAccessible(await r.products.getForUpdate(id), tenant, 'product');
      if ((await r.subscriptions.countReferencing({ productId: id })) > 0) {
        fail(ErrorCodes.PRODUCT_HAS_SUBSCRIPTIONS, 'the product has subscriptions; archive it instead');
      }
      await r.products.delete(id);
    });
  }

  async productsById(tenant: Tenant, ids: Id[]): Promise<Map<Id, Product>> {
    return this.deps.uow.run(async (r) => {
      const out = new Map<Id, Product>();
      for (const id of new Set(ids)) {
        const p = await r.products.get(id);
        if (p && p.organisationId === tenant.organisationId) out.set(id, p);
      }
      return out;
    });
  }
}

function definedOnly<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
