import { exactNumber, METER_SLUG, stepsDown } from '../../domain/usage';
import { currencyExponent, isLiveMeteredLine } from '../../domain/catalog';
import {
  closePeriod as closeRule,
  decide,
  DEFAULT_GRANT_PRIORITY,
  expireDue,
  lapseHeldExpired,
  sortGrants,
  type BalanceState,
  type KeptGrant,
  type PeriodCarry,
} from '../../domain/usage';
import { billedUnits, minimumFor, shiftDecimal, usageCharge, usagePriceOption, type UsageChargeLine } from '../../domain/usage-billing';
import type {
  Balance,
  CreditGrant,
  Hold,
  Id,
  LedgerEntry,
  Feature,
  LineItem,
  Meter,
  Plan,
  PlanFeatureValue,
  Rollover,
  Subscription,
  Tenant,
  UsageClose,
  UsageTerms,
} from '../../model';
import type { IdGenerator, Repositories, UsageInvoiceLine } from '../../ports';

/** A metered line item without terms meters only: nothing granted, no cap, no minimum, nothing carried. */
export const NO_USAGE_TERMS: UsageTerms = { allowance: 0n, maxUsage: null, minUsage: 0n, rollover: { kind: 'none' } };

/** One metered line item of a plan with its meter and terms (in steps of the meter: units x 10^scale). */
export interface UsageLine {
  lineItem: LineItem;
  meter: Meter;
  terms: UsageTerms;
  /** The meter's decimal places (0: whole units). */
  scale: number;
}

/** The plan's live metered line items (each counts on its meter). */
export const usageLinesOf = (plan: Plan): UsageLine[] =>
  plan.lineItems.flatMap((li) =>
    isLiveMeteredLine(li) && li.meter
      ? [{ lineItem: li, meter: li.meter, terms: li.usage ?? NO_USAGE_TERMS, scale: li.meter.scale ?? 0 }]
      : [],
  );

/**
 * The plan's usage lines as a subscription's transaction sees them: its live metered line items,
 * and its legacy/v1 usage features (`isUsage`) acting as metered line items (DESIGN section 14: a
 * usage feature of a plan names a meter like a metered line item does). Such a feature counts on
 * the tenant's meter of its variable name (made when new, as v1 `PUT /usage` does); `maxUsage` is
 * the period's cap (0: none), `minUsage` the least billed, no allowance and no rollover, priced per
 * unit at `pricePerUnit` (major units of the subscription's currency). A metered line item on the
 * same meter wins. On a meter with decimal places the feature's `maxUsage` and `minUsage` are units
 * of it (places past its scale dropped).
 */
export async function usageLinesIn(
  r: Repositories,
  ids: IdGenerator,
  plan: Plan,
  currency: string | null,
  now: Date,
): Promise<UsageLine[]> {
  const lines = usageLinesOf(plan);
  const values = plan.features.filter((v) => v.isUsage);
  if (!values.length) return lines;
  const product = await r.products.get(plan.productId);
  const tenant = { organisationId: plan.organisationId, isTest: plan.isTest };
  for (const v of values) {
    const feature = product?.features.find((f) => f.id === v.featureId);
    const slug = feature?.variableName.toLowerCase() ?? '';
    if (!feature || !METER_SLUG.test(slug) || slug.length > 64 || lines.some((l) => l.meter.slug === slug)) continue;
    let meter = await r.usage.findMeter(tenant, slug);
    if (!meter) {
      const id = ids.newId();
      meter = {
        id,
        ...tenant,
        slug,
        name: feature.displayName || feature.name,
        unitLabel: null,
        scale: 0,
        paymentMeterId: `mtr_${id.replace(/-/g, '').slice(0, 16)}`,
        createdAt: now,
        updatedAt: now,
      };
      await r.usage.saveMeter(meter);
    }
    const scale = meter.scale ?? 0;
    const terms: UsageTerms = {
      allowance: 0n,
      maxUsage: v.maxUsage > 0 ? stepsDown(v.maxUsage, scale) : null,
      minUsage: v.minUsage > 0 ? stepsDown(v.minUsage, scale) : 0n,
      rollover: { kind: 'none' },
    };
    lines.push({ lineItem: featureLineItem(feature, v, meter, terms, currency, now), meter, terms, scale });
  }
  return lines;
}

/** A usage feature as the metered line item it acts as (what period close prices and describes). */
function featureLineItem(
  feature: Feature,
  v: PlanFeatureValue,
  meter: Meter,
  terms: UsageTerms,
  currency: string | null,
  now: Date,
): LineItem {
  const code = (currency ?? 'usd').toLowerCase();
  return {
    id: feature.id,
    name: feature.displayName || feature.name,
    slug: meter.slug,
    paymentProductId: '',
    nickname: '',
    priceType: 'metered',
    intervalType: 'recurring',
    billingScheme: 'per_unit',
    tiersMode: null,
    minQuantity: 0,
    maxQuantity: 0,
    isActive: true,
    allowChangingQuantity: false,
    unitLabel: null,
    meter,
    usage: terms,
    prices: [
      {
        id: feature.id,
        paymentPriceId: '',
        interval: null,
        intervalCount: null,
        currencyOptions: [
          {
            id: feature.id,
            currency: code,
            // Minor units, possibly fractional, moved from major units on the decimal text (never a
            // binary multiply: 0.0015 dollars are exactly 0.15 cents); usage lines round once each.
            unitAmount: v.pricePerUnit > 0 ? shiftDecimal(v.pricePerUnit, currencyExponent(code.toUpperCase())) : 0,
            isDefault: true,
            tiers: [],
            createdAt: now,
            updatedAt: now,
          },
        ],
        archivedAt: null,
        createdAt: now,
        updatedAt: now,
      },
    ],
    archivedAt: null,
    createdAt: now,
    updatedAt: now,
  };
}

/** The holder of a subscription's usage: the subscription (all its seats share it), as v1 `PUT /usage` records it. */
export const subscriptionOwner = (s: Pick<Subscription, 'id'>): string => s.id;

type Entry = Omit<LedgerEntry, 'id' | 'organisationId' | 'isTest' | 'balanceId' | 'owner' | 'meterId' | 'idempotencyKey' | 'createdAt'>;

const ledgerEntry = (ids: IdGenerator, b: Balance, e: Entry, now: Date): LedgerEntry => ({
  ...e,
  id: ids.newId(),
  organisationId: b.organisationId,
  isTest: b.isTest,
  balanceId: b.id,
  owner: b.owner,
  meterId: b.meterId,
  idempotencyKey: null,
  createdAt: now,
});

/** A balance not yet used: nothing granted, used, reserved or waiting to be reported. */
export const freshBalance = (
  ids: IdGenerator,
  tenant: Tenant,
  owner: string,
  meterId: Id,
  period: { start: Date; end: Date | null },
  cap: bigint | null,
  now: Date,
): Balance => ({
  id: ids.newId(),
  organisationId: tenant.organisationId,
  isTest: tenant.isTest,
  owner,
  meterId,
  periodStart: period.start,
  periodEnd: period.end,
  granted: 0n,
  used: 0n,
  reserved: 0n,
  cap,
  limited: false,
  closedAt: null,
  unreported: 0n,
  unreportedOps: 0,
  reportedAt: null,
  reportDueAt: null,
  createdAt: now,
  updatedAt: now,
});

/**
 * Starts (owner, meter)'s period in the caller's transaction: its balance (created with the period
 * and cap when there is none open, else the open one) gets each amount as a plan grant expiring at
 * the period's end, each kept grant of the period before as a grant of its own (its priority,
 * expiry and source), and each carried hold reserved (the hold moves to this balance, so its commit
 * lands here). Every change is in the ledger like any other.
 */
export async function openPeriod(
  r: Repositories,
  ids: IdGenerator,
  a: {
    tenant: Tenant;
    owner: string;
    meter: Pick<Meter, 'id' | 'slug' | 'scale'>;
    start: Date;
    end: Date | null;
    cap: bigint | null;
    grants: bigint[];
    kept?: KeptGrant[];
    holds?: Hold[];
    limited?: boolean;
    /**
     * An open balance found (not made here: usage recorded on a meter no plan of the holder metered,
     * or left open by an older version) becomes this period's: its start, cap and end are the period's.
     */
    adopt?: boolean;
    now: Date;
  },
): Promise<Balance> {
  const fresh = freshBalance(ids, a.tenant, a.owner, a.meter.id, { start: a.start, end: a.end }, a.cap, a.now);
  const locked = await r.usage.lockBalance(fresh, [], a.now);
  const s: BalanceState = { balance: locked.balance, grants: sortGrants([...locked.grants]), holds: new Map() };
  const b = s.balance;
  const adopted =
    !!a.adopt &&
    b.id !== fresh.id &&
    (b.cap !== a.cap || b.periodEnd?.getTime() !== a.end?.getTime() || b.periodStart.getTime() !== a.start.getTime());
  if (adopted) {
    // Its usage so far is this period's, billed at its close; the period's minimum counts from its start.
    Object.assign(b, { periodStart: a.start, cap: a.cap, periodEnd: a.end, updatedAt: a.now });
    await r.usage.setPeriodStart(b.id, a.start);
  }
  const entries: LedgerEntry[] = [];
  const grants: CreditGrant[] = [];
  const plan = a.grants.map((amount): KeptGrant => ({ amount, priority: DEFAULT_GRANT_PRIORITY, expiresAt: a.end, source: 'plan' }));
  for (const g of [...plan, ...(a.kept ?? [])]) {
    if (g.amount <= 0n) continue;
    const grant: CreditGrant = { ...g, id: ids.newId(), balanceId: b.id, drawn: 0n, expired: 0n, createdAt: a.now };
    grants.push(grant);
    entries.push(...decide(s, { kind: 'grant', grant }, a.meter.slug, a.now).entries.map((e) => ledgerEntry(ids, s.balance, e, a.now)));
  }
  const holds = a.holds ?? [];
  for (const h of holds) {
    // Reserved again here, by a `reserve` entry of its own (the close returned it on the old balance).
    s.balance.reserved += h.quantity;
    s.balance.updatedAt = a.now;
    h.balanceId = s.balance.id;
    entries.push(
      ledgerEntry(
        ids,
        s.balance,
        { kind: 'reserve', quantity: h.quantity, grantedDelta: 0n, usedDelta: 0n, reservedDelta: h.quantity, holdId: h.id, grantId: null },
        a.now,
      ),
    );
  }
  if (a.limited) s.balance.limited = true;
  if (entries.length || a.limited || adopted)
    await r.usage.write({ balance: s.balance, meterSlug: a.meter.slug, meterScale: a.meter.scale, grants, holds, entries, keys: [] });
  if (holds.length)
    await r.usage.moveHolds(
      holds.map((h) => h.id),
      s.balance.id,
    );
  return s.balance;
}

/** What a close ended: the closed balance (before its counters returned to zero) and what rolls over. */
export interface ClosedPeriod {
  balance: Balance;
  /** The least the period was billed for (`minUsage` for the time the balance covered). */
  minUsage: bigint;
  finalUsage: bigint;
  /** What the period's grants gave (and not lapsed) when it closed. */
  granted: bigint;
  carried: bigint;
  /** What of grants that are not the plan's the next period keeps (`carry.grants`). */
  kept: KeptGrant[];
  /** Open holds the next period takes over (`carry.holds`). */
  holds: Hold[];
}

/**
 * Ends (owner, meter)'s open period under its row lock in the caller's transaction: expired holds
 * return, open holds are released (or, with `carry.holds`, handed to the next period), the usage
 * becomes final (a `close` ledger entry returns the counters to zero, so the sums still match),
 * unused plan units carry by the rule and, with `carry.grants`, what the period did not need of
 * other grants that have not expired is handed on (`minUsage`: what the period needs at least).
 */
export async function closeOpenPeriod(
  r: Repositories,
  ids: IdGenerator,
  a: {
    tenant: Tenant;
    owner: string;
    meterId: Id;
    rollover: Rollover;
    carry?: PeriodCarry;
    /** The least the period needs, given the balance closed (its start); none by default. */
    minUsage?: (b: Balance) => bigint;
    now: Date;
  },
): Promise<ClosedPeriod> {
  const locked = await r.usage.lockBalance(
    freshBalance(ids, a.tenant, a.owner, a.meterId, { start: a.now, end: null }, null, a.now),
    [],
    a.now,
  );
  const heldIds = (await r.usage.ledgerOf(locked.balance.id)).flatMap((e) => (e.kind === 'reserve' && e.holdId ? [e.holdId] : []));
  const holds = (await Promise.all(heldIds.map((id) => r.usage.getHold(id)))).filter((h): h is Hold => !!h && h.status === 'held');
  const state: BalanceState = {
    balance: locked.balance,
    grants: sortGrants([...locked.grants]),
    holds: new Map(holds.map((h) => [h.id, h])),
  };
  const touched = [...locked.grants];
  // Grants that end with the period roll over or lapse by the close's rule (expireDue leaves them).
  const expired = [...expireDue(state, a.now), ...lapseHeldExpired(state, a.now)];
  const before = { ...state.balance };
  const minUsage = a.minUsage?.(before) ?? 0n;
  const closed = closeRule(state, a.rollover, a.now, a.carry, minUsage);
  // Usage still waiting for its window is told now (`usage.recorded`, before the close's usage.finalised), with the period's counters.
  const meter = before.unreportedOps > 0 ? (await r.usage.getMeters([a.meterId]))[0] : undefined;
  await r.usage.write({
    balance: state.balance,
    ...(meter && { meterSlug: meter.slug, meterScale: meter.scale, ended: before }),
    grants: touched,
    holds: [...state.holds.values()],
    entries: [...expired, ...closed.entries].map((e) => ledgerEntry(ids, state.balance, e, a.now)),
    keys: [],
  });
  return {
    balance: before,
    minUsage,
    finalUsage: closed.finalUsage,
    granted: before.granted,
    carried: closed.carried,
    kept: closed.kept,
    holds: closed.holds,
  };
}

/** A closed period of one metered line item, billed: its final record and invoice lines. */
export interface BilledPeriod {
  close: UsageClose;
  meterSlug: string;
  /** The meter's decimal places: the lines' quantities count its smallest step. */
  scale: number;
  lines: UsageChargeLine[];
  meter: Meter;
  /** What of grants that are not the plan's outlives the period, for the next holder (`keepGrants`); empty otherwise. */
  kept: KeptGrant[];
  /**
   * A switch of the subscription to another plan (`next` on another plan): the open holds of this
   * meter, for the new plan's balance of it (released where the new plan does not meter it).
   */
  holds: Hold[];
  /** A switch at the period's end: what rolled over by the old plan's rule, for the new plan's balance of this meter. */
  carried: bigint;
}

/**
 * Period close of a subscription (the renewal sweep, a plan change): for each metered line item
 * of its plan, unless that period was closed already (the final record's key), the usage is
 * closed and billed (units no grant covered, at least `minUsage`, by unit price or tiers) and,
 * when `next` is the same subscription on the same plan (a renewal), the next period starts with
 * the allowance plus what rolls over, the grants that are not the plan's (what the period did not
 * need of them, until their own expiry) and the open holds. When `next` is the same subscription
 * on another plan (a switch, at the period's end or within it: `midPeriod`), what rolls over (not
 * within the period: it did not end) and the open holds of the meters the new plan meters too are
 * handed back in the result, for `startSubscriptionUsage`; the other holds are released. Without
 * `next`, holds are released. Grants that are not the plan's lapse unless the next period is
 * this one's renewal or `keepGrants` (a plan change: the caller hands them to the next plan).
 * Runs in the caller's transaction, which holds the subscription's row lock.
 */
export async function closeSubscriptionPeriod(
  r: Repositories,
  ids: IdGenerator,
  a: {
    subscription: Subscription;
    plan: Plan;
    periodEnd: Date;
    next: { start: Date; end: Date; plan: Plan; subscription: Subscription } | null;
    keepGrants?: boolean;
    /** The switch is within the period (a plan move), not at its end: nothing rolls over. */
    midPeriod?: boolean;
    /** Only these meters close (a plan move: those whose terms change); default: every meter of the plan. */
    meters?: ReadonlySet<Id>;
    now: Date;
  },
): Promise<BilledPeriod[]> {
  const s = a.subscription;
  const tenant = { organisationId: s.organisationId, isTest: s.isTest };
  const owner = subscriptionOwner(s);
  const out: BilledPeriod[] = [];
  const renews = !!a.next && a.next.plan.id === a.plan.id && a.next.subscription.id === s.id;
  // The same holder on another plan: its open holds go on where the new plan meters their meter.
  const switched = !!a.next && !renews && a.next.subscription.id === s.id;
  const metersNext = new Set(switched && a.next ? (await usageLinesIn(r, ids, a.next.plan, s.currency, a.now)).map((l) => l.meter.id) : []);
  // Balances are locked in the group commit's order, so a batch holding two meters of this owner
  // and this close never wait on each other in a cycle.
  const lines = await inLockOrder(
    r,
    tenant,
    owner,
    (await usageLinesIn(r, ids, a.plan, s.currency, a.now)).filter((l) => !a.meters || a.meters.has(l.meter.id)),
  );
  if (switched) {
    // A switch then starts the next plan's meters: every open balance it closes or starts on is
    // locked first, in one call (by id, as a batch locks), so a balance open on a meter only the
    // next plan meters is not locked after the closes (a batch holding it while it waits on one
    // being closed would wait on this close in a cycle).
    const touched = new Set([...lines.map((l) => l.meter.id), ...[...metersNext].filter((m) => !a.meters || a.meters.has(m))]);
    await r.usage.lockBalances(
      [...touched].map((m) => ({
        fresh: freshBalance(ids, tenant, owner, m, { start: a.now, end: null }, null, a.now),
        holdIds: [],
        create: false,
      })),
      a.now,
    );
  }
  // A free trial's usage is not billed, nor its minimum (Stripe: usage accrued during a trial does
  // not count toward what is charged): its close keeps the final usage and bills nothing.
  const trial = s.status === 'TRIALING';
  for (const line of lines) {
    if (await r.usage.findClose(tenant, owner, line.meter.id, a.periodEnd)) continue;
    const closed = await closeOpenPeriod(r, ids, {
      tenant,
      owner,
      meterId: line.meter.id,
      rollover: a.next && !a.midPeriod ? line.terms.rollover : { kind: 'none' },
      carry: { grants: renews || !!a.keepGrants, holds: renews || metersNext.has(line.meter.id) },
      // The minimum of the time the balance covered (from its start, a move's say, to the close).
      minUsage: (b) =>
        trial ? 0n : minimumFor(line.terms.minUsage, a.plan, { periodStart: s.currentPeriodStart, from: b.periodStart, to: a.periodEnd }),
      now: a.now,
    });
    const units = trial ? 0n : billedUnits(closed.finalUsage, closed.granted, closed);
    const charge = usageCharge(line.lineItem, usagePriceOption(line.lineItem, s.currency), units, line.scale);
    const close: UsageClose = {
      id: ids.newId(),
      ...tenant,
      owner,
      meterId: line.meter.id,
      balanceId: closed.balance.id,
      subscriptionId: s.id,
      periodStart: closed.balance.periodStart,
      periodEnd: a.periodEnd,
      finalUsage: closed.finalUsage,
      billedUnits: units,
      currency: s.currency ? s.currency.toLowerCase() : null,
      amountMinor: charge.amountMinor,
      createdAt: a.now,
    };
    await r.usage.saveClose(close);
    out.push({
      close,
      meterSlug: line.meter.slug,
      scale: line.scale,
      lines: charge.lines,
      meter: line.meter,
      kept: renews ? [] : closed.kept,
      holds: renews ? [] : closed.holds,
      carried: switched ? closed.carried : 0n,
    });
    if (a.next && renews)
      await openPeriod(r, ids, {
        tenant,
        owner,
        meter: line.meter,
        start: a.next.start,
        end: a.next.end,
        cap: line.terms.maxUsage,
        grants: [line.terms.allowance, closed.carried],
        kept: closed.kept,
        holds: closed.holds,
        limited: closed.balance.limited,
        now: a.now,
      });
  }
  return out;
}

/**
 * Gives a subscription its first period of each metered line item of its plan (a purchase, a plan
 * change's new subscription, a switch of plan), from `only.start` (default: its period's start) to
 * its period's end; with `only.meters`, of those meters only. `handedOver`: what the period before
 * it (a plan change) handed on, by meter: the kept grants that are not the plan's, and for a
 * switch of the same subscription its open holds and what rolled over; given to this one's balance
 * of that meter, once per meter. Where its plan does not meter it, credits lapse (nothing would
 * ever close such a balance: a period close closes the plan's meters; the close released such
 * holds).
 */
export async function startSubscriptionUsage(
  r: Repositories,
  ids: IdGenerator,
  s: Subscription,
  plan: Plan,
  now: Date,
  handedOver: BilledPeriod[] = [],
  only: { start?: Date; meters?: ReadonlySet<Id> } = {},
): Promise<void> {
  const tenant = { organisationId: s.organisationId, isTest: s.isTest };
  const owner = subscriptionOwner(s);
  const lines = (await usageLinesIn(r, ids, plan, s.currency, now)).filter((l) => !only.meters || only.meters.has(l.meter.id));
  const period = { tenant, owner, start: only.start ?? s.currentPeriodStart, end: s.currentPeriodEnd, now };
  // Two line items of the plan may count on one meter: its balance takes what was handed on once,
  // and the first line's cap and end.
  const handed = new Set<Id>();
  for (const line of await inLockOrder(r, tenant, owner, lines)) {
    const first = !handed.has(line.meter.id);
    const from = first ? handedOver.filter((b) => b.meter.id === line.meter.id) : [];
    handed.add(line.meter.id);
    await openPeriod(r, ids, {
      ...period,
      meter: line.meter,
      cap: line.terms.maxUsage,
      grants: [line.terms.allowance, ...from.map((b) => b.carried)],
      kept: from.flatMap((b) => b.kept),
      holds: from.flatMap((b) => b.holds),
      adopt: first,
    });
  }
}

/**
 * A holder's usage lines in the group commit's locking order (usage_lock_balances): those with an
 * open balance by its id, then those without by meter id, as a batch locks what exists by id and
 * inserts what is missing by key. A period close or start taking them in this order never waits
 * on a batch of the same holder in a cycle. Lines of one meter keep the plan's order.
 */
async function inLockOrder(r: Repositories, tenant: Tenant, owner: string, lines: UsageLine[]): Promise<UsageLine[]> {
  const open = new Map((await r.usage.openBalances(tenant, owner)).map((b) => [b.meterId, b.id]));
  const order = (l: UsageLine) => open.get(l.meter.id) ?? `~${l.meter.id}`;
  return [...lines].sort((x, y) => (order(x) < order(y) ? -1 : order(x) > order(y) ? 1 : 0));
}

/**
 * How a line bills, as `usageCharge` reads it: its currency option's tiers (by volume or
 * graduated; the last tier open-ended whatever its bound) when tiered, else its unit price.
 */
function pricing(li: LineItem, currency: string | null): string {
  const option = usagePriceOption(li, currency);
  if (!option) return 'free';
  const tiers = li.billingScheme === 'tiered' ? option.tiers : [];
  if (!tiers.length) return `${option.currency} per unit ${option.unitAmount ?? 0}`;
  const bounds = tiers.map((t, i) => `${i === tiers.length - 1 ? 'inf' : t.upTo}/${t.unitAmount}/${t.flatAmount ?? 0}`);
  return `${option.currency} ${li.tiersMode === 'volume' ? 'volume' : 'graduated'} ${bounds.join(',')}`;
}

/**
 * How a plan meters each meter, as a period close reads it: the terms and pricing of its lines on
 * that meter, in the plan's order (the close bills a meter's first line). Two plans with the same
 * for a meter meter it the same way.
 */
async function usageTermsByMeter(
  r: Repositories,
  ids: IdGenerator,
  plan: Plan,
  currency: string | null,
  now: Date,
): Promise<Map<Id, string>> {
  const out = new Map<Id, string>();
  for (const l of await usageLinesIn(r, ids, plan, currency, now)) {
    const t = l.terms;
    const rollover = t.rollover.kind === 'upTo' ? `up to ${t.rollover.units}` : t.rollover.kind;
    const term = [t.allowance, t.maxUsage ?? 'no cap', t.minUsage, rollover, pricing(l.lineItem, currency)].join('|');
    out.set(l.meter.id, out.has(l.meter.id) ? `${out.get(l.meter.id)};${term}` : term);
  }
  return out;
}

/**
 * The meters whose terms differ between two plans (metered by one only, or by both otherwise):
 * what a move from one to the other closes and starts again; `newOnly`: those only `to` meters.
 */
export async function metersChanged(
  r: Repositories,
  ids: IdGenerator,
  from: Plan,
  to: Plan,
  currency: string | null,
  now: Date,
): Promise<{ changed: Set<Id>; newOnly: Set<Id> }> {
  // One after the other: a usage feature's meter is made on first use, once.
  const a = await usageTermsByMeter(r, ids, from, currency, now);
  const b = await usageTermsByMeter(r, ids, to, currency, now);
  return {
    changed: new Set([...a.keys(), ...b.keys()].filter((meter) => a.get(meter) !== b.get(meter))),
    newOnly: new Set([...b.keys()].filter((meter) => !a.has(meter))),
  };
}

const SAFE_AMOUNT = BigInt(Number.MAX_SAFE_INTEGER);

/**
 * The invoice lines of billed periods (what the payment port bills), quantities in the meter's
 * units and amounts as exact JSON numbers. A line of more than 2^53 - 1 minor units (units at most
 * 10^15 steps, prices at most 99,999,999,999: an uncapped meter can get there) cannot be billed
 * exactly: the close is refused naming the meter and the amount (the renewal sweep logs it and
 * passes the subscription over), never billed as another amount.
 */
export const usageInvoiceLines = (billed: BilledPeriod[]): UsageInvoiceLine[] =>
  billed.flatMap((b) =>
    b.lines.map((l) => {
      if (l.amount > SAFE_AMOUNT || l.amount < -SAFE_AMOUNT)
        throw new RangeError(
          `the usage of meter ${b.meterSlug} (subscription ${b.close.subscriptionId ?? b.close.owner}) bills ${l.amount} minor units on one line, more than an invoice line carries exactly (${SAFE_AMOUNT}): not billed`,
        );
      return {
        description: l.description,
        quantity: exactNumber(l.quantity, b.scale),
        unitAmount: l.unitAmount,
        amount: exactNumber(l.amount),
        periodStart: b.close.periodStart,
        periodEnd: b.close.periodEnd,
      };
    }),
  );
