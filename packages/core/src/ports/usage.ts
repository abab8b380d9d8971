import type {
  Balance,
  BalanceMismatch,
  CreditGrant,
  Hold,
  Id,
  LedgerEntry,
  LedgerKind,
  UsageClose,
  UsageMeter,
  Page,
  Tenant,
  UsageKey,
  UsageReport,
  OutboxEvent,
  WebhookEndpoint,
} from '../model';

/** The writes of one group-commit batch on one balance, applied together. */
export interface UsageWrite {
  balance: Balance;
  /** The meter's slug, for the events of the write (`usage.recorded`, `usage.threshold`). */
  meterSlug?: string;
  /** The meter's scale (decimal places), so the events show its units; absent: 0. */
  meterScale?: number;
  /** Grants new or changed (inserted or updated by id). */
  grants: CreditGrant[];
  /** Holds new or changed (inserted or updated by id). */
  holds: Hold[];
  entries: LedgerEntry[];
  keys: UsageKey[];
  /**
   * Set as the write is made (the outbox, `reportUsage`): the usage its `usage.recorded` tells, or
   * null when what it used waits on the balance for its window.
   */
  report?: UsageReport | null;
  /** A period's close: the balance as the period ended (before the close returned its counters to zero), which its events show. */
  ended?: Balance;
}

/** What one balance holds for a batch: locked, with its live grants and the holds asked for. */
export interface LockedBalance {
  balance: Balance;
  grants: CreditGrant[];
  holds: Hold[];
}

/** A page of usage records (ledger entries that used units). */
export interface UsageRecordQuery {
  limit: number;
  after?: string;
  /** The rows preceding this cursor (the last `limit` of them, oldest first). */
  before?: string;
  owner?: string;
  meterId?: Id;
}

/**
 * A page of the usage records of some holders in either order, where the page's cursor is a
 * record's id (the v2/v3 `GET /usage`): at most `limit` records after the record `afterId`
 * (exclusive) in `order` (creation time, then id; `desc`: newest first).
 */
export interface OwnerRecordQuery {
  owners: string[];
  /** The kinds of usage record wanted (among record, consume and commit). */
  kinds: Extract<LedgerKind, 'record' | 'consume' | 'commit'>[];
  limit: number;
  order: 'asc' | 'desc';
  afterId?: Id;
}

/**
 * Where the meter-event relay stands in the ledger: every entry that used units and comes before
 * `position` was planned into a send (`MeterSend`) or passed over (not a subscription the provider
 * bills). The position
 * is the adapter's own (PostgreSQL: the writing transaction's id and the entry's id); the relay only
 * hands it back.
 */
export interface MeterRelayCursor {
  /** The payment provider the relay sends to (one cursor each). */
  name: string;
  position: string;
  /** Passes whose sends failed in a row (retryable), and when the next pass may try again. */
  attempts: number;
  nextAttemptAt: Date | null;
  lastError: string | null;
  updatedAt: Date | null;
}

/** A ledger entry that used units, with what a meter event of it needs. */
export interface PendingMeterEvent {
  entryId: Id;
  organisationId: Id;
  isTest: boolean;
  owner: string;
  /** The balance (holder, meter, period) the entry changed: sends never sum across two of them. */
  balanceId: Id;
  meterSlug: string;
  /** Units the entry used, in the meter's units (decimal text: exact). */
  value: string;
  createdAt: Date;
  /** The provider's customer when the owner is a subscription the provider bills; null: nothing to send. */
  customerId: string | null;
  /** The cursor's position once this entry is done. */
  position: string;
}

/**
 * One planned meter event: the sum of the used entries of one balance (customer, meter, period)
 * the relay read in one pass. Its id is the event's `identifier`, so a resend after a crash counts
 * once; it is deleted in the transaction after the provider took it.
 */
export interface MeterSend {
  /** The event's identifier at the provider. */
  id: Id;
  provider: string;
  organisationId: Id;
  isTest: boolean;
  owner: string;
  meterSlug: string;
  customerId: string;
  /** The entries' summed units, in the meter's units (decimal text: exact). */
  value: string;
  /** The event's timestamp: the latest summed entry's creation. */
  timestamp: Date;
  /** The earliest summed entry's creation (how far behind the relay is). */
  firstEntryAt: Date;
  /** How many ledger entries the value sums. */
  entries: number;
  createdAt: Date;
}

/** A send the provider refused for good (kept with what was sent, beyond the ledger's retention): the send's event, and why. */
export interface MeterEventFailure extends Omit<MeterSend, 'id' | 'firstEntryAt' | 'createdAt'> {
  /** The refused event's identifier (the planned send's id). */
  sendId: Id;
  error: string;
  failedAt: Date;
}

/** Meters, balances, grants, holds and their ledger (DESIGN section 14). */
export interface UsageRepository {
  /** Inserts the meter or updates it by id; a taken slug is a METER_EXISTS error. */
  saveMeter(meter: UsageMeter): Promise<void>;
  /** The tenant's meter with this slug, if any. */
  findMeter(tenant: Tenant, slug: string): Promise<UsageMeter | undefined>;
  /** The meters with these ids that exist. */
  getMeters(ids: Id[]): Promise<UsageMeter[]>;
  /** One page of the tenant's meters, oldest first. */
  pageMeters(tenant: Tenant, query: { limit: number; after?: string; before?: string; search?: string }): Promise<Page<UsageMeter>>;
  /**
   * The open balance of (owner, meter), created empty from `fresh` when there is none, locked
   * until the unit of work ends (every change of a balance queues behind this lock), with its
   * grants that still have units and the holds that are open and either named or due at `now`.
   */
  lockBalance(fresh: Balance, holdIds: Id[], now: Date): Promise<LockedBalance>;
  /**
   * lockBalance for several balances of one group-commit batch at once (answers in the order
   * asked): every balance is locked in one statement, in the order of the balances' ids, so two
   * writers locking overlapping sets never deadlock on the existing rows. An item with `create:
   * false` (the usage sweep's, a hold's commit or release, which only settle what a balance has;
   * a period switch locking what it will touch) is not created when it has no open balance: its
   * answer is null.
   */
  lockBalances(items: { fresh: Balance; holdIds: Id[]; create?: boolean }[], now: Date): Promise<(LockedBalance | null)[]>;
  /** The open balance of (owner, meter), if any, without a lock. */
  openBalance(tenant: Tenant, owner: string, meterId: Id): Promise<Balance | undefined>;
  /** The tenant's open balances of the owner (of one meter when given), oldest first. */
  openBalances(tenant: Tenant, owner: string, meterId?: Id): Promise<Balance[]>;
  /** The balance, if any. */
  getBalance(id: Id): Promise<Balance | undefined>;
  /** The hold, if any. */
  getHold(id: Id): Promise<Hold | undefined>;
  /** Moves open holds to another balance of their holder (a period close hands them to the next period). `write` never moves a hold. */
  moveHolds(ids: Id[], balanceId: Id): Promise<void>;
  /** Sets an open balance's period start (a period that takes over a balance left open starts it). `write` never changes it. */
  setPeriodStart(balanceId: Id, start: Date): Promise<void>;
  /** The tenant's stored keys among these, with their first answers. */
  findKeys(tenant: Tenant, keys: string[]): Promise<UsageKey[]>;
  /** Writes one batch: the balance's counters, grants, holds, ledger entries and keys. */
  write(batch: UsageWrite): Promise<void>;
  /** Writes the batches of several balances together (one statement per table where it can). */
  writeMany(batches: UsageWrite[]): Promise<void>;
  /**
   * `writeMany`, and the events of the writes appended to the outbox in the same round trip, in
   * the given order; returns the enabled webhook endpoints of the events' tenants (as
   * `OutboxRepository.appendSeeingEndpoints`). Optional: without it, the outbox appends them after.
   */
  writeManyAppending?(batches: UsageWrite[], events: OutboxEvent[]): Promise<WebhookEndpoint[]>;
  /** Balances with open holds due at `now` (the sweep), at most `limit`. */
  balancesWithDueHolds(now: Date, limit: number): Promise<Balance[]>;
  /**
   * Open balances with a grant past its expiry at `now` that still has more units than the
   * balance's holds keep (credit to lapse; the sweep), at most `limit`. A plan grant that ends with
   * its balance's period is the period close's to settle, not listed.
   */
  balancesWithDueGrants(now: Date, limit: number): Promise<Balance[]>;
  /** Open balances whose waiting usage is due to be reported at `now` (`reportDueAt`; the sweep), at most `limit`. */
  balancesWithDueReports(now: Date, limit: number): Promise<Balance[]>;
  /** One page of the tenant's usage records (record, consume and commit entries), oldest first. */
  pageRecords(tenant: Tenant, query: UsageRecordQuery): Promise<Page<LedgerEntry>>;
  /**
   * One page of the tenant's usage records (record, consume and commit entries) of any of the
   * owners, in the order asked, read by keyset (at most `limit` + 1 rows, whatever the ledger
   * holds); undefined when `afterId` names no usage record of these owners.
   */
  pageRecordsOf(tenant: Tenant, query: OwnerRecordQuery): Promise<{ items: LedgerEntry[]; hasMore: boolean } | undefined>;
  /** Every entry of the balance, oldest first (tests and audits). */
  ledgerOf(balanceId: Id): Promise<LedgerEntry[]>;
  /** Balances (of every organisation) whose counters differ from their ledger's sums, at most `limit`. */
  mismatches(limit: number): Promise<BalanceMismatch[]>;
  /** The final usage record of (owner, meter) for the period ending at `periodEnd`, if that period was closed. */
  findClose(tenant: Tenant, owner: string, meterId: Id, periodEnd: Date): Promise<UsageClose | undefined>;
  /** Stores a final usage record; one already stored for its (owner, meter, period end) is a CONFLICT error. */
  saveClose(close: UsageClose): Promise<void>;
  /** One page of the tenant's final usage records, oldest first. */
  pageCloses(tenant: Tenant, query: UsageRecordQuery): Promise<Page<UsageClose>>;
  /**
   * Keeps the ledger's monthly partitions: creates this month's and the next `ahead` months' (rows
   * of such a month already in the default partition move into it), and, when `retentionMonths` is
   * given, drops months that ended more than that many months before `now`, except any holding a
   * row of an open balance. Returns the partitions created and dropped (none where the ledger is not
   * partitioned, as in memory).
   */
  maintainLedger(now: Date, retentionMonths: number | null, ahead: number): Promise<{ created: string[]; dropped: string[] }>;
  /**
   * The relay's cursor for this provider, locked until the unit of work ends; undefined while
   * another instance's relay holds it (it is never waited for). Made at the ledger's start when
   * there is none (PostgreSQL's migration makes it at the migration's own moment).
   */
  claimMeterRelay(name: string): Promise<MeterRelayCursor | undefined>;
  /**
   * The next entries after the cursor that used units, in the cursor's order, at most `limit`,
   * only from writers that have finished (an entry still being written can never land behind the
   * cursor later). `end` is where the cursor may go when fewer than `limit` came: past everything
   * that was finished.
   */
  pendingMeterEvents(cursor: MeterRelayCursor, limit: number): Promise<{ events: PendingMeterEvent[]; end: string }>;
  /** Stores the cursor (its position, attempts and retry time). */
  saveMeterRelay(cursor: MeterRelayCursor): Promise<void>;
  /** Stores planned sends (with the cursor's move past their entries, in the same unit of work). */
  planMeterSends(sends: MeterSend[]): Promise<void>;
  /** The provider's planned sends not yet taken, earliest entries first, at most `limit`. */
  plannedMeterSends(provider: string, limit: number): Promise<MeterSend[]>;
  /** Forgets planned sends the provider took (or refused for good). */
  deleteMeterSends(provider: string, ids: Id[]): Promise<void>;
  /** Keeps a send the provider refused for good (once per send and provider). */
  saveMeterEventFailure(failure: MeterEventFailure): Promise<void>;
  /** Sends refused for good, newest first (operations, tests). */
  meterEventFailures(limit: number): Promise<MeterEventFailure[]>;
  /** Forgets idempotency keys created before `before`; returns how many. */
  purgeKeys(before: Date): Promise<number>;
}
