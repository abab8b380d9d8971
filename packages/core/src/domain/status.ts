import type { EventStatus, LicenseStatus, SubscriptionStatus } from '../model';

/**
 * One status table per aggregate. `Record<Status, ...>` makes the compiler reject a table that
 * misses a status, so adding a status forces a decision for every row.
 */
/**
 * `license`: the status a subscription in this status gives its licenses (the provider sync's rule,
 * and a new seat's).
 */
export const SUBSCRIPTION_STATUSES: Record<SubscriptionStatus, { running: boolean; license: LicenseStatus }> = {
  ACTIVE: { running: true, license: 'ACTIVE' },
  TRIALING: { running: true, license: 'TRIALING' },
  // A late payment keeps access while the provider retries; CANCELED follows if it gives up.
  PAST_DUE: { running: true, license: 'ACTIVE' },
  // The provider gave up collecting (Stripe's "mark unpaid"), or paused the subscription: open there
  // (it may be paid or resumed, changed or canceled), but its licenses grant nothing while the period
  // moves on; they (and who holds them) come back when it is active again.
  UNPAID: { running: true, license: 'INACTIVE' },
  PAUSED: { running: true, license: 'INACTIVE' },
  CANCELED: { running: false, license: 'CANCELED' },
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
export const SUBSCRIPTION_STATUS_VALUES = Object.keys(SUBSCRIPTION_STATUSES) as SubscriptionStatus[];

/** The license status named by a list filter value (`active`, `canceled`, ...), or undefined. */
/** The status a list filter names, in any letter case (`active`, `ACTIVE`: real clients send both). */
export const licenseStatusFromFilter = (value: string): LicenseStatus | undefined => {
  const wanted = value.trim().toLowerCase();
  return LICENSE_STATUS_VALUES.find((s) => LICENSE_STATUSES[s].filter === wanted);
};

export const assertNever = (value: never): never => {
  throw new Error(`unexpected value ${String(value)}`);
};
