import { ErrorCodes, fail } from '../errors';
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

export interface CheckInput {
  licenses: License[];
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

/** `a,b`, `[a,b]`, `["a","b"]` -> the distinct, trimmed grantee ids. */
export function parseGranteeIds(raw: unknown): string[] {
  if (typeof raw !== 'string' || raw.trim() === '') {
    return fail(ErrorCodes.VALIDATION_FAILED, 'granteeIds is required', [{ property: 'granteeIds', error: 'is required' }]);
  }
  let text = raw.trim();
  if (text.startsWith('[') && text.endsWith(']')) text = text.slice(1, -1);
  const ids = text
    .split(',')
    .map((s) => s.trim().replace(/^["']|["']$/g, '').trim())
    .filter((s) => s.length > 0);
  if (ids.length === 0) fail(ErrorCodes.VALIDATION_FAILED, 'granteeIds names no grantee', [{ property: 'granteeIds', error: 'names no grantee' }]);
  return [...new Set(ids)];
}

/** Absent: 0 days. Otherwise a whole number greater than 0. */
export function parseGrace(raw: unknown): number {
  if (raw === undefined || raw === null) return 0;
  const text = String(raw).trim();
  if (!/^[+-]?\d+$/.test(text) || Number(text) <= 0 || !Number.isSafeInteger(Number(text))) {
    fail(ErrorCodes.CHECK_GRACE_INVALID, 'grace must be a whole number of days greater than 0', [{ property: 'grace', error: 'must be an integer greater than 0' }]);
  }
  return Number(text);
}
