import { ErrorCodes, fail } from '../errors';
import { isUuid } from '../support/text';
import type { Id, Tenant } from '../model';
import type { CatalogFileExport, CatalogFileImport } from './catalog-file';

/**
 * The published catalog API's copy-to-live-mode: a test-mode product, its plans, entitlements and
 * pricing, written into live mode the way a catalog file is imported (export from test, import
 * into live, one transaction), so copying again updates the live copy instead of duplicating it.
 */
export class CopyToLiveMode {
  constructor(
    private readonly exporter: CatalogFileExport,
    private readonly importer: CatalogFileImport,
  ) {}

  /** The live product's id. Called with a test-mode key only (400 otherwise, as published). */
  async copy(tenant: Tenant, productId: Id): Promise<{ id: Id }> {
    // The product first: another tenant's id is refused as such whatever the key's mode.
    if (!isUuid(productId)) return fail(ErrorCodes.PRODUCT_NOT_FOUND, 'product not found');
    const file = await this.exporter.exportProduct(tenant, productId);
    if (!tenant.isTest) return fail(ErrorCodes.VALIDATION_FAILED, 'copy-to-live-mode is called with a test-mode API key');
    const key = file.products?.[0]?.key;
    if (!key) return fail(ErrorCodes.PRODUCT_NOT_FOUND, 'product not found');
    const result = await this.importer.apply({ ...file, test: false });
    return { id: result.keys[`products.${key}`] };
  }
}
