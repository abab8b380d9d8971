import {
  available,
  closePeriod,
  decide,
  exactNumber,
  formatUnits,
  quantityOf,
  type Balance,
  type BalanceState,
  type CreditGrant,
} from '../src';
import { aBalance as balanceFixture } from '../src/testing';

const T = new Date('2026-03-01T00:00:00.000Z');
const aBalance = (over: Partial<Balance> = {}): Balance =>
  balanceFixture({ id: 'b', organisationId: 'o', meterId: 'm', periodStart: T, createdAt: T, updatedAt: T, ...over });
const aGrant = (amount: bigint, over: Partial<CreditGrant> = {}): CreditGrant => ({
  id: `g${amount}`,
  balanceId: 'b',
  amount,
  drawn: 0n,
  expired: 0n,
  priority: 50,
  expiresAt: null,
  source: 'plan',
  createdAt: T,
  ...over,
});
const state = (b: Balance, grants: CreditGrant[] = []): BalanceState => ({ balance: b, grants, holds: new Map() });

describe('usage rules', () => {
  it('reads quantities exactly and refuses what is not a whole number in range', () => {
    expect(quantityOf(7, 'q')).toBe(7n);
    expect(quantityOf('1000000000000', 'q')).toBe(10n ** 12n);
    for (const bad of [0, -1, 0.5, 1e13, '1.5', null, Number.MAX_SAFE_INTEGER + 2]) expect(() => quantityOf(bad, 'q')).toThrow(/q/);
  });

  it("reads decimal quantities in the meter's smallest step, from the digits, never through a binary fraction", () => {
    const errorOf = (f: () => unknown) => {
      try {
        f();
      } catch (e) {
        return e as { details: { property: string; error: string }[] };
      }
      throw new Error('accepted');
    };
    // Scale 3: 1.5 is 1500 steps; decimal strings too; trailing zeros and exponents are plain digits.
    expect(quantityOf(1.5, 'increment', 3)).toBe(1500n);
    expect(quantityOf('0.001', 'increment', 3)).toBe(1n);
    expect(quantityOf(2.25, 'increment', 3)).toBe(2250n);
    expect(quantityOf(1.1, 'increment', 1)).toBe(11n);
    expect(quantityOf(5e-6, 'increment', 6)).toBe(5n);
    expect(quantityOf(3, 'increment', 6)).toBe(3_000_000n);
    expect(quantityOf('7.000', 'increment', 0)).toBe(7n);
    // 0.1 + 0.2 is the double 0.30000000000000004: 17 significant digits, refused rather than rounded.
    expect(errorOf(() => quantityOf(0.1 + 0.2, 'increment', 6)).details).toEqual([
      { property: 'increment', error: 'must have at most 15 significant digits' },
    ]);
    expect(errorOf(() => quantityOf(1.0005, 'increment', 3)).details).toEqual([
      { property: 'increment', error: "must have at most 3 decimal places (the meter's scale)" },
    ]);
    expect(errorOf(() => quantityOf(1.5, 'countOptions.increment')).details).toEqual([
      { property: 'countOptions.increment', error: 'must be a whole number' },
    ]);
    for (const bad of [0, -0.5, 0.0001, 1e-7, 1e13, 'abc', '1e3', Infinity, NaN]) expect(() => quantityOf(bad, 'q', 3)).toThrow(/q/);
    // Shown back in units, exactly.
    expect(formatUnits(1500n, 3)).toBe('1.5');
    expect(formatUnits(1n, 6)).toBe('0.000001');
    expect(formatUnits(42n, 0)).toBe('42');
    expect(exactNumber(3751n, 3)).toBe(3.751);
    expect(exactNumber(999_999_999_999_999n, 6)).toBe(999_999_999.999999);
    expect(exactNumber('3.751')).toBe(3.751);
  });

  it('a cap limits consumption without grants; the tighter of grants and cap wins', () => {
    expect(available(aBalance({ cap: 10n, used: 4n }))).toBe(6n);
    expect(available(aBalance({ cap: 10n, limited: true, granted: 3n }))).toBe(3n);
    expect(available(aBalance())).toBeNull();
    const s = state(aBalance({ cap: 5n }));
    expect(decide(s, { kind: 'consume', quantity: 6n }, 'tokens', T).answer.allowed).toBe(false);
    expect(decide(s, { kind: 'record', quantity: 6n }, 'tokens', T).answer).toMatchObject({ allowed: true, used: '6', remaining: '0' });
  });

  it('closes a period: usage is final, counters return to zero through one ledger entry, rollover by the rule', () => {
    const grants = [aGrant(100n)];
    const s = state(aBalance({ limited: true, granted: 100n }), grants);
    decide(s, { kind: 'consume', quantity: 30n }, 'tokens', T);
    decide(s, { kind: 'reserve', quantity: 20n, holdId: 'h', expiresAt: new Date(T.getTime() + 1000) }, 'tokens', T);
    const all = closePeriod(structuredClone(s), { kind: 'all' }, T);
    expect(all).toMatchObject({ finalUsage: 30n, carried: 70n });
    expect(all.entries).toEqual([expect.objectContaining({ kind: 'close', grantedDelta: -100n, usedDelta: -30n, reservedDelta: -20n })]);
    expect(closePeriod(structuredClone(s), { kind: 'upTo', units: 25n }, T).carried).toBe(25n);
    const none = structuredClone(s);
    expect(closePeriod(none, { kind: 'none' }, T).carried).toBe(0n);
    expect(none.balance).toMatchObject({ granted: 0n, used: 0n, reserved: 0n, closedAt: T });
    expect(none.holds.get('h')?.status).toBe('released');
  });

  it("a close carrying on keeps what the period did not need of grants that are not the plan's, and the open holds", () => {
    const later = new Date(T.getTime() + 30 * 86_400_000);
    const grants = [
      aGrant(100n, { expiresAt: T }),
      aGrant(500n, { source: 'purchase', expiresAt: later }),
      aGrant(40n, { source: 'promotion', expiresAt: T }),
    ];
    const s = state(aBalance({ limited: true, granted: 640n }), grants);
    // Used within the period, before the plan's grant and the promotion expire with it at T.
    const before = new Date(T.getTime() - 1000);
    decide(s, { kind: 'consume', quantity: 50n }, 'tokens', before);
    decide(s, { kind: 'reserve', quantity: 20n, holdId: 'h', expiresAt: later }, 'tokens', before);
    const carry = { grants: true, holds: true };
    // 50 used, drawn from the plan's 100. The promotion expires now: it is not kept, and counts with
    // the plan's rest for the rollover (90). The purchase is kept whole, with its own terms.
    const plain = closePeriod(structuredClone(s), { kind: 'all' }, T, carry);
    expect(plain).toMatchObject({ finalUsage: 50n, carried: 90n });
    expect(plain.kept.map((g) => [g.amount, g.source, g.priority, g.expiresAt?.getTime()])).toEqual([
      [500n, 'purchase', 50, later.getTime()],
    ]);
    expect(plain.holds.map((h) => [h.id, h.status])).toEqual([['h', 'held']]);
    // A minimum of 300: the 50 used, the plan's rest and the promotion (90) count for 140 of it; the
    // other 160 come from the purchase, as billing counts it (max(50, 300) - 640 granted: 0 billed).
    expect(closePeriod(structuredClone(s), { kind: 'none' }, T, carry, 300n).kept.map((g) => g.amount)).toEqual([340n]);
    // The minimum counts as used for the rollover too: 300 leaves nothing of the plan's rest to
    // roll over, 100 leaves 40 (140 - 100); no unit both makes up the minimum and rolls over.
    expect(closePeriod(structuredClone(s), { kind: 'all' }, T, carry, 300n).carried).toBe(0n);
    expect(closePeriod(structuredClone(s), { kind: 'all' }, T, carry, 100n).carried).toBe(40n);
    // A minimum above everything granted takes the purchase whole (and billing bills the rest).
    expect(closePeriod(structuredClone(s), { kind: 'none' }, T, carry, 700n).kept).toEqual([]);
    // Without carrying (a subscription that ends), everything lapses and the hold is released.
    const ended = closePeriod(structuredClone(s), { kind: 'none' }, T);
    expect(ended).toMatchObject({ kept: [], holds: [] });
  });
});
