import { DomainError, ErrorCodes, invalid } from '../errors';
import type { Id, License, Tenant } from '../model';
import { assertAccessible } from '../domain/tenancy';
import { exactNumber } from '../domain/usage';
import type { UnitOfWork } from '../ports';
import { planFeatures } from './catalog-queries';
import type { UsageService } from './usage';

/** One usage record as the v2/v3 interfaces show it: units recorded under a grantee's license. */
export interface GranteeUsageRecord {
  id: Id;
  unitCount: number;
  licenseId: Id;
  planId: Id;
  createdAt: Date;
}

/**
 * Usage by grantee and plan (the v2/v3 `PUT /usage`, `GET /usage`, `GET /usage/current`), on the
 * usage core's own operations: the grantee's running license of the plan names the holder, and
 * the plan's usage feature (else its first numerical one) names the meter, as v1's usage by
 * license does.
 */
export class GranteeUsage {
  constructor(private readonly deps: { uow: UnitOfWork; usage: Pick<UsageService, 'recordForLicense' | 'licenseUsage' | 'records'> }) {}

  /**
   * Counts `increment` units: a decimal in the meter's scale on a meter with decimal places (read
   * exactly, as v1 and the catalog read it), a whole number on a whole-unit meter.
   */
  async record(tenant: Tenant, input: { granteeId: string; planId: Id; increment: unknown }, key?: string): Promise<number> {
    const { license, variableName, scale } = await this.target(tenant, input.granteeId, input.planId);
    // A fraction on a whole-unit meter keeps the answer v2/v3 gave it when `increment` was an integer by schema.
    if (!scale && typeof input.increment === 'number' && !Number.isInteger(input.increment))
      throw new DomainError(ErrorCodes.VALIDATION_FAILED, 'countOptions.increment must be integer', [
        { property: 'countOptions.increment', error: 'must be integer' },
      ]);
    const a = await this.deps.usage.recordForLicense(
      tenant,
      { licenseId: license.id, featureVariableName: variableName, increment: input.increment },
      key,
    );
    return exactNumber(a.used);
  }

  /** Units used this period under the grantee's license of the plan. */
  async current(tenant: Tenant, granteeId: string, planId: Id): Promise<{ unitCount: number }> {
    const { license, featureId } = await this.target(tenant, granteeId, planId);
    const u = (await this.deps.usage.licenseUsage(tenant, license.id)).find((x) => x.featureId === featureId);
    return { unitCount: u?.unitCount ?? 0 };
  }

  /** A page of the units recorded under the grantee's licenses (of one plan or subscription when given), oldest first. */
  async records(
    tenant: Tenant,
    q: { granteeId: string; planId?: Id; subscriptionId?: Id; take: number; cursor?: Id },
  ): Promise<GranteeUsageRecord[]> {
    const licenses = await this.deps.uow.read((r) =>
      r.licenses.list(tenant, { granteeId: q.granteeId, planId: q.planId, subscriptionId: q.subscriptionId }),
    );
    const out: GranteeUsageRecord[] = [];
    for (const license of licenses) {
      let after: string | undefined;
      for (;;) {
        const { page, meters } = await this.deps.usage.records(tenant, { limit: 200, after, owner: license.subscriptionId ?? license.id });
        for (const e of page.items)
          if (e.kind === 'record') {
            // In the meter's units (a decimal meter counts its smallest step).
            const unitCount = exactNumber(e.quantity, meters.get(e.meterId)?.scale);
            out.push({ id: e.id, unitCount, licenseId: license.id, planId: license.planId, createdAt: e.createdAt });
          }
        if (!page.hasMore || !page.nextCursor) break;
        after = page.nextCursor;
      }
    }
    out.sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || (a.id < b.id ? -1 : 1));
    let start = 0;
    if (q.cursor !== undefined) {
      const at = out.findIndex((x) => x.id === q.cursor);
      if (at < 0) invalid('cursor', 'names no usage record of this list');
      start = at + 1;
    }
    return out.slice(start, start + q.take);
  }

  private async target(
    tenant: Tenant,
    granteeId: string,
    planId: Id,
  ): Promise<{ license: License; variableName: string; featureId: Id; scale: number }> {
    return this.deps.uow.read(async (r) => {
      const plan = assertAccessible(await r.plans.get(planId), tenant, 'plan');
      const product = assertAccessible(await r.products.get(plan.productId), tenant, 'product');
      const license = (await r.licenses.list(tenant, { granteeId, planId })).find(
        (l) => l.status !== 'CANCELED' && l.status !== 'INACTIVE',
      );
      if (!license) return invalid('granteeId', `${granteeId} holds no running license of the plan`);
      const features = planFeatures(plan, product);
      const feature = (features.find((v) => v.value.isUsage) ?? features.find((v) => v.feature.valueType === 'numerical'))?.feature;
      if (!feature) return invalid('planUuid', 'the plan has no usage (or numerical) feature to count');
      // The feature's meter (none yet: v1's first use makes a whole-unit one).
      const meter = await r.usage.findMeter(tenant, feature.variableName.toLowerCase());
      return { license, variableName: feature.variableName, featureId: feature.id, scale: meter?.scale ?? 0 };
    });
  }
}
