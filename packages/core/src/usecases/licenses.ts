import { ErrorCodes, fail } from '../errors';
import type { Capability, Id, License, LicenseStatus, Tenant } from '../model';
import { assertAccessible } from '../domain/tenancy';
import { assignGrantee, createAdHocLicense } from '../domain/license';
import { capabilityCheck, parseGrace, parseGranteeIds, type CapabilityCheck } from '../domain/check';
import { licenseStatusFromFilter } from '../domain/status';
import type { LicenseCount, LicenseFilter, SignedMessage } from '../ports';
import type { CoreDeps } from './deps';

export interface AdHocLicenseRequest {
  planUuid: string;
  member: string;
  granteeId: string | null;
}

export interface CheckRequest {
  productUuid: unknown;
  granteeIds: unknown;
  grace?: unknown;
  sigEncode?: 'der' | 'p1363';
}

export type SignedCheck = CapabilityCheck & SignedMessage;

/** The license status of a list filter value; VALIDATION_FAILED for anything else. */
export function parseLicenseStatusFilter(raw: unknown): LicenseStatus | undefined {
  if (raw === undefined) return undefined;
  const status = typeof raw === 'string' ? licenseStatusFromFilter(raw) : undefined;
  if (!status) {
    return fail(ErrorCodes.VALIDATION_FAILED, 'status must be one of active, canceled, evaluation, scheduled, trialing, inactive', [
      { property: 'status', error: 'must be one of active, canceled, evaluation, scheduled, trialing, inactive' },
    ]);
  }
  return status;
}

export class LicenseService {
  constructor(private readonly deps: CoreDeps) {}

  /** Ad hoc licenses (free or evaluation), all or none. */
  async createAdHoc(tenant: Tenant, requests: AdHocLicenseRequest[]): Promise<License[]> {
    const now = this.deps.clock.now();
    return this.deps.uow.run(async (r) => {
      const created: License[] = [];
      for (const req of requests) {
        const plan = assertAccessible(await r.plans.get(req.planUuid), tenant, ErrorCodes.PLAN_NOT_FOUND, 'plan');
        const product = (await r.products.get(plan.productId)) ?? fail(ErrorCodes.PRODUCT_NOT_FOUND, 'product not found');
        created.push(createAdHocLicense({ plan, product, member: req.member, granteeId: req.granteeId, now, id: this.deps.ids.newId() }));
      }
      await r.licenses.saveMany(created);
      return created;
    });
  }

  /** Sets the grantee of each license; an unknown license fails the whole batch. */
  async batchUpdate(tenant: Tenant, updates: { uuid: Id; granteeId: string | null }[]): Promise<License[]> {
    const now = this.deps.clock.now();
    return this.deps.uow.run(async (r) => {
      const found = new Map((await r.licenses.getManyForUpdate(updates.map((u) => u.uuid))).map((l) => [l.id, l]));
      const updated = new Map<Id, License>();
      for (const u of updates) {
        const current = updated.get(u.uuid) ?? assertAccessible(found.get(u.uuid), tenant, ErrorCodes.LICENSE_NOT_FOUND, `license ${u.uuid}`);
        updated.set(u.uuid, assignGrantee(current, u.granteeId, now));
      }
      await r.licenses.saveMany([...updated.values()]);
      return updates.map((u) => updated.get(u.uuid) as License);
    });
  }

  async list(tenant: Tenant, filter: LicenseFilter): Promise<License[]> {
    return this.deps.uow.run((r) => r.licenses.list(tenant, filter));
  }

  async count(tenant: Tenant, filter: LicenseFilter): Promise<LicenseCount> {
    return this.deps.uow.run(async (r) => {
      if (filter.subscriptionId) assertAccessible(await r.subscriptions.get(filter.subscriptionId), tenant, ErrorCodes.SUBSCRIPTION_NOT_FOUND, 'subscription');
      return r.licenses.count(tenant, filter);
    });
  }

  /** The capabilities each license's plan grants, for views that show them with the license. */
  async capabilitiesOf(licenses: License[]): Promise<Map<Id, Capability[]>> {
    return this.deps.uow.run(async (r) => {
      const plans = await r.plans.getMany([...new Set(licenses.map((l) => l.planId))]);
      const out = new Map<Id, Capability[]>();
      for (const plan of plans) {
        const product = await r.products.get(plan.productId);
        const byId = new Map((product?.capabilities ?? []).map((c) => [c.id, c]));
        out.set(plan.id, plan.capabilityIds.map((id) => byId.get(id)).filter((c): c is Capability => !!c));
      }
      return out;
    });
  }

  /** The signed capability check; null when the grantees have no capability. */
  async check(tenant: Tenant, req: CheckRequest): Promise<SignedCheck | null> {
    if (typeof req.productUuid !== 'string' || req.productUuid === '') {
      fail(ErrorCodes.VALIDATION_FAILED, 'productUuid is required', [{ property: 'productUuid', error: 'is required' }]);
    }
    const productId = req.productUuid as string;
    const granteeIds = parseGranteeIds(req.granteeIds);
    const graceDays = parseGrace(req.grace);
    const now = this.deps.clock.now();
    // The hot path: three indexed reads, no transaction.
    const result = await this.deps.uow.read(async (r) => {
      const product = assertAccessible(await r.products.getOwnership(productId), tenant, ErrorCodes.PRODUCT_NOT_FOUND, 'product');
      const licenses = await r.licenses.findForCheck(tenant, product.id, granteeIds);
      if (licenses.length === 0) return null;
      const capabilitiesByPlan = await r.plans.capabilityNames([...new Set(licenses.map((l) => l.planId))]);
      return capabilityCheck({ licenses, productId: product.id, granteeIds, capabilitiesByPlan, graceDays, now });
    });
    if (!result || result.capabilities.length === 0) return null;
    const signed = await this.deps.signer.sign(tenant.organisationId, result.capsHashed, { encoding: req.sigEncode ?? 'der' });
    return { ...result, ...signed };
  }
}
