import { available, closePeriod, decide, quantityOf, type Balance, type BalanceState, type CreditGrant } from '../src';

const T = new Date('2026-03-01T00:00:00.000Z');
const aBalance = (over: Partial<Balance> = {}): Balance => ({
  id: 'b',
  organisationId: 'o',
  isTest: false,
  owner: 'acme',
  meterId: 'm',
  periodStart: T,
  periodEnd: null,
  granted: 0n,
  used: 0n,
  reserved: 0n,
  cap: null,
  limited: false,
  closedAt: null,
  createdAt: T,
  updatedAt: T,
  ...over,
});
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
});
