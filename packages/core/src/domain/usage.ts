import { ErrorCodes, fail, invalid } from '../errors';
import type { Balance, CreditGrant, Hold, Id, LedgerEntry, LedgerKind, Quantity, Rollover, UsageAnswer, UsageReport } from '../model';

/** The largest quantity one operation may carry. */
export const MAX_QUANTITY = 10n ** 12n;
/** The largest value a counter may reach: within 2^53, so every view may show it as a JSON number. */
export const MAX_COUNTER = 10n ** 15n;
/** The longest a hold may live. */
export const MAX_HOLD_SECONDS = 86_400;
export const METER_SLUG = /^[a-z0-9_]+$/;
/** Priority of a grant that names none (lower is drawn first). */
export const DEFAULT_GRANT_PRIORITY = 50;

const SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/** The most decimal places a meter's quantities may have. */
export const MAX_SCALE = 6;
/** The most significant digits a quantity from the edge may have (what a JSON number carries exactly). */
export const MAX_SIGNIFICANT_DIGITS = 15;

/**
 * A quantity (or its decimal string) as a JSON number, exactly: counters stay within MAX_COUNTER
 * (< 2^53), so this never rounds; a value past 2^53 - 1 throws instead of being shown rounded. With
 * `scale`, `q` counts the meter's smallest step and the number shown is q / 10^scale: at most 15
 * significant digits (counters < 10^15), which a JSON number holds exactly.
 */
export function exactNumber(q: bigint | string, scale = 0): number {
  // Decimal text (an answer already in a meter's units): at most 15 significant digits, exact as a number.
  if (typeof q === 'string' && q.includes('.')) return Number(q);
  const v = typeof q === 'bigint' ? q : BigInt(q);
  if (v > SAFE || v < -SAFE) throw new RangeError(`${v} cannot be shown exactly as a JSON number`);
  return scale ? Number(formatUnits(v, scale)) : Number(v);
}

/** A count of a meter's smallest step as its decimal text in units (`1500`, scale 3: `1.5`). */
export function formatUnits(q: bigint, scale = 0): string {
  if (!scale) return q.toString();
  const negative = q < 0n;
  const digits = (negative ? -q : q).toString().padStart(scale + 1, '0');
  const whole = digits.slice(0, digits.length - scale);
  const fraction = digits.slice(digits.length - scale).replace(/0+$/, '');
  return `${negative ? '-' : ''}${whole}${fraction ? `.${fraction}` : ''}`;
}

/**
 * The exact decimal digits of a quantity from the edge: a JSON number (already a double: read back
 * as the shortest decimal that names it, which is the text sent for any number of at most 15
 * significant digits) or a decimal string. `undefined` when it is neither.
 */
function decimalOf(value: unknown): { negative: boolean; whole: string; fraction: string } | undefined {
  let text: string;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) return undefined;
    text = String(value);
  } else if (typeof value === 'string' && /^-?[0-9]{1,20}(\.[0-9]{1,20})?$/.test(value)) text = value;
  else return undefined;
  const m = /^(-?)([0-9]+)(?:\.([0-9]+))?(?:e([+-][0-9]+))?$/.exec(text);
  if (!m) return undefined;
  let digits = m[2] + (m[3] ?? '');
  let point = m[2].length + Number(m[4] ?? 0);
  if (point < 0) {
    digits = '0'.repeat(-point) + digits;
    point = 0;
  }
  if (point > digits.length) digits += '0'.repeat(point - digits.length);
  return {
    negative: m[1] === '-',
    whole: digits.slice(0, point).replace(/^0+(?=.)/, '') || '0',
    fraction: digits.slice(point).replace(/0+$/, ''),
  };
}

/**
 * A quantity from the edge (a JSON number or a decimal string) in the meter's smallest step: at
 * most `scale` decimal places (0: a whole number) and 15 significant digits, greater than 0 and at
 * most MAX_QUANTITY steps, or a 400 naming `field`. Never goes through a binary fraction: the digits
 * are read and scaled as text.
 */
export function quantityOf(value: unknown, field: string, scale = 0): Quantity {
  return boundedQuantity(typeof value === 'bigint' ? value : stepsOf(value, field, scale), field, scale);
}

function stepsOf(value: unknown, field: string, scale: number): bigint {
  const d = decimalOf(value);
  if (!d) return invalid(field, scale ? 'must be a number' : 'must be a whole number');
  if (d.negative && (d.whole !== '0' || d.fraction)) invalid(field, 'must be greater than 0');
  const significant = (d.whole + d.fraction).replace(/^0+/, '').length;
  if (significant > MAX_SIGNIFICANT_DIGITS) invalid(field, `must have at most ${MAX_SIGNIFICANT_DIGITS} significant digits`);
  if (d.fraction.length > scale)
    invalid(field, scale ? `must have at most ${scale} decimal places (the meter's scale)` : 'must be a whole number');
  return BigInt(d.whole + d.fraction.padEnd(scale, '0'));
}

/**
 * A usage plan term in units (an allowance, cap, minimum, rollover or tier bound; a JSON number or
 * a decimal string) as a count of the meter's smallest step: 0 to MAX_QUANTITY steps with at most
 * `scale` decimal places, or a 400 naming `field`. Read from its decimal digits, as quantityOf reads.
 */
export function termSteps(value: unknown, field: string, scale: number): bigint {
  const range = `must be a number from 0 to ${formatUnits(MAX_QUANTITY, scale)}`;
  const d = decimalOf(value);
  if (!d || (d.negative && (d.whole !== '0' || d.fraction))) return invalid(field, range);
  if ((d.whole + d.fraction).replace(/^0+/, '').length > MAX_SIGNIFICANT_DIGITS)
    invalid(field, `must have at most ${MAX_SIGNIFICANT_DIGITS} significant digits`);
  if (d.fraction.length > scale) invalid(field, `must have at most ${scale} decimal places (the meter's scale)`);
  const q = BigInt(d.whole + d.fraction.padEnd(scale, '0'));
  return q > MAX_QUANTITY ? invalid(field, range) : q;
}

/**
 * Units (a number of at least 0, as a v1 plan feature's `maxUsage` holds them) as whole steps of a
 * meter of `scale`, places past the scale dropped (what `Math.floor` does on a whole-unit meter).
 */
export function stepsDown(units: number, scale: number): bigint {
  const d = decimalOf(units);
  if (!d || d.negative) return 0n;
  return BigInt(d.whole + d.fraction.slice(0, scale).padEnd(scale, '0'));
}

/**
 * The shape of a quantity checked before its meter (and so its scale) is known: a number or decimal
 * string above 0 with at most MAX_SCALE decimal places and 15 significant digits, or a 400 naming
 * `field`. The meter's own scale and the bound are checked once it is known (quantityOf).
 */
export function checkQuantityShape(value: unknown, field: string): void {
  if (typeof value !== 'bigint' && stepsOf(value, field, MAX_SCALE) <= 0n) invalid(field, 'must be greater than 0');
}

function boundedQuantity(q: bigint, field: string, scale: number): Quantity {
  if (q <= 0n) invalid(field, 'must be greater than 0');
  // The bound in the meter's units, as the caller gave the quantity (MAX_QUANTITY counts steps).
  if (q > MAX_QUANTITY) invalid(field, `must be at most ${formatUnits(MAX_QUANTITY, scale)}`);
  return q;
}

/** A balance with the grants and holds an operation may touch, changed in place as operations are decided. */
export interface BalanceState {
  balance: Balance;
  /** Grants with undrawn, unexpired units, in draw order once `sortGrants` ran. */
  grants: CreditGrant[];
  /** Holds the batch names or that are due to expire, by id. */
  holds: Map<Id, Hold>;
}

/** What one decided operation adds: ledger rows (without ids and keys) and the answer. */
export interface Decision {
  entries: Omit<LedgerEntry, 'id' | 'organisationId' | 'isTest' | 'balanceId' | 'owner' | 'meterId' | 'idempotencyKey' | 'createdAt'>[];
  answer: UsageAnswer;
}

/** A usage operation as the core decides it. */
export type UsageOp =
  | { kind: 'record'; quantity: Quantity }
  | { kind: 'consume'; quantity: Quantity }
  | { kind: 'reserve'; quantity: Quantity; holdId: Id; expiresAt: Date }
  | { kind: 'commit'; holdId: Id; quantity: Quantity }
  | { kind: 'release'; holdId: Id }
  | { kind: 'grant'; grant: CreditGrant };

const min = (a: bigint, b: bigint) => (a < b ? a : b);
const max = (a: bigint, b: bigint) => (a > b ? a : b);

/** Draw order: priority (lower first), expiry (sooner first, none last), then age. */
export const sortGrants = (grants: CreditGrant[]): CreditGrant[] =>
  grants.sort(
    (a, b) =>
      a.priority - b.priority ||
      (a.expiresAt?.getTime() ?? Infinity) - (b.expiresAt?.getTime() ?? Infinity) ||
      a.createdAt.getTime() - b.createdAt.getTime() ||
      (a.id < b.id ? -1 : 1),
  );

const undrawn = (g: CreditGrant) => g.amount - g.drawn - g.expired;

/** What may still be taken: null where neither grants nor a cap limit the balance. */
export function available(b: Balance): Quantity | null {
  const limits: bigint[] = [];
  if (b.limited) limits.push(b.granted - b.used - b.reserved);
  if (b.cap !== null) limits.push(b.cap - b.used - b.reserved);
  if (limits.length === 0) return null;
  return max(0n, limits.reduce(min));
}

/** The answer describing a balance (after an operation). */
export function answerOf(b: Balance, meterSlug: string, allowed: boolean): UsageAnswer {
  const left = available(b);
  return {
    allowed,
    owner: b.owner,
    meterSlug,
    granted: String(b.granted),
    used: String(b.used),
    reserved: String(b.reserved),
    remaining: left === null ? null : String(left),
    periodEnd: b.periodEnd ? b.periodEnd.toISOString() : null,
  };
}

/**
 * Whether a write of the balance that used `quantity` units in `operations` operations reports its
 * usage now (a `usage.recorded` event), and the balance's reporting state after it (mutated).
 *
 * A balance reports at most once per `windowMs`: usage of a balance that reported less than a window
 * ago waits in `unreported` until the window has passed, and is reported by the first write after
 * that, or by the usage sweep (`reportDueAt`) if none comes. So a balance used now and then reports
 * each use at once, a busy one about once a window, and every unit is told by exactly one event.
 * A closed balance reports what waits at once (before its `usage.finalised`). `windowMs` 0: every
 * write that used units reports.
 */
export function reportUsage(b: Balance, quantity: Quantity, operations: number, now: Date, windowMs: number): UsageReport | null {
  const waiting = { quantity: b.unreported + quantity, operations: b.unreportedOps + operations };
  if (waiting.operations === 0) return null;
  const due =
    windowMs <= 0 ||
    b.closedAt !== null ||
    (b.reportDueAt === null ? b.reportedAt === null || now.getTime() - b.reportedAt.getTime() >= windowMs : now >= b.reportDueAt);
  if (due) {
    b.unreported = 0n;
    b.unreportedOps = 0;
    b.reportDueAt = null;
    b.reportedAt = now;
    return waiting;
  }
  b.unreported = waiting.quantity;
  b.unreportedOps = waiting.operations;
  b.reportDueAt ??= new Date((b.reportedAt as Date).getTime() + windowMs);
  return null;
}

/** Whether usage waiting on the balance is due to be reported (the usage sweep writes such balances). */
export const reportDue = (b: Balance, now: Date): boolean => b.reportDueAt !== null && now >= b.reportDueAt;

const counterGuard = (value: bigint, field: string) => {
  if (value > MAX_COUNTER)
    fail(ErrorCodes.VALIDATION_FAILED, `${field}: the balance would exceed ${MAX_COUNTER}`, [
      { property: field, error: `the balance would exceed ${MAX_COUNTER}` },
    ]);
};

/**
 * Whether the grant's expiry has come for it: any grant past its own expiry, except a plan grant
 * that ends with the period (its allowance, what rolled in), which stays usable, as the period
 * does, until the period close settles it (rollover or lapse).
 */
const pastExpiry = (s: BalanceState, g: CreditGrant, now: Date): boolean =>
  g.expiresAt !== null && g.expiresAt <= now && !(g.source === 'plan' && s.balance.periodEnd && g.expiresAt >= s.balance.periodEnd);

/**
 * Takes `q` units from the grants (what no grant covers is overage), in draw order. Credit past its
 * expiry is kept only for open holds (`lapseExpired`): a commit (`held`) draws it first, the credit
 * its hold kept; usage of any other kind never draws it.
 */
function draw(s: BalanceState, q: Quantity, now: Date, held = false): void {
  let left = q;
  for (const expired of held ? [true, false] : [false])
    for (const g of s.grants) {
      if (left === 0n) return;
      if (pastExpiry(s, g, now) !== expired) continue;
      const take = min(undrawn(g), left);
      g.drawn += take;
      left -= take;
    }
}

/**
 * Settles the grants past their expiry: open holds keep what they can of such credit (a hold is a
 * promise: at most the balance's `reserved` in all, the first such grants in draw order first),
 * and the rest lapses. So expired credit outlives its expiry only for holds, and lapses as soon as
 * they settle (a release, an expired hold or a commit of less than held calls this again); a new
 * grant never makes kept credit lapse. `coverUsage` (the pass before a batch decides, where a grant
 * meets its expiry): what usage already took of the rest (usage recorded before the grant, which
 * its credit covered) is counted drawn, and only what is free lapses. After a hold settles the rest
 * lapses whole: usage since the expiry never takes it. `keep`: what holds may keep (a close: none).
 */
function lapseExpired(s: BalanceState, now: Date, coverUsage: boolean, keep = s.balance.reserved): Decision['entries'] {
  const out: Decision['entries'] = [];
  for (const g of s.grants) {
    const left = undrawn(g);
    if (!pastExpiry(s, g, now) || left === 0n) continue;
    const kept = min(left, keep);
    keep -= kept;
    const rest = left - kept;
    if (rest === 0n) continue;
    const lapse = coverUsage ? min(rest, max(0n, s.balance.granted - s.balance.used - s.balance.reserved)) : rest;
    g.drawn += rest - lapse;
    if (lapse === 0n) continue;
    g.expired += lapse;
    s.balance.granted -= lapse;
    out.push(entry('expire', lapse, { granted: -lapse }, { grantId: g.id }));
  }
  return out;
}

/**
 * At a period's close: lapses all that grants past their expiry still keep for open holds. The
 * holds end with the period (released, or carried into the next, which reserves its own credit),
 * so those units are never billed against, rolled over nor kept.
 */
export function lapseHeldExpired(s: BalanceState, now: Date): Decision['entries'] {
  const out = lapseExpired(s, now, false, 0n);
  if (out.length) s.balance.updatedAt = now;
  return out;
}

/** Returns holds due at `now` and lapses grants due at `now` (what waited for the clock). */
export function expireDue(s: BalanceState, now: Date): Decision['entries'] {
  // Grants meeting their expiry (any but the period's own: a close hands on what outlives the
  // period), while the holds due now still keep what they kept; then what those holds kept lapses.
  const out: Decision['entries'] = lapseExpired(s, now, true);
  let settled = false;
  for (const h of s.holds.values()) {
    if (h.status !== 'held' || h.expiresAt > now) continue;
    h.status = 'expired';
    h.settledAt = now;
    s.balance.reserved -= h.quantity;
    settled = true;
    out.push({
      kind: 'expire',
      quantity: h.quantity,
      grantedDelta: 0n,
      usedDelta: 0n,
      reservedDelta: -h.quantity,
      holdId: h.id,
      grantId: null,
    });
  }
  if (settled) out.push(...lapseExpired(s, now, false));
  s.grants = s.grants.filter((g) => undrawn(g) > 0n);
  if (out.length) s.balance.updatedAt = now;
  return out;
}

const entry = (
  kind: LedgerKind,
  quantity: Quantity,
  d: { granted?: bigint; used?: bigint; reserved?: bigint },
  ids: { holdId?: Id; grantId?: Id } = {},
) => ({
  kind,
  quantity,
  grantedDelta: d.granted ?? 0n,
  usedDelta: d.used ?? 0n,
  reservedDelta: d.reserved ?? 0n,
  holdId: ids.holdId ?? null,
  grantId: ids.grantId ?? null,
});

/**
 * Decides one operation over the state (changing it when allowed). A denial is an answer with
 * nothing written; input that cannot apply (a settled hold, a commit above its hold, a counter
 * overflow) throws a domain error and changes nothing.
 */
export function decide(s: BalanceState, op: UsageOp, meterSlug: string, now: Date): Decision {
  const b = s.balance;
  const done = (entries: Decision['entries'], allowed = true, extra: Partial<UsageAnswer> = {}): Decision => {
    if (entries.length) b.updatedAt = now;
    return { entries, answer: { ...answerOf(b, meterSlug, allowed), ...extra } };
  };
  switch (op.kind) {
    case 'record': {
      // Usage that happened is counted even over the cap: it is billed as overage.
      counterGuard(b.used + op.quantity, 'quantity');
      draw(s, op.quantity, now);
      b.used += op.quantity;
      return done([entry('record', op.quantity, { used: op.quantity })]);
    }
    case 'consume': {
      const left = available(b);
      if (left !== null && op.quantity > left) return done([], false);
      counterGuard(b.used + op.quantity, 'quantity');
      draw(s, op.quantity, now);
      b.used += op.quantity;
      return done([entry('consume', op.quantity, { used: op.quantity })]);
    }
    case 'reserve': {
      const left = available(b);
      if (left !== null && op.quantity > left) return done([], false);
      counterGuard(b.used + b.reserved + op.quantity, 'quantity');
      b.reserved += op.quantity;
      const hold: Hold = {
        id: op.holdId,
        balanceId: b.id,
        organisationId: b.organisationId,
        isTest: b.isTest,
        quantity: op.quantity,
        status: 'held',
        committed: null,
        expiresAt: op.expiresAt,
        createdAt: now,
        settledAt: null,
      };
      s.holds.set(hold.id, hold);
      return done([entry('reserve', op.quantity, { reserved: op.quantity }, { holdId: hold.id })], true, {
        holdId: hold.id,
        holdExpiresAt: hold.expiresAt.toISOString(),
      });
    }
    case 'commit': {
      const h = settleable(s, op.holdId);
      if (op.quantity > h.quantity) invalid('quantity', `must be at most the held ${h.quantity}`);
      h.status = 'committed';
      h.committed = op.quantity;
      h.settledAt = now;
      b.reserved -= h.quantity;
      draw(s, op.quantity, now, true);
      b.used += op.quantity;
      return done(
        [entry('commit', op.quantity, { used: op.quantity, reserved: -h.quantity }, { holdId: h.id }), ...lapseExpired(s, now, false)],
        true,
        {
          holdId: h.id,
        },
      );
    }
    case 'release': {
      const h = settleable(s, op.holdId);
      h.status = 'released';
      h.settledAt = now;
      b.reserved -= h.quantity;
      return done([entry('release', h.quantity, { reserved: -h.quantity }, { holdId: h.id }), ...lapseExpired(s, now, false)], true, {
        holdId: h.id,
      });
    }
    case 'grant': {
      counterGuard(b.granted + op.grant.amount, 'amount');
      b.granted += op.grant.amount;
      b.limited = true;
      // A copy: the operation may be decided again (a batch retried), and draws change the grant.
      s.grants.push({ ...op.grant, balanceId: b.id });
      sortGrants(s.grants);
      return done([entry('grant', op.grant.amount, { granted: op.grant.amount }, { grantId: op.grant.id })], true, {
        grantId: op.grant.id,
      });
    }
  }
}

function settleable(s: BalanceState, holdId: Id): Hold {
  const h = s.holds.get(holdId);
  if (!h) return fail(ErrorCodes.HOLD_NOT_FOUND, 'the reservation does not exist');
  if (h.status !== 'held') fail(ErrorCodes.HOLD_SETTLED, `the reservation is already ${h.status}`);
  return h;
}

/** A grant's undrawn units that outlive a closed period: carried into the next as a grant of their own. */
export type KeptGrant = Pick<CreditGrant, 'amount' | 'priority' | 'expiresAt' | 'source'>;

/** What the next period takes over from a closed one (DESIGN section 14; docs/usage.md, "Period close"). */
export interface PeriodCarry {
  /** Keep grants that are not the plan's and have not expired (purchased, promotion, adjustment) with their own terms. */
  grants: boolean;
  /** Keep open holds (same holder only: a commit of one then lands in the next period). */
  holds: boolean;
}

/**
 * Closes a period: the final usage is what was used. Plan grants (the allowance and what rolled
 * in, source `plan`) and grants that expired roll over by the rule, the rest lapses. Grants of
 * another source that have not expired lapse too unless `carry.grants`: then what the period did
 * not need of them is kept, each with its own priority, expiry and source. What the period needed
 * is what it used, or its `minUsage` when more, beyond the units already drawn and the plan
 * grants' rest (as billing counts it: `max(used, minUsage) - granted` stays what it was); what
 * rolls over is what is left beyond that count too (`minUsage` counts as used). Open
 * holds are released unless `carry.holds`: then they stay held and are returned, for the next
 * period to reserve. The closed balance's counters return to zero through the ledger, so the sums
 * still match.
 */
export function closePeriod(
  s: BalanceState,
  rollover: Rollover,
  now: Date,
  carry: PeriodCarry = { grants: false, holds: false },
  minUsage = 0n,
): { entries: Decision['entries']; finalUsage: Quantity; carried: Quantity; kept: KeptGrant[]; holds: Hold[] } {
  const b = s.balance;
  const out: Decision['entries'] = [];
  const holds: Hold[] = [];
  for (const h of s.holds.values()) {
    if (h.status !== 'held') continue;
    if (carry.holds) {
      holds.push(h);
      continue;
    }
    h.status = 'released';
    h.settledAt = now;
  }
  const outlives = (g: CreditGrant) => carry.grants && g.source !== 'plan' && (g.expiresAt === null || g.expiresAt > now);
  const keptGrants = s.grants.filter((g) => outlives(g) && undrawn(g) > 0n);
  const keptUndrawn = keptGrants.reduce((n, g) => n + undrawn(g), 0n);
  // What the period still needs beyond everything else granted is taken from the kept grants, in draw order.
  let needed = min(keptUndrawn, max(0n, max(b.used, minUsage) - (b.granted - keptUndrawn)));
  const kept: KeptGrant[] = [];
  for (const g of keptGrants) {
    const take = min(undrawn(g), needed);
    needed -= take;
    const left = undrawn(g) - take;
    if (left > 0n) kept.push({ amount: left, priority: g.priority, expiresAt: g.expiresAt, source: g.source });
  }
  // What rolls over is what the period did not count: the minimum counts as used (billing took
  // it so), so a unit of the plan's grants never both makes up an unreached minimum and rolls over.
  const unused = max(0n, b.granted - keptUndrawn - max(b.used, minUsage));
  const carried = rollover.kind === 'none' ? 0n : rollover.kind === 'all' ? unused : min(unused, rollover.units);
  for (const g of s.grants) g.expired += undrawn(g);
  s.grants = [];
  out.push(entry('close', b.used, { granted: -b.granted, used: -b.used, reserved: -b.reserved }));
  const finalUsage = b.used;
  b.granted = 0n;
  b.used = 0n;
  b.reserved = 0n;
  b.closedAt = now;
  b.updatedAt = now;
  return { entries: out, finalUsage, carried, kept, holds };
}
