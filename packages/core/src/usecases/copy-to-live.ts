import { ErrorCodes, fail, isDomainError, type DomainError } from '../errors';
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
    const product = file.products?.[0];
    const key = product?.key;
    if (!product || !key) return fail(ErrorCodes.PRODUCT_NOT_FOUND, 'product not found');
    // The test product's codes (its currencies, its plans' prices) are the copy's though the published
    // list lacks one (stored before it, or by an older release): the same product's, not new ones.
    const held = new Set([...(product.currencies ?? []), ...(product.plans ?? []).flatMap((p) => Object.keys(p.prices ?? {}))]);
    try {
      const result = await this.importer.apply({ ...file, test: false }, { heldCurrencies: held });
      return { id: result.keys[`products.${key}`] };
    } catch (e) {
      if (isDomainError(e) && (e.code === ErrorCodes.PRODUCT_ARCHIVED || e.code === ErrorCodes.PLAN_ARCHIVED))
        return this.archivedCopy({ ...tenant, isTest: false }, key, e);
      throw e;
    }
  }

  /**
   * The import's refusal of an archived record, said of the copy: what is archived is the live copy
   * (or one of its plans), which only a live-mode key can act on; the import names the file's keys
   * (the test product's id), and a fix a test-mode key cannot make.
   */
  private async archivedCopy(live: Tenant, key: string, e: DomainError): Promise<never> {
    const property = e.details[0]?.property ?? '';
    const planKey = e.code === ErrorCodes.PLAN_ARCHIVED && property.startsWith('plans.') ? property.slice('plans.'.length) : undefined;
    const { productId, planId } = await this.importer.lookUp(live, key, planKey);
    if (!productId) throw e;
    if (e.code === ErrorCodes.PLAN_ARCHIVED && planId)
      return fail(
        ErrorCodes.PLAN_ARCHIVED,
        `plan ${planId} of the live copy (product ${productId}) is archived, and the copy would change it: an archived plan is read-only and cannot be un-archived (delete it with a live-mode key if no subscription holds it, DELETE /api/plans/${planId}, and copy again; it is made anew)`,
        [{ property: 'id', error: `the live copy's plan ${planId} is archived` }],
      );
    return fail(
      ErrorCodes.PRODUCT_ARCHIVED,
      `the live copy of this product (${productId}) is archived: it, its plans and pricing tables are read-only (un-archive it with a live-mode key: PUT /api/products/${productId} {"isActive": true}, then copy again)`,
      [{ property: 'id', error: `the live copy ${productId} is archived` }],
    );
  }
}
