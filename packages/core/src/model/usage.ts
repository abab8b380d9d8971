import type { Meter } from './catalog';
import type { Id, Owned } from './common';

/**
 * Quantities of usage are whole units as `bigint`: exact at any size JavaScript numbers cannot
 * hold, and never binary floats. A meter that needs fractions counts a smaller unit (milli-tokens).
 */
export type Quantity = bigint;

/**
 * Something a vendor counts (API calls, tokens, minutes), per organisation and mode: the catalog's
 * meter (what a metered line item names) with its owner. `slug` (`^[a-z0-9_]+$`) is unique within
 * the organisation and mode.
 */
export interface UsageMeter extends Meter, Owned {
  unitLabel: string | null;
  /**
   * Decimal places its quantities may have (0: whole units; at most 6). Every counter, grant, hold
   * and ledger quantity of the meter is an integer count of its smallest step (units x 10^scale);
   * quantities are turned into and out of that at the edge only. Absent: 0 (and left as stored).
   */
  scale?: number;
}

/** How unused units of a period carry into the next: none, all, or up to N. */
export type Rollover = { kind: 'none' } | { kind: 'all' } | { kind: 'upTo'; units: Quantity };

/**
 * What a usage plan gives and bills per period for one meter (the terms of a metered line item):
 * `allowance` units granted at each period's start, at most `maxUsage` used (null: no cap), at
 * least `minUsage` billed, and unused units carried by `rollover`. Units no grant covers are priced
 * by the line item's unit amount or tiers.
 */
export interface UsageTerms {
  allowance: Quantity;
  maxUsage: Quantity | null;
  minUsage: Quantity;
  rollover: Rollover;
}

/** Where a grant's units came from. */
export type GrantSource = 'plan' | 'purchase' | 'promotion' | 'adjustment';
export const GRANT_SOURCES: readonly GrantSource[] = ['plan', 'purchase', 'promotion', 'adjustment'];

/** Units granted to a balance; drawn in priority (lower first), then expiry (sooner first) order. */
export interface CreditGrant {
  id: Id;
  balanceId: Id;
  amount: Quantity;
  /** Units of this grant already used. */
  drawn: Quantity;
  /** Units of this grant that lapsed at its expiry. */
  expired: Quantity;
  priority: number;
  expiresAt: Date | null;
  source: GrantSource;
  createdAt: Date;
}

/**
 * The counters of one holder's use of one meter over one period. `granted` is what grants gave and
 * not lapsed; `used` what was recorded, consumed or committed; `reserved` what open holds keep.
 */
export interface Balance extends Owned {
  /** The vendor's string for the paying customer (catalog `owner`). */
  owner: string;
  meterId: Id;
  periodStart: Date;
  /** Where the period ends (a subscription's renewal); null: open-ended. */
  periodEnd: Date | null;
  granted: Quantity;
  used: Quantity;
  reserved: Quantity;
  /** At most this much may be used in the period (`maxUsage`); null: no cap. */
  cap: Quantity | null;
  /** Whether the grants limit consumption (true once any grant was given). */
  limited: boolean;
  /** Set when the period was closed: the balance is then history. */
  closedAt: Date | null;
  /**
   * Usage not yet told by a `usage.recorded` event (`reportUsage`): its units and operations. A
   * balance reports at most once per `USAGE_EVENT_WINDOW_SECONDS`; what it uses meanwhile waits here.
   */
  unreported: Quantity;
  unreportedOps: number;
  /** When the balance's last `usage.recorded` was written; null: never. */
  reportedAt: Date | null;
  /** When the usage waiting in `unreported` is to be reported at the latest; null: none waits. */
  reportDueAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

/** Usage a `usage.recorded` event tells: units and operations since the balance's previous one. */
export interface UsageReport {
  quantity: Quantity;
  operations: number;
}

export type HoldStatus = 'held' | 'committed' | 'released' | 'expired';

/** Units set aside for work in progress (reserve), settled by commit, release or expiry. */
export interface Hold {
  id: Id;
  balanceId: Id;
  organisationId: Id;
  isTest: boolean;
  quantity: Quantity;
  status: HoldStatus;
  /** The amount committed (commit only). */
  committed: Quantity | null;
  expiresAt: Date;
  createdAt: Date;
  settledAt: Date | null;
}

export type LedgerKind = 'record' | 'consume' | 'reserve' | 'commit' | 'release' | 'expire' | 'grant' | 'adjust' | 'close';

/**
 * One change of a balance, append-only. The counters of a balance always equal the sums of its
 * entries' deltas (`tollgate usage verify` proves it on a live database).
 */
export interface LedgerEntry {
  id: Id;
  organisationId: Id;
  isTest: boolean;
  balanceId: Id;
  owner: string;
  meterId: Id;
  kind: LedgerKind;
  /** The operation's own quantity (what was recorded, consumed, held, committed, granted...). */
  quantity: Quantity;
  grantedDelta: Quantity;
  usedDelta: Quantity;
  reservedDelta: Quantity;
  holdId: Id | null;
  grantId: Id | null;
  idempotencyKey: string | null;
  createdAt: Date;
}

/** An idempotency key of a usage operation with the first answer it got (replayed on a retry). */
export interface UsageKey {
  organisationId: Id;
  isTest: boolean;
  key: string;
  /** What the request was (operation and body): the same key with another body is refused. */
  fingerprint: string;
  answer: UsageAnswer;
  createdAt: Date;
}

/** What a usage operation answers: the balance after it, and whether it was allowed. */
export interface UsageAnswer {
  allowed: boolean;
  owner: string;
  meterSlug: string;
  granted: string;
  used: string;
  reserved: string;
  /** null where nothing caps the meter. */
  remaining: string | null;
  periodEnd: string | null;
  /** The hold of a reserve; the grant of a grant. */
  holdId?: string;
  holdExpiresAt?: string;
  grantId?: string;
}

/** A balance whose counters differ from its ledger's sums (what `usage verify` reports). */
export interface BalanceMismatch {
  balanceId: Id;
  counters: { granted: Quantity; used: Quantity; reserved: Quantity };
  ledger: { granted: Quantity; used: Quantity; reserved: Quantity };
}

/**
 * A closed period's final usage record (status final): what was used, what was billed, once per
 * (owner, meter, period end) (the close's idempotency key).
 */
export interface UsageClose extends Owned {
  id: Id;
  owner: string;
  meterId: Id;
  /** The balance the close ended. */
  balanceId: Id;
  /** The subscription whose renewal (or plan change) closed it; null: closed by hand. */
  subscriptionId: Id | null;
  periodStart: Date;
  periodEnd: Date;
  finalUsage: Quantity;
  billedUnits: Quantity;
  currency: string | null;
  amountMinor: Quantity;
  createdAt: Date;
}

export type UsageRecordStatus = 'recorded' | 'current' | 'final';

/**
 * One usage record as the published list shows them: `recorded` (a ledger entry that used units),
 * `current` (an open period's running total) or `final` (a closed period's total).
 */
export interface UsageRecordRow {
  id: Id;
  organisationId: Id;
  owner: string;
  meterId: Id;
  balanceId: Id;
  status: UsageRecordStatus;
  kind: 'record' | 'consume' | 'commit' | 'current' | 'close';
  count: Quantity;
  idempotencyKey: string | null;
  periodStart: Date | null;
  periodEnd: Date | null;
  createdAt: Date;
  updatedAt: Date;
}
