import type { Id, License } from '../model';
import { LICENSE_STATUSES } from './status';
import { DAY_MS } from './time';

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

const NO_END_MS = NO_END.getTime();
/** The largest time a Date holds (ECMAScript TimeClip): beyond it `addDays` gives an invalid date. */
const MAX_TIME = 8.64e15;

/**
 * What the grantees may do in a product: capabilities of every license of any grantee for the
 * product that grants access and whose end (plus grace days) is in the future.
 *
 * Runs for every check answered fresh, so it works on times (numbers) and makes the Dates only for
 * the answer: the same result as comparing `addDays(endTime, graceDays)` dates
 * (an end past the Date range is NaN, as that date would be invalid).
 */
export function capabilityCheck({ licenses, productId, granteeIds, capabilitiesByPlan, graceDays, now }: CheckInput): CapabilityCheck {
  const only = granteeIds.length === 1 ? granteeIds[0] : undefined;
  const grantees = only === undefined ? new Set(granteeIds) : undefined;
  const nowMs = now.getTime();
  const graceMs = graceDays * DAY_MS;
  const ends = new Map<string, number>();
  for (const l of licenses) {
    if (l.productId !== productId || l.granteeId === null) continue;
    if (grantees === undefined ? l.granteeId !== only : !grantees.has(l.granteeId)) continue;
    if (!LICENSE_STATUSES[l.status].grantsAccess) continue;
    let end = NO_END_MS;
    if (l.endTime !== null) {
      end = l.endTime.getTime() + graceMs;
      if (!(Math.abs(end) <= MAX_TIME)) end = NaN;
    }
    if (end <= nowMs) continue;
    const caps = capabilitiesByPlan.get(l.planId);
    if (caps === undefined) continue;
    for (const cap of caps) {
      const prev = ends.get(cap);
      if (prev === undefined || end > prev) ends.set(cap, end);
    }
  }
  const capabilities = [...ends.keys()].sort(byCodePoint);
  // A Date per end (NO_END itself for licenses that do not end; one for a run of the same end).
  let lastMs = NO_END_MS;
  let last = NO_END;
  const dateOf = (ms: number): Date => (ms === lastMs ? last : ((lastMs = ms), (last = ms === NO_END_MS ? NO_END : new Date(ms))));
  return {
    capabilities,
    capabilitiesEndDates: Object.fromEntries(capabilities.map((c) => [c, dateOf(ends.get(c) as number)])),
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
