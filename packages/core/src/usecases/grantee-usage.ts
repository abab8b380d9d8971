import { DomainError, ErrorCodes, invalid } from '../errors';
import type { Id, License, Tenant } from '../model';
import { assertAccessible } from '../domain/tenancy';
import { exactNumber } from '../domain/usage';
import type { UnitOfWork } from '../ports';
import { planFeatures } from './catalog-queries';
import type { UsageService } from './usage';

/**
 * One usage record as the v2/v3 interfaces show it. The ledger keeps who holds the usage (the
 * owner: a license's subscription, else the ad hoc license itself), not the license it was
 * recorded through: `licenseId` is that ad hoc license, or for a subscription's usage (which every
 * seat of the subscription counts into together) the asking grantee's own seat of it, whichever
 * seat recorded the units.
 */
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
  constructor(private readonly deps: { uow: UnitOfWork; usage: Pick<UsageService, 'recordForLicense' | 'licenseUsage'> }) {}

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

  /**
   * Units used this period under the grantee's license of the plan, and when they last changed: the
   * balance's last change; none yet, the license's start (its count has stood at 0 since).
   */
  async current(tenant: Tenant, granteeId: string, planId: Id): Promise<{ unitCount: number; updatedAt: Date }> {
    const { license, featureId } = await this.target(tenant, granteeId, planId);
    const u = (await this.deps.usage.licenseUsage(tenant, license.id)).find((x) => x.featureId === featureId);
    return { unitCount: u?.unitCount ?? 0, updatedAt: u?.updatedAt ?? license.startTime };
  }

  /**
   * A page of the units recorded for the holders of the grantee's licenses (of one plan or
   * subscription when given): its ad hoc licenses and the subscriptions it holds a seat of (their
   * usage, whichever seat recorded it). `sort` orders by creation (`desc`: newest first); `cursor`
   * is the record the page starts after, in that order. One keyset read of at most `take` + 1
   * records, however long the ledger.
   */
  async records(
    tenant: Tenant,
    q: { granteeId: string; planId?: Id; subscriptionId?: Id; take: number; cursor?: Id; sort?: 'asc' | 'desc' },
  ): Promise<GranteeUsageRecord[]> {
    return this.deps.uow.read(async (r) => {
      const licenses = await r.licenses.list(tenant, { granteeId: q.granteeId, planId: q.planId, subscriptionId: q.subscriptionId });
      // Each holder once: an ad hoc license holds its own usage, a seat its subscription's (labelled
      // with the grantee's own seat of it: the ledger keeps the subscription, not the seat that recorded).
      const holders = new Map<string, { licenseId: Id; planId: Id }>();
      // Its first running seat (oldest first, as listed) names the holder; a canceled one only when none runs.
      const live = (l: License) => l.status !== 'CANCELED';
      for (const l of [...licenses.filter(live), ...licenses.filter((x) => !live(x))])
        if (!holders.has(l.subscriptionId ?? l.id)) holders.set(l.subscriptionId ?? l.id, { licenseId: l.id, planId: l.planId });
      const page = await r.usage.pageRecordsOf(tenant, {
        owners: [...holders.keys()],
        kinds: ['record'],
        limit: q.take,
        order: q.sort ?? 'asc',
        afterId: q.cursor,
      });
      if (!page) return invalid('cursor', 'names no usage record of this list');
      const meters = new Map((await r.usage.getMeters([...new Set(page.items.map((e) => e.meterId))])).map((m) => [m.id, m]));
      return page.items.map((e) => {
        const holder = holders.get(e.owner)!;
        // In the meter's units (a decimal meter counts its smallest step).
        const unitCount = exactNumber(e.quantity, meters.get(e.meterId)?.scale);
        return { id: e.id, unitCount, licenseId: holder.licenseId, planId: holder.planId, createdAt: e.createdAt };
      });
    });
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
