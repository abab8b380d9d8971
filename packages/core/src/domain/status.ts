import type { EventStatus, LicenseStatus, SubscriptionStatus } from '../model';

/**
 * One status table per aggregate. `Record<Status, ...>` makes the compiler reject a table that
 * misses a status, so adding a status forces a decision for every row.
 */
export const SUBSCRIPTION_STATUSES: Record<SubscriptionStatus, { running: boolean }> = {
  ACTIVE: { running: true },
  TRIALING: { running: true },
  PAST_DUE: { running: true },
  // Open at the provider (it may be paid or resumed, changed or canceled); its licenses grant nothing meanwhile.
  UNPAID: { running: true },
  PAUSED: { running: true },
  CANCELED: { running: false },
};

export const LICENSE_STATUSES: Record<LicenseStatus, { grantsAccess: boolean; filter: string }> = {
  ACTIVE: { grantsAccess: true, filter: 'active' },
  TRIALING: { grantsAccess: true, filter: 'trialing' },
  EVALUATION: { grantsAccess: true, filter: 'evaluation' },
  SCHEDULED: { grantsAccess: false, filter: 'scheduled' },
  INACTIVE: { grantsAccess: false, filter: 'inactive' },
  CANCELED: { grantsAccess: false, filter: 'canceled' },
};

export const EVENT_STATUSES: Record<EventStatus, { done: boolean }> = {
  queued: { done: false },
  pending: { done: false },
  success: { done: true },
  failed: { done: true },
};

export const LICENSE_STATUS_VALUES = Object.keys(LICENSE_STATUSES) as LicenseStatus[];

/** The license status named by a list filter value (`active`, `canceled`, ...), or undefined. */
/** The status a list filter names, in any letter case (`active`, `ACTIVE`: real clients send both). */
export const licenseStatusFromFilter = (value: string): LicenseStatus | undefined => {
  const wanted = value.trim().toLowerCase();
  return LICENSE_STATUS_VALUES.find((s) => LICENSE_STATUSES[s].filter === wanted);
};

export const assertNever = (value: never): never => {
  throw new Error(`unexpected value ${String(value)}`);
};
