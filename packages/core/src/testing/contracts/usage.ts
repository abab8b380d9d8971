/* The usage contract (DESIGN section 14): meters, grants, record / consume / reserve -> commit |
   release, idempotency keys and the ledger, through the use case over a unit of work, so the group
   commit and the repository are proven together. Run on the in-memory database, PGlite and a
   PostgreSQL server. After every scenario the counters equal the ledger's sums. */
import { randomUUID } from 'node:crypto';
import type { MeterSend, Tenant, UnitOfWork, UsageAnswer } from '../..';
import { UsageService } from '../../usecases/usage';
import { openPeriod } from '../../usecases/usage/periods';
import { OutboxUnitOfWork } from '../../usecases/webhooks/outbox';
import { FixedClock, RandomIds } from '../fakes';
import { anOrganisation, aTenant } from '../fixtures';

export interface UsageWorld {
  usage: UsageService;
  clock: FixedClock;
  uow: UnitOfWork;
  tenant: Tenant;
}

/** A fresh organisation and a usage service over the unit of work (its own clock). */
export async function usageWorld(uow: UnitOfWork, clock = new FixedClock(new Date())): Promise<UsageWorld> {
  const org = anOrganisation();
  await uow.run((r) => r.organisations.save(org));
  return { usage: new UsageService({ uow, clock, ids: new RandomIds() }), clock, uow, tenant: aTenant(org) };
}

/** The counters of every balance of the tenant's owner equal their ledger's sums. */
export async function expectLedgerMatches(w: UsageWorld, owner: string): Promise<void> {
  const balances = await w.uow.read((r) => r.usage.openBalances(w.tenant, owner));
  for (const b of balances) {
    const entries = await w.uow.read((r) => r.usage.ledgerOf(b.id));
    const sum = (f: 'grantedDelta' | 'usedDelta' | 'reservedDelta') => entries.reduce((s, e) => s + e[f], 0n);
    expect({ granted: b.granted, used: b.used, reserved: b.reserved }).toEqual({
      granted: sum('grantedDelta'),
      used: sum('usedDelta'),
      reserved: sum('reservedDelta'),
    });
  }
  const ids = new Set(balances.map((b) => b.id));
  expect((await w.usage.verify(10_000)).filter((m) => ids.has(m.balanceId))).toEqual([]);
}

const errorOf = async (p: Promise<unknown>) => {
  try {
    await p;
  } catch (e) {
    return e as { code: string; details: { property: string }[] };
  }
  throw new Error('expected a failure');
};

export function describeUsageRepositoryContract(name: string, uow: () => UnitOfWork): void {
  describe(`${name}: usage, meters and credits`, () => {
    let w: UsageWorld;
    beforeEach(async () => {
      w = await usageWorld(uow());
      await w.usage.createMeter(w.tenant, { slug: 'tokens', name: 'Tokens', unitLabel: 'token' });
    });

    it('keeps meters per tenant: a taken slug is refused, lists page', async () => {
      expect((await errorOf(w.usage.createMeter(w.tenant, { slug: 'tokens', name: 'again' }))).code).toBe('METER_EXISTS');
      expect((await errorOf(w.usage.createMeter(w.tenant, { slug: 'Bad-Slug', name: 'x' }))).details[0].property).toBe('slug');
      await w.usage.createMeter({ ...w.tenant, isTest: true }, { slug: 'tokens', name: 'Test tokens' });
      w.clock.set(new Date(w.clock.now().getTime() + 1));
      await w.usage.createMeter(w.tenant, { slug: 'calls', name: 'Calls' });
      const page = await w.usage.pageMeters(w.tenant, { limit: 1 });
      expect(page.items.map((m) => m.slug)).toEqual(['tokens']);
      expect(page.items[0]).toMatchObject({ unitLabel: 'token', organisationId: w.tenant.organisationId, isTest: false });
      expect((await w.usage.pageMeters(w.tenant, { limit: 5, after: page.nextCursor as string })).items.map((m) => m.slug)).toEqual([
        'calls',
      ]);
    });

    it('200 concurrent consumers of 7 against a grant of 1000: exactly 142 allowed, 58 denied, 6 left', async () => {
      await w.usage.grant(w.tenant, { owner: 'acme', meterSlug: 'tokens', amount: 1000 });
      const answers = await Promise.all(
        Array.from({ length: 200 }, () => w.usage.consume(w.tenant, { owner: 'acme', meterSlug: 'tokens', quantity: 7 })),
      );
      expect(answers.filter((a) => a.allowed)).toHaveLength(142);
      expect(answers.filter((a) => !a.allowed)).toHaveLength(58);
      const [b] = await w.usage.balances(w.tenant, 'acme', 'tokens');
      expect(b.balance).toMatchObject({ granted: 1000n, used: 994n, reserved: 0n });
      expect(answers.filter((a) => !a.allowed).every((a) => a.remaining === '6')).toBe(true);
      await expectLedgerMatches(w, 'acme');
    });

    it('an idempotency key counts once and replays its first answer; with another body it is refused', async () => {
      const first = await w.usage.record(w.tenant, { owner: 'acme', meterSlug: 'tokens', quantity: 5 }, 'k1');
      const racing = await Promise.all(
        Array.from({ length: 5 }, () => w.usage.record(w.tenant, { owner: 'acme', meterSlug: 'tokens', quantity: 5 }, 'k1')),
      );
      expect(racing).toEqual(Array(5).fill(first));
      await w.usage.record(w.tenant, { owner: 'acme', meterSlug: 'tokens', quantity: 1 }, 'k2');
      expect((await errorOf(w.usage.record(w.tenant, { owner: 'acme', meterSlug: 'tokens', quantity: 6 }, 'k1'))).code).toBe(
        'IDEMPOTENCY_KEY_REUSED',
      );
      expect((await errorOf(w.usage.consume(w.tenant, { owner: 'other', meterSlug: 'tokens', quantity: 5 }, 'k1'))).code).toBe(
        'IDEMPOTENCY_KEY_REUSED',
      );
      // The same request with its fields in another order (a retry that serialised it anew) replays.
      await w.usage.grant(w.tenant, { owner: 'acme', meterSlug: 'tokens', amount: 100 });
      const consumed = await w.usage.consume(w.tenant, { owner: 'acme', meterSlug: 'tokens', quantity: 2 }, 'k3');
      expect(await w.usage.consume(w.tenant, { quantity: 2, meterSlug: 'tokens', owner: 'acme' }, 'k3')).toEqual(consumed);
      const held = await w.usage.reserve(w.tenant, { owner: 'acme', meterSlug: 'tokens', quantity: 3, ttlSeconds: 60 }, 'k4');
      expect(await w.usage.reserve(w.tenant, { ttlSeconds: 60, quantity: 3, owner: 'acme', meterSlug: 'tokens' }, 'k4')).toEqual(held);
      const [b] = await w.usage.balances(w.tenant, 'acme');
      expect(b.balance).toMatchObject({ used: 8n, reserved: 3n });
      // Keys are per mode: the same key in test mode is another key.
      await w.usage.createMeter({ ...w.tenant, isTest: true }, { slug: 'tokens', name: 'T' });
      expect((await w.usage.record({ ...w.tenant, isTest: true }, { owner: 'acme', meterSlug: 'tokens', quantity: 9 }, 'k1')).used).toBe(
        '9',
      );
      await expectLedgerMatches(w, 'acme');
    });

    it('records over the grant (overage), denies a consume beyond what remains, and shows no remaining without limits', async () => {
      const free = await w.usage.consume(w.tenant, { owner: 'meter-only', meterSlug: 'tokens', quantity: 10 ** 9 });
      expect(free).toMatchObject({ allowed: true, remaining: null, used: '1000000000', granted: '0' });
      await w.usage.grant(w.tenant, { owner: 'acme', meterSlug: 'tokens', amount: '10' });
      expect(await w.usage.record(w.tenant, { owner: 'acme', meterSlug: 'tokens', quantity: 12 })).toMatchObject({
        allowed: true,
        used: '12',
        remaining: '0',
      });
      const denied = await w.usage.consume(w.tenant, { owner: 'acme', meterSlug: 'tokens', quantity: 1 });
      expect(denied).toMatchObject({ allowed: false, used: '12', remaining: '0' });
      await expectLedgerMatches(w, 'acme');
      await expectLedgerMatches(w, 'meter-only');
    });

    it('a hold blocks what it holds, commit returns the rest, release returns it all, and an expired hold returns by itself', async () => {
      await w.usage.grant(w.tenant, { owner: 'acme', meterSlug: 'tokens', amount: 100 });
      const hold = await w.usage.reserve(w.tenant, { owner: 'acme', meterSlug: 'tokens', quantity: 80, ttlSeconds: 60 });
      expect(hold).toMatchObject({ allowed: true, reserved: '80', remaining: '20' });
      expect((await w.usage.consume(w.tenant, { owner: 'acme', meterSlug: 'tokens', quantity: 21 })).allowed).toBe(false);
      expect((await w.usage.reserve(w.tenant, { owner: 'acme', meterSlug: 'tokens', quantity: 21, ttlSeconds: 60 })).allowed).toBe(false);
      expect((await errorOf(w.usage.commit(w.tenant, hold.holdId as string, { quantity: 81 }))).details[0].property).toBe('quantity');
      expect(await w.usage.commit(w.tenant, hold.holdId as string, { quantity: 30 })).toMatchObject({
        used: '30',
        reserved: '0',
        remaining: '70',
      });
      expect((await errorOf(w.usage.release(w.tenant, hold.holdId as string))).code).toBe('HOLD_SETTLED');
      expect((await errorOf(w.usage.release({ ...w.tenant, isTest: true }, hold.holdId as string))).code).toBe('NOT_FOUND');
      const second = await w.usage.reserve(w.tenant, { owner: 'acme', meterSlug: 'tokens', quantity: 50, ttlSeconds: 60 });
      expect(await w.usage.release(w.tenant, second.holdId as string)).toMatchObject({ reserved: '0', remaining: '70' });
      const third = await w.usage.reserve(w.tenant, { owner: 'acme', meterSlug: 'tokens', quantity: 70, ttlSeconds: 5 });
      expect(third.remaining).toBe('0');
      w.clock.set(new Date(w.clock.now().getTime() + 6000));
      // The sweep returns it even when nothing else touches the balance.
      await w.usage.sweep();
      const [b] = await w.usage.balances(w.tenant, 'acme');
      expect(b.balance).toMatchObject({ used: 30n, reserved: 0n, granted: 100n });
      expect((await errorOf(w.usage.commit(w.tenant, third.holdId as string, { quantity: 1 }))).code).toBe('HOLD_SETTLED');
      await expectLedgerMatches(w, 'acme');
    });

    it('an expired hold also returns lazily, on the next operation of its balance', async () => {
      await w.usage.grant(w.tenant, { owner: 'acme', meterSlug: 'tokens', amount: 10 });
      await w.usage.reserve(w.tenant, { owner: 'acme', meterSlug: 'tokens', quantity: 10, ttlSeconds: 1 });
      w.clock.set(new Date(w.clock.now().getTime() + 2000));
      expect(await w.usage.consume(w.tenant, { owner: 'acme', meterSlug: 'tokens', quantity: 10 })).toMatchObject({
        allowed: true,
        remaining: '0',
      });
      await expectLedgerMatches(w, 'acme');
    });

    it('draws grants by priority then expiry; an expiring grant lapses only what it still had', async () => {
      const soon = new Date(w.clock.now().getTime() + 60_000);
      await w.usage.grant(w.tenant, { owner: 'acme', meterSlug: 'tokens', amount: 10, priority: 50 });
      await w.usage.grant(w.tenant, { owner: 'acme', meterSlug: 'tokens', amount: 10, priority: 10, expiresAt: soon, source: 'promotion' });
      await w.usage.consume(w.tenant, { owner: 'acme', meterSlug: 'tokens', quantity: 4 });
      w.clock.set(new Date(soon.getTime() + 1));
      // The promotion (priority 10) was drawn first: 6 of it lapse, the other 10 remain.
      expect(await w.usage.consume(w.tenant, { owner: 'acme', meterSlug: 'tokens', quantity: 1 })).toMatchObject({
        granted: '14',
        used: '5',
        remaining: '9',
      });
      await expectLedgerMatches(w, 'acme');
    });

    it('credit that expired while a hold kept it lapses when the hold ends: released, expired, or committed in part', async () => {
      const t = { owner: 'acme', meterSlug: 'tokens' };
      const start = w.clock.now().getTime();
      const soon = new Date(start + 60_000);
      await w.usage.grant(w.tenant, { ...t, amount: 100, expiresAt: soon, source: 'promotion' });
      const hold = await w.usage.reserve(w.tenant, { ...t, quantity: 100, ttlSeconds: 86_400 });
      w.clock.set(new Date(soon.getTime() + 1));
      // Expired, but the hold keeps its 100 until it settles.
      expect((await w.usage.consume(w.tenant, { ...t, quantity: 1 })).allowed).toBe(false);
      // Released: the 100 were the promotion's, past its expiry: they lapse, none may be spent.
      expect(await w.usage.release(w.tenant, hold.holdId as string)).toMatchObject({ granted: '0', reserved: '0', remaining: '0' });
      expect((await w.usage.consume(w.tenant, { ...t, quantity: 100 })).allowed).toBe(false);
      await expectLedgerMatches(w, 'acme');

      // A hold that expires by itself after its credit: the sweep lapses the credit with it.
      const other = { owner: 'beta', meterSlug: 'tokens' };
      await w.usage.grant(w.tenant, { ...other, amount: 50, expiresAt: new Date(w.clock.now().getTime() + 60_000) });
      await w.usage.reserve(w.tenant, { ...other, quantity: 50, ttlSeconds: 120 });
      w.clock.set(new Date(w.clock.now().getTime() + 121_000));
      await w.usage.sweep();
      expect((await w.usage.balances(w.tenant, 'beta'))[0].balance).toMatchObject({ granted: 0n, reserved: 0n, used: 0n });
      await expectLedgerMatches(w, 'beta');
    });

    it('a hold keeps credit past its expiry for itself alone: other usage and new grants never spend it; its commit draws it first, the rest lapses', async () => {
      const t = { owner: 'acme', meterSlug: 'tokens' };
      const soon = new Date(w.clock.now().getTime() + 60_000);
      // Live credit drawn first by priority (0); the promotion (50) expires soon.
      await w.usage.grant(w.tenant, { ...t, amount: 50, priority: 0, source: 'purchase' });
      await w.usage.grant(w.tenant, { ...t, amount: 100, priority: 50, expiresAt: soon, source: 'promotion' });
      const hold = await w.usage.reserve(w.tenant, { ...t, quantity: 100, ttlSeconds: 86_400 });
      w.clock.set(new Date(soon.getTime() + 1));
      // The hold keeps the expired promotion's 100; the purchase's 50 stay free. A grant made now adds to them.
      expect(await w.usage.grant(w.tenant, { ...t, amount: 40, source: 'purchase' })).toMatchObject({ granted: '190', remaining: '90' });
      expect((await w.usage.consume(w.tenant, { ...t, quantity: 91 })).allowed).toBe(false);
      expect(await w.usage.consume(w.tenant, { ...t, quantity: 90 })).toMatchObject({ allowed: true, remaining: '0' });
      // Over everything live: overage, never the credit the hold keeps.
      await w.usage.record(w.tenant, { ...t, quantity: 5 });
      // 30 committed from the promotion's kept credit; its other 70 lapse.
      expect(await w.usage.commit(w.tenant, hold.holdId as string, { quantity: 30 })).toMatchObject({
        used: '125',
        reserved: '0',
        granted: '120',
        remaining: '0',
      });
      const [b] = await w.usage.balances(w.tenant, 'acme');
      const grants = await w.uow.run(async (r) => (await r.usage.lockBalance(b.balance, [], w.clock.now())).grants);
      // Every live grant spent: none has units left.
      expect(grants).toEqual([]);
      await expectLedgerMatches(w, 'acme');
    });

    it('credit that expires after covering earlier overage lapses only what usage did not take, once: a later grant is whole, nothing billed', async () => {
      const t = { owner: 'acme', meterSlug: 'tokens' };
      const now = w.clock.now().getTime();
      const hour = 3_600_000;
      await w.usage.closePeriod(w.tenant, t, { periodEnd: new Date(now + 30 * 24 * hour), allowance: 0n });
      // 20 recorded before any credit (overage), then a promotion of 50 that covers them.
      await w.usage.record(w.tenant, { ...t, quantity: 20 });
      expect(await w.usage.grant(w.tenant, { ...t, amount: 50, expiresAt: new Date(now + hour), source: 'promotion' })).toMatchObject({
        remaining: '30',
      });
      w.clock.set(new Date(now + 2 * hour));
      // 30 lapse at expiry; 20 covered the overage.
      expect(await w.usage.consume(w.tenant, { ...t, quantity: 1 })).toMatchObject({ allowed: false, granted: '20', used: '20' });
      expect(await w.usage.grant(w.tenant, { ...t, amount: 100, source: 'purchase' })).toMatchObject({ remaining: '100' });
      expect(await w.usage.consume(w.tenant, { ...t, quantity: 1 })).toMatchObject({ allowed: true, remaining: '99' });
      await expectLedgerMatches(w, 'acme');
      const closed = await w.usage.closePeriod(w.tenant, t, { periodEnd: new Date(now + 60 * 24 * hour), allowance: 0n });
      expect(closed.finalUsage).toBe(21n);
      const closes = await w.uow.read((r) => r.usage.pageCloses(w.tenant, { limit: 10, owner: 'acme' }));
      expect(closes.items.map((c) => [c.finalUsage, c.billedUnits])).toEqual([
        [0n, 0n],
        [21n, 0n],
      ]);
      // The purchase's 99 left go on.
      expect((await w.usage.balances(w.tenant, 'acme'))[0].balance).toMatchObject({ granted: 99n, used: 0n });
    });

    it('the sweep lapses credit at its expiry though nothing else touches the balance; credit a hold keeps waits for it, swept once', async () => {
      const t = { owner: 'acme', meterSlug: 'tokens' };
      const start = w.clock.now().getTime();
      await w.usage.grant(w.tenant, { ...t, amount: 30, expiresAt: new Date(start + 60_000), source: 'promotion' });
      await w.usage.grant(w.tenant, { ...t, amount: 10, source: 'purchase' });
      const kept = { owner: 'beta', meterSlug: 'tokens' };
      await w.usage.grant(w.tenant, { ...kept, amount: 20, expiresAt: new Date(start + 60_000), source: 'promotion' });
      await w.usage.reserve(w.tenant, { ...kept, quantity: 20, ttlSeconds: 3600 });
      expect(await w.usage.sweep()).toBe(0);
      w.clock.set(new Date(start + 61_000));
      // acme's promotion lapses; beta's is kept by its hold: nothing to lapse there yet.
      expect(await w.usage.sweep()).toBe(1);
      expect((await w.usage.balances(w.tenant, 'acme'))[0].balance).toMatchObject({ granted: 10n, used: 0n });
      expect((await w.usage.balances(w.tenant, 'beta'))[0].balance).toMatchObject({ granted: 20n, reserved: 20n });
      expect(await w.usage.sweep()).toBe(0);
      // The hold expires: the credit it kept lapses with it.
      w.clock.set(new Date(start + 3_700_000));
      expect(await w.usage.sweep()).toBe(1);
      expect((await w.usage.balances(w.tenant, 'beta'))[0].balance).toMatchObject({ granted: 0n, reserved: 0n });
      expect(await w.usage.sweep()).toBe(0);
      await expectLedgerMatches(w, 'acme');
      await expectLedgerMatches(w, 'beta');
    });

    it('the sweep takes each balance with expired credit once: credit that covered earlier usage, and what several expired grants hold beyond their holds', async () => {
      const start = w.clock.now().getTime();
      const soon = new Date(start + 60_000);
      // 20 used before the grant of 20: at its expiry nothing lapses, the grant counts drawn.
      const covered = { owner: 'covered', meterSlug: 'tokens' };
      await w.usage.record(w.tenant, { ...covered, quantity: 20 });
      await w.usage.grant(w.tenant, { ...covered, amount: 20, expiresAt: soon, source: 'promotion' });
      // Two expired grants of 20 and a hold of 30: 10 of theirs lapse.
      const shared = { owner: 'shared', meterSlug: 'tokens' };
      await w.usage.grant(w.tenant, { ...shared, amount: 20, expiresAt: soon, source: 'promotion' });
      await w.usage.grant(w.tenant, { ...shared, amount: 20, expiresAt: soon, source: 'promotion' });
      await w.usage.reserve(w.tenant, { ...shared, quantity: 30, ttlSeconds: 3600 });
      w.clock.set(new Date(start + 61_000));
      expect(await w.usage.sweep()).toBe(2);
      expect((await w.usage.balances(w.tenant, 'covered'))[0].balance).toMatchObject({ granted: 20n, used: 20n });
      expect((await w.usage.balances(w.tenant, 'shared'))[0].balance).toMatchObject({ granted: 30n, reserved: 30n });
      // Settled: neither is taken again.
      expect(await w.usage.sweep()).toBe(0);
      await expectLedgerMatches(w, 'covered');
      await expectLedgerMatches(w, 'shared');
    });

    it('a close lapses credit that expired while a hold kept it: not billed against, rolled over nor kept', async () => {
      const t = { owner: 'acme', meterSlug: 'tokens' };
      const now = w.clock.now().getTime();
      const day = 86_400_000;
      await w.usage.closePeriod(w.tenant, t, { periodEnd: new Date(now + 30 * day), allowance: 0n });
      const hour = 3_600_000;
      await w.usage.grant(w.tenant, { ...t, amount: 100, expiresAt: new Date(now + hour), source: 'promotion' });
      await w.usage.reserve(w.tenant, { ...t, quantity: 100, ttlSeconds: 86_400 });
      w.clock.set(new Date(now + 2 * hour));
      const closed = await w.usage.closePeriod(w.tenant, t, {
        periodEnd: new Date(now + 60 * day),
        allowance: 0n,
        rollover: { kind: 'all' },
      });
      expect(closed).toMatchObject({ finalUsage: 0n, carried: 0n });
      const [open] = await w.usage.balances(w.tenant, 'acme');
      expect(open.balance).toMatchObject({ granted: 0n, used: 0n });
      await expectLedgerMatches(w, 'acme');
    });

    it('refuses bad input naming the field, with nothing written', async () => {
      const t = { owner: 'acme', meterSlug: 'tokens' };
      for (const quantity of [0, -1, 1.5, '1e3', 10 ** 13, 'x'])
        expect((await errorOf(w.usage.consume(w.tenant, { ...t, quantity }))).details[0].property).toBe('quantity');
      expect((await errorOf(w.usage.consume(w.tenant, { ...t, meterSlug: 'nope', quantity: 1 }))).details[0].property).toBe('meterSlug');
      expect((await errorOf(w.usage.consume(w.tenant, { ...t, owner: '', quantity: 1 }))).details[0].property).toBe('owner');
      expect((await errorOf(w.usage.reserve(w.tenant, { ...t, quantity: 1, ttlSeconds: 86_401 }))).details[0].property).toBe('ttlSeconds');
      expect((await errorOf(w.usage.grant(w.tenant, { ...t, amount: 1, priority: 101 }))).details[0].property).toBe('priority');
      expect((await errorOf(w.usage.grant(w.tenant, { ...t, amount: 1, expiresAt: new Date(0) }))).details[0].property).toBe('expiresAt');
      // Past ISO 8601's four-digit years (9999-12-31T23:59:59-01:00 is 10000-01-01 UTC).
      const late = new Date('9999-12-31T23:59:59-01:00');
      expect((await errorOf(w.usage.grant(w.tenant, { ...t, amount: 1, expiresAt: late }))).details[0].property).toBe('expiresAt');
      // A counter may not pass 10^15.
      await Promise.all(Array.from({ length: 1000 }, () => w.usage.record(w.tenant, { ...t, owner: 'big', quantity: 10 ** 12 })));
      expect((await errorOf(w.usage.record(w.tenant, { ...t, owner: 'big', quantity: 1 }))).details[0].property).toBe('quantity');
      expect(await w.usage.balances(w.tenant, 'acme')).toEqual([]);
      await expectLedgerMatches(w, 'big');
    });

    it('lists usage records per owner and meter, and balances of an owner', async () => {
      await w.usage.createMeter(w.tenant, { slug: 'calls', name: 'Calls' });
      await w.usage.record(w.tenant, { owner: 'acme', meterSlug: 'tokens', quantity: 3 });
      await w.usage.consume(w.tenant, { owner: 'acme', meterSlug: 'calls', quantity: 1 });
      await w.usage.record(w.tenant, { owner: 'zeta', meterSlug: 'tokens', quantity: 2 });
      const all = await w.usage.records(w.tenant, { limit: 10 });
      expect(all.page.items.map((e) => [e.owner, all.meters.get(e.meterId)?.slug, e.quantity])).toEqual(
        expect.arrayContaining([
          ['acme', 'tokens', 3n],
          ['acme', 'calls', 1n],
          ['zeta', 'tokens', 2n],
        ]),
      );
      expect((await w.usage.records(w.tenant, { limit: 10, owner: 'acme', meterSlug: 'tokens' })).page.items).toHaveLength(1);
      const first = await w.usage.records(w.tenant, { limit: 2 });
      expect(first.page.hasMore).toBe(true);
      expect((await w.usage.records(w.tenant, { limit: 2, after: first.page.nextCursor as string })).page.items).toHaveLength(1);
      expect((await w.usage.balances(w.tenant, 'acme')).map((v) => v.meter.slug).sort()).toEqual(['calls', 'tokens']);
      expect(await w.usage.balances({ ...w.tenant, isTest: true }, 'acme')).toEqual([]);
    });

    it('period close racing consumption puts every unit in exactly one period; rollover and allowance start the next', async () => {
      // A plan grant (the period's allowance) rolls over by the rule; the open hold goes to the next period.
      await w.usage.grant(w.tenant, { owner: 'acme', meterSlug: 'tokens', amount: 1000, source: 'plan' });
      await w.usage.reserve(w.tenant, { owner: 'acme', meterSlug: 'tokens', quantity: 5, ttlSeconds: 600 });
      const t = { owner: 'acme', meterSlug: 'tokens' };
      const consumes = Array.from({ length: 60 }, () => w.usage.consume(w.tenant, { ...t, quantity: 3 }));
      const close = w.usage.closePeriod(w.tenant, t, {
        periodEnd: new Date(w.clock.now().getTime() + 86_400_000),
        allowance: 100n,
        rollover: { kind: 'upTo', units: 50n },
      });
      const later = Array.from({ length: 40 }, () => w.usage.consume(w.tenant, { ...t, quantity: 3 }));
      const [answers, closed, after] = await Promise.all([Promise.all(consumes), close, Promise.all(later)]);
      const allowed = [...answers, ...after].filter((a) => a.allowed).length;
      const [open] = await w.usage.balances(w.tenant, 'acme');
      // Units before the close are its final usage; units after it are the new period's: none lost, none in both.
      expect(closed.finalUsage + open.balance.used).toBe(BigInt(allowed * 3));
      expect(closed.carried).toBe(50n);
      expect(open.balance).toMatchObject({ granted: 150n, reserved: 5n });
      expect(open.balance.id).toBe(closed.balanceId);
      const closedEntries = await w.uow.read((r) => r.usage.ledgerOf(closed.closedBalanceId));
      expect(closedEntries.filter((e) => e.kind === 'close')).toHaveLength(1);
      const closedBalance = await w.uow.read((r) => r.usage.getBalance(closed.closedBalanceId));
      expect(closedBalance).toMatchObject({ granted: 0n, used: 0n, reserved: 0n });
      expect(closedBalance?.closedAt).not.toBeNull();
      expect(closedEntries.reduce((n, e) => n + e.usedDelta, 0n)).toBe(0n);
      await expectLedgerMatches(w, 'acme');
      expect((await w.usage.verify(10_000)).filter((m) => m.balanceId === closed.closedBalanceId)).toEqual([]);
    });

    it("a close keeps what the period did not need of credits that are not the plan's, until their own expiry, and hands open holds to the next period", async () => {
      const t = { owner: 'buyer', meterSlug: 'tokens' };
      const day = 86_400_000;
      const now = w.clock.now().getTime();
      await w.usage.grant(w.tenant, { ...t, amount: 100, source: 'plan', expiresAt: new Date(now + day) });
      await w.usage.grant(w.tenant, { ...t, amount: 500, source: 'purchase', expiresAt: new Date(now + 40 * day) });
      await w.usage.grant(w.tenant, { ...t, amount: 30, source: 'promotion', priority: 90 });
      // 160 used: the plan's 100 first (sooner expiry), then 60 of the purchase; 25 held over the close.
      await w.usage.consume(w.tenant, { ...t, quantity: 160 });
      const hold = await w.usage.reserve(w.tenant, { ...t, quantity: 25, ttlSeconds: 86_400 });
      w.clock.set(new Date(now + day / 2));
      const closed = await w.usage.closePeriod(w.tenant, t, { periodEnd: new Date(now + 61 * day), allowance: 100n });
      expect(closed).toMatchObject({ finalUsage: 160n, carried: 0n });
      // The allowance, the purchase's 440 left and the promotion's 30; the hold reserved here now.
      let [open] = await w.usage.balances(w.tenant, 'buyer');
      expect(open.balance).toMatchObject({ id: closed.balanceId, granted: 570n, used: 0n, reserved: 25n });
      // Its commit lands in the new period (drawn from the purchase: it expires before the allowance); the rest of the hold returns.
      expect(await w.usage.commit(w.tenant, hold.holdId as string, { quantity: 20 })).toMatchObject({
        allowed: true,
        used: '20',
        reserved: '0',
      });
      expect((await errorOf(w.usage.release(w.tenant, hold.holdId as string))).code).toBe('HOLD_SETTLED');
      const grants = await w.uow.run(async (r) => (await r.usage.lockBalance(open.balance, [], w.clock.now())).grants);
      expect(grants.map((g) => [g.source, g.amount, g.expiresAt?.getTime() ?? null, g.priority]).sort()).toEqual(
        [
          ['plan', 100n, now + 61 * day, 50],
          ['promotion', 30n, null, 90],
          ['purchase', 440n, now + 40 * day, 50],
        ].sort(),
      );
      // The purchase's 420 left lapse at its own expiry, in the next period (what was drawn of it stays used).
      w.clock.set(new Date(now + 40 * day + 1000));
      await w.usage.consume(w.tenant, { ...t, quantity: 1 });
      [open] = await w.usage.balances(w.tenant, 'buyer');
      expect(open.balance).toMatchObject({ granted: 150n, used: 21n });
      await expectLedgerMatches(w, 'buyer');
    });

    it('a period that takes over a balance left open sets its start, cap and end; later writes keep them', async () => {
      // Usage recorded with no period (no plan of the holder meters it): a balance of no end and no cap.
      await w.usage.record(w.tenant, { owner: 'stray', meterSlug: 'tokens', quantity: 5 });
      const meter = await w.usage.meter(w.tenant, 'tokens');
      const start = new Date(w.clock.now().getTime() + 60_000);
      const end = new Date(start.getTime() + 30 * 86_400_000);
      w.clock.set(start);
      const ids = new RandomIds();
      const period = { tenant: w.tenant, owner: 'stray', meter, start, end, cap: 50n, grants: [20n], now: start };
      await w.uow.run((r) => openPeriod(r, ids, { ...period, adopt: true }));
      const held = async () => (await w.usage.balances(w.tenant, 'stray'))[0].balance;
      expect(await held()).toMatchObject({ periodStart: start, periodEnd: end, cap: 50n, granted: 20n, used: 5n });
      await w.usage.consume(w.tenant, { owner: 'stray', meterSlug: 'tokens', quantity: 3 });
      expect(await held()).toMatchObject({ periodStart: start, periodEnd: end, cap: 50n, used: 8n });
      // Without `adopt` (a period starting on a balance it opened itself) the balance is left as it is.
      await w.uow.run((r) => openPeriod(r, ids, { ...period, start: new Date(0), cap: null, grants: [] }));
      expect(await held()).toMatchObject({ periodStart: start, cap: 50n });
      await expectLedgerMatches(w, 'stray');
    });

    it('two instances batching many balances in opposite orders neither deadlock nor lose a unit', async () => {
      // Each service stands for an instance: its own group commit, batches of many balances.
      const other = new UsageService({ uow: w.uow, clock: w.clock, ids: new RandomIds() });
      const owners = Array.from({ length: 30 }, (_, i) => `spread-${i}`);
      await Promise.all(owners.map((owner) => w.usage.grant(w.tenant, { owner, meterSlug: 'tokens', amount: 10 })));
      const consume = (s: UsageService, owner: string) => s.consume(w.tenant, { owner, meterSlug: 'tokens', quantity: 4 });
      const reversed = [...owners].reverse();
      const answers = await Promise.all(
        [0, 1, 2].flatMap(() => [...owners.map((o) => consume(w.usage, o)), ...reversed.map((o) => consume(other, o))]),
      );
      // Six consumes of 4 per owner against 10: exactly two allowed each, whatever the interleaving.
      expect(answers.filter((a) => a.allowed)).toHaveLength(60);
      // Balances new to both instances, created inside their batches at the same time: one each.
      const fresh = Array.from({ length: 20 }, (_, i) => `new-${i}`);
      await Promise.all(
        [w.usage, other].flatMap((s) => fresh.map((owner) => s.record(w.tenant, { owner, meterSlug: 'tokens', quantity: 1 }))),
      );
      for (const owner of owners) {
        const [b, ...more] = await w.usage.balances(w.tenant, owner);
        expect([b.balance.used, more.length]).toEqual([8n, 0]);
        await expectLedgerMatches(w, owner);
      }
      for (const owner of fresh) {
        const [b, ...more] = await w.usage.balances(w.tenant, owner);
        expect([b.balance.used, more.length]).toEqual([2n, 0]);
        await expectLedgerMatches(w, owner);
      }
    });

    it("a batch's events commit with it: usage.recorded per balance, a delivery per endpoint of its tenant that takes the type", async () => {
      const ids = new RandomIds();
      const outboxed = new OutboxUnitOfWork(w.uow, { clock: w.clock, ids, events: { wake: () => undefined } });
      const usage = new UsageService({ uow: outboxed, clock: w.clock, ids });
      const endpoint = (over: { events: ('usage.recorded' | 'usage.threshold')[]; isTest?: boolean; disabledAt?: Date | null }) => ({
        id: randomUUID(),
        organisationId: w.tenant.organisationId,
        isTest: over.isTest ?? w.tenant.isTest,
        url: 'https://hooks.example.com/in',
        description: null,
        events: over.events,
        sealedSecret: 'sealed',
        disabledAt: over.disabledAt ?? null,
        createdAt: w.clock.now(),
        updatedAt: w.clock.now(),
      });
      const takes = endpoint({ events: ['usage.recorded'] });
      const others = [
        endpoint({ events: ['usage.threshold'] }),
        endpoint({ events: ['usage.recorded'], isTest: !w.tenant.isTest }),
        endpoint({ events: ['usage.recorded'], disabledAt: w.clock.now() }),
      ];
      await w.uow.run(async (r) => {
        for (const e of [takes, ...others]) await r.webhooks.saveEndpoint(e);
      });
      await Promise.all(['a', 'b'].map((owner) => w.usage.grant(w.tenant, { owner, meterSlug: 'tokens', amount: 100 })));
      // Queued together: batches take several balances (how they split depends on the timing).
      const owners = ['a', 'b', 'a', 'b', 'a'];
      await Promise.all(owners.map((owner) => usage.consume(w.tenant, { owner, meterSlug: 'tokens', quantity: 5 })));
      const events = (await w.uow.read((r) => r.outbox.page(w.tenant, { limit: 50, types: ['usage.recorded'] }))).items;
      const data = events.map((e) => (e.payload as { data: { owner: string; quantity: number; used: number } }).data);
      // Every unit in exactly one event of its balance; each event shows the balance after its batch.
      for (const [owner, used] of [
        ['a', 15],
        ['b', 10],
      ] as const) {
        const mine = data.filter((d) => d.owner === owner);
        expect(mine.reduce((n, d) => n + d.quantity, 0)).toBe(used);
        expect(Math.max(...mine.map((d) => d.used))).toBe(used);
      }
      const deliveries = (await w.uow.read((r) => r.webhooks.pageDeliveries(w.tenant, { limit: 50 }))).items;
      expect(deliveries.map((d) => [d.endpointId, d.eventId]).sort()).toEqual(events.map((e) => [takes.id, e.id]).sort());
    });

    it('a balance tells its usage (usage.recorded) at most once a window: what waits is told by the first write after it, or by the sweep', async () => {
      const ids = new RandomIds();
      const outboxed = new OutboxUnitOfWork(w.uow, { clock: w.clock, ids, events: { wake: () => undefined }, usageEventWindowMs: 60_000 });
      const usage = new UsageService({ uow: outboxed, clock: w.clock, ids });
      const t0 = w.clock.now().getTime();
      const at = (seconds: number) => w.clock.set(new Date(t0 + seconds * 1000));
      const owner = `window-${randomUUID()}`;
      const consume = (quantity: number) => usage.consume(w.tenant, { owner, meterSlug: 'tokens', quantity });
      const told = async () =>
        (await w.uow.read((r) => r.outbox.page(w.tenant, { limit: 50, types: ['usage.recorded'] }))).items
          .map((e) => (e.payload as { data: { owner: string; quantity: number; operations: number; used: number } }).data)
          .filter((d) => d.owner === owner)
          .map((d) => [d.quantity, d.operations, d.used]);
      const balance = async () => (await w.uow.read((r) => r.usage.openBalances(w.tenant, owner)))[0];
      await usage.grant(w.tenant, { owner, meterSlug: 'tokens', amount: 100 });
      await consume(5); // the balance's first use: told at once
      at(10);
      await consume(3);
      at(20);
      await consume(2);
      expect(await told()).toEqual([[5, 1, 5]]);
      expect(await balance()).toMatchObject({
        unreported: 5n,
        unreportedOps: 2,
        reportedAt: new Date(t0),
        reportDueAt: new Date(t0 + 60_000),
      });
      at(61);
      await consume(1); // the window has passed: this write tells what waited with its own
      expect(await told()).toEqual([
        [5, 1, 5],
        [6, 3, 11],
      ]);
      at(70);
      await consume(4); // waits until 121 s
      const due = async (seconds: number) =>
        (await w.uow.read((r) => r.usage.balancesWithDueReports(new Date(t0 + seconds * 1000), 100))).filter((b) => b.owner === owner);
      expect(await due(120)).toEqual([]);
      at(122);
      expect((await due(122)).map((b) => b.owner)).toEqual([owner]);
      await usage.sweep(); // no write came: the sweep tells it
      expect(await told()).toEqual([
        [5, 1, 5],
        [6, 3, 11],
        [4, 1, 15],
      ]);
      expect(await balance()).toMatchObject({
        used: 15n,
        unreported: 0n,
        unreportedOps: 0,
        reportDueAt: null,
        reportedAt: new Date(t0 + 122_000),
      });
      expect(await due(1_000)).toEqual([]);
      await expectLedgerMatches(w, owner);
    });

    it('one sweep reports the waiting usage of many balances (more than a batch), each once', async () => {
      const ids = new RandomIds();
      const outboxed = new OutboxUnitOfWork(w.uow, { clock: w.clock, ids, events: { wake: () => undefined }, usageEventWindowMs: 60_000 });
      const usage = new UsageService({ uow: outboxed, clock: w.clock, ids });
      const t0 = w.clock.now().getTime();
      const run = randomUUID().slice(0, 8);
      const owners = Array.from({ length: 70 }, (_, n) => `sweep-${run}-${n}`);
      const consumeAll = (quantity: number) =>
        Promise.all(owners.map((owner) => usage.record(w.tenant, { owner, meterSlug: 'tokens', quantity })));
      await consumeAll(2); // told at once
      w.clock.set(new Date(t0 + 30_000));
      await consumeAll(3); // waits
      w.clock.set(new Date(t0 + 61_000));
      await usage.sweep();
      const told = (await w.uow.read((r) => r.outbox.page(w.tenant, { limit: 500, types: ['usage.recorded'] }))).items
        .map((e) => (e.payload as { data: { owner: string; quantity: number } }).data)
        .filter((d) => d.owner.startsWith(`sweep-${run}-`));
      for (const owner of owners) expect(told.filter((d) => d.owner === owner).map((d) => d.quantity)).toEqual([2, 3]);
    });

    it("keeps the meter-event relay's planned sends per provider, earliest usage first, exact; deletes only what it is told; refusals once", async () => {
      const provider = `p-${randomUUID()}`;
      const other = `q-${randomUUID()}`;
      const at = (s: number) => new Date(Date.parse('2026-11-24T00:00:00.000Z') + s * 1000);
      const send = (over: Partial<MeterSend>): MeterSend => ({
        id: randomUUID(),
        provider,
        organisationId: w.tenant.organisationId,
        isTest: w.tenant.isTest,
        owner: 'sub-owner',
        meterSlug: 'tokens',
        customerId: 'cus_1',
        value: '7',
        timestamp: at(50),
        firstEntryAt: at(10),
        entries: 1,
        createdAt: at(60),
        ...over,
      });
      const late = send({ value: '0.3', entries: 3, firstEntryAt: at(20) });
      const early = send({ value: '123456789012.345678', entries: 20_000, customerId: 'cus_2', firstEntryAt: at(5) });
      const elsewhere = send({ provider: other });
      // A unit of work that fails stores nothing.
      await expect(
        w.uow.run(async (r) => {
          await r.usage.planMeterSends([late]);
          throw new Error('rolled back');
        }),
      ).rejects.toThrow('rolled back');
      expect(await w.uow.read((r) => r.usage.plannedMeterSends(provider, 10))).toEqual([]);
      await w.uow.run((r) => r.usage.planMeterSends([late, early, elsewhere]));
      expect(await w.uow.read((r) => r.usage.plannedMeterSends(provider, 10))).toEqual([early, late]);
      expect(await w.uow.read((r) => r.usage.plannedMeterSends(provider, 1))).toEqual([early]);
      await w.uow.run((r) => r.usage.deleteMeterSends(provider, [early.id, elsewhere.id]));
      expect(await w.uow.read((r) => r.usage.plannedMeterSends(provider, 10))).toEqual([late]);
      expect(await w.uow.read((r) => r.usage.plannedMeterSends(other, 10))).toEqual([elsewhere]);
      await w.uow.run((r) => r.usage.deleteMeterSends(other, [elsewhere.id]));

      const failure = {
        sendId: late.id,
        provider,
        organisationId: late.organisationId,
        isTest: late.isTest,
        owner: late.owner,
        meterSlug: late.meterSlug,
        customerId: late.customerId,
        value: late.value,
        timestamp: late.timestamp,
        entries: late.entries,
        error: 'Stripe meter event failed (400): No such customer',
        failedAt: at(70),
      };
      await w.uow.run((r) => r.usage.saveMeterEventFailure(failure));
      await w.uow.run((r) => r.usage.saveMeterEventFailure({ ...failure, error: 'again', failedAt: at(80) }));
      const kept = (await w.uow.read((r) => r.usage.meterEventFailures(1000))).filter((f) => f.provider === provider);
      expect(kept).toEqual([failure]);
    });

    it('a key taken on one balance and reused on another by a racing writer is refused, never counted twice', async () => {
      // Two services stand for two instances: their transactions run at once, so on a database
      // server the second insert of the key meets the first at the unique index (a conflict,
      // retried, then a replay or a refusal). One service would run them one after the other.
      const other = new UsageService({ uow: w.uow, clock: w.clock, ids: new RandomIds() });
      const used = async (o: string) => ((await w.usage.balances(w.tenant, o))[0]?.balance.used ?? 0n) as bigint;
      for (let n = 0; n < 10; n++) {
        const key = randomUUID();
        const results = await Promise.allSettled([
          w.usage.record(w.tenant, { owner: `a${n}`, meterSlug: 'tokens', quantity: 1 }, key),
          other.record(w.tenant, { owner: `b${n}`, meterSlug: 'tokens', quantity: 1 }, key),
        ]);
        expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
        expect((await used(`a${n}`)) + (await used(`b${n}`))).toBe(1n);
      }
    });
  });
}

export type { UsageAnswer };
