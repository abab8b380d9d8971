import type { Id, License } from '../model';
import { LICENSE_STATUSES } from './status';
import { addDays } from './time';

/** How a license that does not end shows in `capabilitiesEndDates`. */
export const NO_END = new Date('9999-12-31T23:59:59.999Z');

export interface CapabilityCheck {
  /** Capability names in a stable order (code-point order). */
  capabilities: string[];
  /** Latest end (grace included) per capability. */
  capabilitiesEndDates: Record<string, Date>;
  /** The signed string: the capability names joined by `,`. */
  capsHashed: string;
}

/** What the check reads of a license (all a cached entitlement snapshot keeps). */
export type CheckLicense = Pick<License, 'productId' | 'planId' | 'granteeId' | 'status' | 'endTime'>;

export interface CheckInput {
  licenses: readonly CheckLicense[];
  productId: Id;
  granteeIds: string[];
  /** Capability names granted by each plan. */
  capabilitiesByPlan: ReadonlyMap<Id, string[]>;
  graceDays: number;
  now: Date;
}

const byCodePoint = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/**
 * What the grantees may do in a product: capabilities of every license of any grantee for the
 * product that grants access and whose end (plus grace days) is in the future.
 */
export function capabilityCheck({ licenses, productId, granteeIds, capabilitiesByPlan, graceDays, now }: CheckInput): CapabilityCheck {
  const grantees = new Set(granteeIds);
  const ends = new Map<string, Date>();
  for (const l of licenses) {
    if (l.productId !== productId || l.granteeId === null || !grantees.has(l.granteeId)) continue;
    if (!LICENSE_STATUSES[l.status].grantsAccess) continue;
    const end = l.endTime === null ? NO_END : addDays(l.endTime, graceDays);
    if (end <= now) continue;
    for (const cap of capabilitiesByPlan.get(l.planId) ?? []) {
      const prev = ends.get(cap);
      if (!prev || end > prev) ends.set(cap, end);
    }
  }
  const capabilities = [...ends.keys()].sort(byCodePoint);
  return {
    capabilities,
    capabilitiesEndDates: Object.fromEntries(capabilities.map((c) => [c, ends.get(c) as Date])),
    capsHashed: capabilities.join(','),
  };
}

/** Whether license `l` ends after `kept` (no end beats any end): the one a reduced snapshot keeps per plan. */
export const endsLater = (l: Pick<CheckLicense, 'endTime'>, kept: Pick<CheckLicense, 'endTime'>): boolean =>
  kept.endTime !== null && (l.endTime === null || l.endTime > kept.endTime);

/**
 * One grantee's licenses of one product reduced to what the check can tell apart: per plan, the
 * license that grants access and ends last (no end beats any end). A capability's end is the
 * latest end of the plans granting it, and grace adds the same days to every end, so the check
 * over the reduced list equals the check over the full one at every `now` and grace. Strings come
 * from `same` (so a cache of many snapshots holds one copy of each plan id).
 */
export function reduceSnapshot(
  licenses: readonly CheckLicense[],
  productId: Id,
  granteeId: string,
  same: (planId: Id) => Id = (id) => id,
): CheckLicense[] {
  const byPlan = new Map<Id, CheckLicense>();
  for (const l of licenses) {
    if (l.productId !== productId || l.granteeId !== granteeId || !LICENSE_STATUSES[l.status].grantsAccess) continue;
    const kept = byPlan.get(l.planId);
    if (!kept || endsLater(l, kept))
      byPlan.set(l.planId, { productId, planId: same(l.planId), granteeId, status: l.status, endTime: l.endTime });
  }
  return [...byPlan.values()];
}
