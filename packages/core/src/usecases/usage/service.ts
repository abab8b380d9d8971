import { createHash } from 'node:crypto';
import { ErrorCodes, fail, invalid, outageAfter } from '../../errors';
import { assertAccessible } from '../../domain/tenancy';
import {
  checkQuantityShape,
  DEFAULT_GRANT_PRIORITY,
  exactNumber,
  formatUnits,
  MAX_HOLD_SECONDS,
  MAX_SCALE,
  METER_SLUG,
  quantityOf,
  type UsageOp,
} from '../../domain/usage';
import {
  GRANT_SOURCES,
  type Balance,
  type BalanceMismatch,
  type CreditGrant,
  type GrantSource,
  type Id,
  type LedgerEntry,
  type UsageMeter,
  type Page,
  type Rollover,
  type Tenant,
  type UsageAnswer,
  type UsageRecordRow,
  type UsageRecordStatus,
} from '../../model';
import type { Clock, IdGenerator, Logger, UnitOfWork, UsageRecordQuery } from '../../ports';
import { IDEMPOTENCY_KEY_MAX, IDEMPOTENCY_TTL_MS } from '../idempotency';
import { billedUnits } from '../../domain/usage-billing';
import type { LicenseUsage } from '../licenses';
import type { CoreLimits } from '../deps';
import { GroupCommit, MAX_BALANCES, type BalanceTarget } from './group-commit';
import { closeOpenPeriod, openPeriod } from './periods';
import { pageUsageRecords } from './records';
import { pageInOrder } from '../../support/pagination';

/** Who a usage operation is for: the vendor's owner string and a meter slug. */
export interface UsageTarget {
  owner: string;
  meterSlug: string;
}

export interface MeterInput {
  slug: string;
  name: string;
  unitLabel?: string | null;
  /** Decimal places its quantities may have (0, the default: whole units; at most 6). Fixed once made. */
  scale?: number;
}

/** An answer's counters (counts of the meter's smallest step) in the meter's units, as decimal text. */
function scaledAnswer(a: UsageAnswer, scale: number): UsageAnswer {
  if (!scale) return a;
  const units = (v: string) => (v === '' ? v : formatUnits(BigInt(v), scale));
  return {
    ...a,
    granted: units(a.granted),
    used: units(a.used),
    reserved: units(a.reserved),
    remaining: a.remaining === null ? null : units(a.remaining),
  };
}

export interface GrantInput extends UsageTarget {
  amount: unknown;
  priority?: number;
  expiresAt?: Date | null;
  source?: GrantSource;
}

/** A balance with its meter, for reads. */
export interface BalanceView {
  balance: Balance;
  meter: UsageMeter;
}

const OWNER_MAX = 255;
/** The latest instant a usage record keeps (ISO 8601's four-digit years). */
const LATEST_INSTANT = Date.UTC(9999, 11, 31, 23, 59, 59, 999);
/** Months of ledger partitions made ahead of the current one. */
export const LEDGER_MONTHS_AHEAD = 2;

/** The owner as given: 1..255 characters with no control characters, or a 400 naming it. */
export function ownerOf(owner: unknown, field = 'owner'): string {
  if (typeof owner !== 'string' || owner.length === 0 || owner.length > OWNER_MAX || /[\u0000-\u001f\u007f]/.test(owner))
    invalid(field, `must be 1 to ${OWNER_MAX} printable characters`);
  return owner as string;
}

const fingerprintOf = (what: string, body: unknown) =>
  `${what} ${createHash('sha256')
    .update(JSON.stringify(body, (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v)))
    .digest('hex')}`;

/**
 * What an operation's idempotency key stands for: its fields in one order, whatever order the
 * client sent them in (a retry that reorders its JSON is the same request).
 */
const requestOf = (t: UsageTarget, quantity: bigint) => ({ owner: t.owner, meterSlug: t.meterSlug, quantity });

/**
 * Meters, credits and usage (DESIGN section 14): record, consume, reserve -> commit | release,
 * grants, and the reads, all exact. Every change goes through the group commit, so it is decided
 * under the balance's row lock and answered after its transaction commits; an idempotency key is
 * claimed in that same transaction (the same key replays the first answer; with another body it is
 * refused).
 */
export class UsageService {
  private readonly group: GroupCommit;
  /** Meters by tenant and slug: a meter's id never changes, so a hit never needs the database. */
  private readonly meters = new Map<string, UsageMeter>();

  constructor(
    private readonly deps: {
      uow: UnitOfWork;
      clock: Clock;
      ids: IdGenerator;
      limits?: Partial<CoreLimits>;
      logger?: Logger;
    },
  ) {
    // Stripe meter events are not sent from here: the meter-event relay reads them from the ledger.
    this.group = new GroupCommit(deps, deps.limits?.usageGroupCommit ?? true);
  }

  /** Creates a meter (201); a slug already taken in the tenant is a METER_EXISTS error. */
  async createMeter(tenant: Tenant, input: MeterInput): Promise<UsageMeter> {
    if (!METER_SLUG.test(input.slug) || input.slug.length > 64) invalid('slug', 'must match ^[a-z0-9_]+$ (at most 64 characters)');
    if (!input.name.trim()) invalid('name', 'must not be empty');
    const scale = input.scale ?? 0;
    if (!Number.isInteger(scale) || scale < 0 || scale > MAX_SCALE) invalid('scale', `must be a whole number from 0 to ${MAX_SCALE}`);
    const now = this.deps.clock.now();
    const id = this.deps.ids.newId();
    const meter: UsageMeter = {
      id,
      ...tenant,
      slug: input.slug,
      name: input.name,
      unitLabel: input.unitLabel ?? null,
      scale,
      paymentMeterId: `mtr_${id.replace(/-/g, '').slice(0, 16)}`,
      createdAt: now,
      updatedAt: now,
    };
    await this.deps.uow.run(async (r) => {
      if (await r.usage.findMeter(tenant, input.slug)) fail(ErrorCodes.METER_EXISTS, `a meter with slug "${input.slug}" exists`);
      await r.usage.saveMeter(meter);
    });
    return meter;
  }

  /** One page of the tenant's meters. */
  pageMeters(tenant: Tenant, query: { limit: number; after?: string; before?: string; search?: string }): Promise<Page<UsageMeter>> {
    return this.deps.uow.read((r) => r.usage.pageMeters(tenant, query));
  }

  /** The tenant's meter of this slug, or a 400 naming `field`. */
  async meter(tenant: Tenant, slug: string, field = 'meterSlug'): Promise<UsageMeter> {
    const id = `${tenant.organisationId}:${tenant.isTest}:${slug}`;
    const cached = this.meters.get(id);
    if (cached) return cached;
    const found = await this.deps.uow.read((r) => r.usage.findMeter(tenant, slug));
    if (!found) return invalid(field, `names no meter of this organisation`);
    if (this.meters.size > 10_000) this.meters.clear();
    this.meters.set(id, found);
    return found;
  }

  private async target(tenant: Tenant, t: UsageTarget): Promise<BalanceTarget> {
    return { tenant, owner: ownerOf(t.owner), meter: await this.meter(tenant, t.meterSlug) };
  }

  private checkKey(key: string | undefined): void {
    if (key !== undefined && (key.length === 0 || key.length > IDEMPOTENCY_KEY_MAX))
      invalid('idempotency-key', `must be 1 to ${IDEMPOTENCY_KEY_MAX} characters`);
  }

  /**
   * Queues the operation on the owner's balance of the meter. `build` makes the operation and the
   * body its key's fingerprint covers once the meter is known (quantities are read in the meter's
   * scale); the answer's counters are shown in the meter's units.
   */
  private async submit(
    tenant: Tenant,
    t: UsageTarget,
    what: string,
    build: (scale: number) => { op: UsageOp | null; body: unknown },
    key?: string,
  ): Promise<UsageAnswer> {
    this.checkKey(key);
    const target = await this.target(tenant, t);
    const scale = target.meter.scale ?? 0;
    const { op, body } = build(scale);
    // The fingerprint tells a replay from a reuse of the key: without a key there is nothing to tell (an empty one).
    const fingerprint = key === undefined ? '' : fingerprintOf(what, body);
    return scaledAnswer(await this.group.submit(target, op, key, fingerprint), scale);
  }

  /** Usage that happened: counted even over a cap (billed as overage). */
  async record(tenant: Tenant, t: UsageTarget & { quantity: unknown }, key?: string, field = 'quantity'): Promise<UsageAnswer> {
    checkQuantityShape(t.quantity, field);
    return this.submit(
      tenant,
      t,
      'record',
      (scale) => {
        const quantity = quantityOf(t.quantity, field, scale);
        return { op: { kind: 'record', quantity }, body: requestOf(t, quantity) };
      },
      key,
    );
  }

  /** Check and take in one step: allowed -> taken; denied -> nothing taken, the answer says what remains. */
  async consume(tenant: Tenant, t: UsageTarget & { quantity: unknown }, key?: string): Promise<UsageAnswer> {
    checkQuantityShape(t.quantity, 'quantity');
    return this.submit(
      tenant,
      t,
      'consume',
      (scale) => {
        const quantity = quantityOf(t.quantity, 'quantity', scale);
        return { op: { kind: 'consume', quantity }, body: requestOf(t, quantity) };
      },
      key,
    );
  }

  /** Holds up to `quantity` for `ttlSeconds` (at most 24 h); denied like consume. */
  async reserve(tenant: Tenant, t: UsageTarget & { quantity: unknown; ttlSeconds: unknown }, key?: string): Promise<UsageAnswer> {
    checkQuantityShape(t.quantity, 'quantity');
    const ttl = t.ttlSeconds;
    if (typeof ttl !== 'number' || !Number.isInteger(ttl) || ttl < 1 || ttl > MAX_HOLD_SECONDS)
      invalid('ttlSeconds', `must be a whole number of seconds from 1 to ${MAX_HOLD_SECONDS}`);
    const expiresAt = new Date(this.deps.clock.now().getTime() + (ttl as number) * 1000);
    const holdId = this.deps.ids.newId();
    return this.submit(
      tenant,
      t,
      'reserve',
      (scale) => {
        const quantity = quantityOf(t.quantity, 'quantity', scale);
        return { op: { kind: 'reserve', quantity, holdId, expiresAt }, body: { ...requestOf(t, quantity), ttlSeconds: ttl, ttl } };
      },
      key,
    );
  }

  /** Uses `quantity` (at most the hold) of a hold; the rest returns. */
  async commit(tenant: Tenant, holdId: Id, input: { quantity: unknown }, key?: string): Promise<UsageAnswer> {
    checkQuantityShape(input.quantity, 'quantity');
    const t = await this.holdTarget(tenant, holdId);
    return this.submit(
      tenant,
      t,
      'commit',
      (scale) => {
        const quantity = quantityOf(input.quantity, 'quantity', scale);
        return { op: { kind: 'commit', holdId, quantity }, body: { holdId, quantity } };
      },
      key,
    );
  }

  /** Returns a hold whole. */
  async release(tenant: Tenant, holdId: Id, key?: string): Promise<UsageAnswer> {
    const t = await this.holdTarget(tenant, holdId);
    return this.submit(tenant, t, 'release', () => ({ op: { kind: 'release', holdId }, body: { holdId } }), key);
  }

  /** Grants units to the owner's balance of the meter (an unknown owner gets a balance). */
  async grant(tenant: Tenant, input: GrantInput, key?: string): Promise<UsageAnswer> {
    checkQuantityShape(input.amount, 'amount');
    const priority = input.priority ?? DEFAULT_GRANT_PRIORITY;
    if (!Number.isInteger(priority) || priority < 0 || priority > 100) invalid('priority', 'must be a whole number from 0 to 100');
    const source = input.source ?? 'adjustment';
    if (!GRANT_SOURCES.includes(source)) invalid('source', `must be one of ${GRANT_SOURCES.join(', ')}`);
    const now = this.deps.clock.now();
    if (input.expiresAt && input.expiresAt <= now) invalid('expiresAt', 'must be in the future');
    // PostgreSQL keeps instants up to the year 294276, but ISO 8601 text (how instants travel to
    // it and back) has four-digit years: a later expiry is refused, not stored unreadably.
    if (input.expiresAt && input.expiresAt.getTime() > LATEST_INSTANT) invalid('expiresAt', 'must be at most 9999-12-31T23:59:59.999Z');
    const id = this.deps.ids.newId();
    return this.submit(
      tenant,
      input,
      'grant',
      (scale) => {
        const amount = quantityOf(input.amount, 'amount', scale);
        const grant: CreditGrant = {
          id,
          balanceId: '',
          amount,
          drawn: 0n,
          expired: 0n,
          priority,
          expiresAt: input.expiresAt ?? null,
          source,
          createdAt: now,
        };
        const body = {
          owner: input.owner,
          meterSlug: input.meterSlug,
          amount,
          priority,
          source,
          expiresAt: input.expiresAt?.toISOString() ?? null,
        };
        return { op: { kind: 'grant', grant }, body };
      },
      key,
    );
  }

  /**
   * Ends the owner's period of the meter: the period's usage becomes final (its `close` ledger
   * entry), and a new balance starts until `periodEnd` with the allowance and what rolls over (as
   * plan grants), what the period did not need of other grants that have not expired (each with its
   * own terms), and the open holds. Runs under the balance's row lock like every operation, so
   * each unit consumed meanwhile lands in exactly one period. Returns the final usage and the carry.
   */
  async closePeriod(
    tenant: Tenant,
    t: UsageTarget,
    next: { periodEnd: Date | null; allowance?: bigint; rollover?: Rollover },
  ): Promise<{ finalUsage: bigint; carried: bigint; closedBalanceId: Id; balanceId: Id }> {
    const target = await this.target(tenant, t);
    const now = this.deps.clock.now();
    return this.deps.uow.run(async (r) => {
      const closed = await closeOpenPeriod(r, this.deps.ids, {
        tenant,
        owner: target.owner,
        meterId: target.meter.id,
        rollover: next.rollover ?? { kind: 'none' },
        carry: { grants: true, holds: true },
        now,
      });
      // Its final usage record (status final): what a period closed by hand used; nothing is priced.
      const end = closed.balance.periodEnd ?? now;
      if (!(await r.usage.findClose(tenant, target.owner, target.meter.id, end)))
        await r.usage.saveClose({
          id: this.deps.ids.newId(),
          ...tenant,
          owner: target.owner,
          meterId: target.meter.id,
          balanceId: closed.balance.id,
          subscriptionId: null,
          periodStart: closed.balance.periodStart,
          periodEnd: end,
          finalUsage: closed.finalUsage,
          billedUnits: billedUnits(closed.finalUsage, closed.granted, { minUsage: 0n }),
          currency: null,
          amountMinor: 0n,
          createdAt: now,
        });
      const opened = await openPeriod(r, this.deps.ids, {
        tenant,
        owner: target.owner,
        meter: target.meter,
        start: now,
        end: next.periodEnd,
        cap: closed.balance.cap,
        grants: [next.allowance ?? 0n, closed.carried],
        kept: closed.kept,
        holds: closed.holds,
        limited: closed.balance.limited,
        now,
      });
      return { finalUsage: closed.finalUsage, carried: closed.carried, closedBalanceId: closed.balance.id, balanceId: opened.id };
    });
  }

  /** The owner's open balances (of one meter when given) with their meters. */
  async balances(tenant: Tenant, owner: string, meterSlug?: string): Promise<BalanceView[]> {
    ownerOf(owner);
    const meter = meterSlug === undefined ? undefined : await this.meter(tenant, meterSlug);
    return this.deps.uow.read(async (r) => {
      const balances = await r.usage.openBalances(tenant, owner, meter?.id);
      const meters = new Map((await r.usage.getMeters([...new Set(balances.map((b) => b.meterId))])).map((m) => [m.id, m]));
      return balances.flatMap((balance) => {
        const m = meters.get(balance.meterId);
        return m ? [{ balance, meter: m }] : [];
      });
    });
  }

  /** One page of usage records (what used units), with the meters they name. */
  async records(
    tenant: Tenant,
    query: Omit<UsageRecordQuery, 'meterId'> & { meterSlug?: string },
  ): Promise<{ page: Page<LedgerEntry>; meters: Map<Id, UsageMeter> }> {
    const meter = query.meterSlug === undefined ? undefined : await this.meter(tenant, query.meterSlug);
    return this.deps.uow.read(async (r) => {
      const page = await r.usage.pageRecords(tenant, { limit: query.limit, after: query.after, owner: query.owner, meterId: meter?.id });
      const meters = new Map((await r.usage.getMeters([...new Set(page.items.map((e) => e.meterId))])).map((m) => [m.id, m]));
      return { page, meters };
    });
  }

  /**
   * The ledger's partitions: this month's and the next two are made ahead; with a retention,
   * months older than it go, except those holding a row of an open balance.
   */
  async maintainLedger(retentionMonths: number | null): Promise<{ created: string[]; dropped: string[] }> {
    if (retentionMonths !== null && (!Number.isInteger(retentionMonths) || retentionMonths < 1))
      invalid('retentionMonths', 'must be a whole number of at least 1');
    const now = this.deps.clock.now();
    return this.deps.uow.run((r) => r.usage.maintainLedger(now, retentionMonths, LEDGER_MONTHS_AHEAD));
  }

  /**
   * One page of usage records of the statuses asked for, oldest first: `recorded` ledger entries,
   * `current` open periods (of one owner: `owner` is then required) and `final` closed periods.
   */
  async usageRecords(
    tenant: Tenant,
    q: {
      limit: number;
      after?: string;
      before?: string;
      sort?: 'asc' | 'desc';
      owner?: string;
      meterSlug?: string;
      statuses: UsageRecordStatus[];
    },
  ): Promise<{ page: Page<UsageRecordRow>; meters: Map<Id, UsageMeter> }> {
    const meter = q.meterSlug === undefined ? undefined : await this.meter(tenant, q.meterSlug);
    if (q.statuses.includes('current') && q.owner === undefined) invalid('owner', 'is required to list current usage');
    let meters = new Map<Id, UsageMeter>();
    // Newest first pages the oldest-first records backwards from the cursor (pageInOrder).
    const page = await pageInOrder(q.sort ?? 'asc', { limit: q.limit, after: q.after, before: q.before }, async (p) => {
      const out = await this.deps.uow.read((r) =>
        pageUsageRecords(r, tenant, { ...q, after: p.after, before: p.before, meterId: meter?.id }),
      );
      meters = out.meters;
      return out.page;
    });
    return { page, meters };
  }

  /** Balances whose counters differ from their ledger's sums (none on a healthy database). */
  verify(limit = 100): Promise<BalanceMismatch[]> {
    return this.deps.uow.read((r) => r.usage.mismatches(limit));
  }

  /**
   * Returns holds that expired (their balances' queues take the expiry in order with everything
   * else), reports usage that waited its window (`usage.recorded`) and forgets idempotency keys past
   * their 24 hours. Returns how many balances it touched.
   */
  async sweep(limit = 500): Promise<number> {
    const now = this.deps.clock.now();
    // Balances with holds due, then those with credit past its expiry to lapse, then balances whose waiting usage is due to be reported
    // (`usage.recorded`) and that no write reported since: at most `limit` in all. Each goes through
    // its queue like any operation, a batch of them at a time (one group-commit transaction, and
    // room left for live operations); with group commit off, one at a time.
    const due = await this.deps.uow.read(async (r) => {
      const found = new Map((await r.usage.balancesWithDueHolds(now, limit)).map((b) => [b.id, b]));
      if (found.size < limit) for (const b of await r.usage.balancesWithDueGrants(now, limit - found.size)) found.set(b.id, b);
      if (found.size < limit) for (const b of await r.usage.balancesWithDueReports(now, limit - found.size)) found.set(b.id, b);
      const meters = new Map((await r.usage.getMeters([...new Set([...found.values()].map((b) => b.meterId))])).map((m) => [m.id, m]));
      return [...found.values()].flatMap((b) => {
        const meter = meters.get(b.meterId);
        return meter ? [{ b, meter }] : [];
      });
    });
    const width = (this.deps.limits?.usageGroupCommit ?? true) ? MAX_BALANCES : 1;
    for (let n = 0; n < due.length; n += width) {
      const settled = await Promise.allSettled(
        due.slice(n, n + width).map(({ b, meter }) => this.group.submit({ tenant: b, owner: b.owner, meter }, null, undefined, '')),
      );
      for (const [i, s] of settled.entries()) {
        if (s.status === 'fulfilled') continue;
        // One balance that fails (its next pass tries again) holds up neither the others nor the keys' purge.
        this.deps.logger?.error('usage sweep: a balance failed', { balanceId: due[n + i].b.id, error: String(s.reason) });
      }
    }
    await this.deps.uow.run((r) => r.usage.purgeKeys(new Date(now.getTime() - IDEMPOTENCY_TTL_MS)));
    return due.length;
  }

  /**
   * v1 `PUT /usage`: usage of a license's usage feature. The holder is the license's subscription
   * (or the ad hoc license itself); the meter is the tenant's meter whose slug is the feature's
   * variable name, created on first use.
   */
  async recordForLicense(
    tenant: Tenant,
    input: { licenseId: Id; featureVariableName: string; increment: unknown },
    key?: string,
  ): Promise<UsageAnswer> {
    checkQuantityShape(input.increment, 'countOptions.increment');
    const { license, feature } = await this.deps.uow.read(async (r) => {
      const license = assertAccessible(await r.licenses.get(input.licenseId), tenant, 'license');
      // A canceled license's holder has ended (its usage closed and billed): usage recorded on it
      // would open a balance no period closes (after a usage-based plan change, the new licenses hold it).
      if (license.status === 'CANCELED') fail(ErrorCodes.LICENSE_CANCELED, 'the license is canceled: usage is recorded on a live license');
      const product = await r.products.get(license.productId);
      const feature = product?.features.find((f) => f.variableName === input.featureVariableName || f.name === input.featureVariableName);
      return { license, feature: feature ?? invalid('featureVariableName', "names no feature of the license's product") };
    });
    const slug = feature.variableName.toLowerCase();
    if (!METER_SLUG.test(slug)) invalid('featureVariableName', 'a metered feature needs a variable name of a-z, 0-9 and _');
    let created = false;
    const meter = await this.meter(tenant, slug).catch(() =>
      this.createMeter(tenant, { slug, name: feature.displayName || feature.name })
        .then((m) => ((created = true), m))
        .catch(() => this.meter(tenant, slug)),
    );
    const target = { owner: license.subscriptionId ?? license.id, meterSlug: meter.slug };
    // The meter made for this feature is committed: an outage of the record says so (a retry uses it).
    const recorded = this.submit(
      tenant,
      target,
      'record',
      (scale) => {
        const quantity = quantityOf(input.increment, 'countOptions.increment', scale);
        return { op: { kind: 'record', quantity }, body: { ...target, quantity } };
      },
      key,
    );
    return created
      ? recorded.catch((e: unknown) => {
          throw outageAfter(e, `the meter ${slug} was made for this feature`, 'retry the usage (with the same unique-key)');
        })
      : recorded;
  }

  /** v1 `GET /licenses/:uuid/usage`: units used per usage feature by the license's holder this period. */
  async licenseUsage(tenant: Tenant, licenseId: Id): Promise<LicenseUsage[]> {
    return this.deps.uow.read(async (r) => {
      const license = assertAccessible(await r.licenses.get(licenseId), tenant, 'license');
      const product = await r.products.get(license.productId);
      const balances = await r.usage.openBalances(tenant, license.subscriptionId ?? license.id);
      const meters = new Map((await r.usage.getMeters(balances.map((b) => b.meterId))).map((m) => [m.id, m]));
      return balances.flatMap((b) => {
        const slug = meters.get(b.meterId)?.slug;
        const feature = product?.features.find((f) => f.variableName.toLowerCase() === slug);
        const unitCount = exactNumber(b.used, meters.get(b.meterId)?.scale);
        return feature ? [{ licenseId: license.id, featureId: feature.id, planId: license.planId, unitCount, updatedAt: b.updatedAt }] : [];
      });
    });
  }

  private async holdTarget(tenant: Tenant, holdId: Id): Promise<UsageTarget> {
    return this.deps.uow.read(async (r) => {
      const hold = assertAccessible(await r.usage.getHold(holdId), tenant, 'reservation');
      const balance = await r.usage.getBalance(hold.balanceId);
      const meter = balance && (await r.usage.getMeters([balance.meterId]))[0];
      return balance && meter
        ? { owner: balance.owner, meterSlug: meter.slug }
        : fail(ErrorCodes.HOLD_NOT_FOUND, 'the reservation does not exist');
    });
  }
}
