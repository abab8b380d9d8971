import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { sql } from 'kysely';
import { MeterEventRelay, UsageService, type MeterEvent, type MeterEventOutcome, type UnitOfWork } from '@tollgate/core';
import { aCustomer, anOrganisation, aPlan, aProduct, aSubscription, aTenant, FixedClock, RandomIds } from '@tollgate/core/testing';
import { createTestDatabase, type TestDatabase } from '../src';

/** A payment provider that takes meter events as Stripe does: an identifier counts once. */
class FakeMeter {
  readonly name = 'stripe';
  readonly requests: MeterEvent[] = [];
  readonly taken = new Map<string, MeterEvent>();
  /** Sends in flight now, and the most at once (two relays must never send at the same time). */
  inFlight = 0;
  maxInFlight = 0;
  delayMs = 0;
  async sendMeterEvent(e: MeterEvent): Promise<MeterEventOutcome> {
    this.requests.push(e);
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    if (this.delayMs) await new Promise((r) => setTimeout(r, this.delayMs));
    this.inFlight--;
    if (!this.taken.has(e.identifier)) this.taken.set(e.identifier, e);
    return { ok: true };
  }
  units(): number {
    return [...this.taken.values()].reduce((n, e) => n + Number(e.value), 0);
  }
}

/** The unit of work of a process killed after its work and before its COMMIT. */
const dying = (uow: UnitOfWork): UnitOfWork => ({
  read: (work) => uow.read(work),
  run: (work) =>
    uow.run(async (r) => {
      await work(r);
      throw new Error('killed before commit');
    }),
});

export function describeMeterRelay(kind: 'pglite' | 'postgres'): void {
  // The meter-event relay over the ledger on PGlite and a server: every entry of a Stripe-billed
  // subscription sent once (by identifier), none skipped, a crash before the cursor's commit
  // resends the same identifiers, two relays never send at once, retention keeps what is unsent.
  let db: TestDatabase;
  const clock = new FixedClock(new Date('2026-01-15T12:00:00.000Z'));
  let usage: UsageService;
  let tenant: ReturnType<typeof aTenant>;
  let billed: ReturnType<typeof aSubscription>;
  let sandboxed: ReturnType<typeof aSubscription>;

  beforeAll(async () => {
    db = await createTestDatabase(kind);
    const org = anOrganisation();
    tenant = aTenant(org);
    const product = aProduct(tenant);
    const plan = aPlan(product);
    const customer = aCustomer(tenant, { paymentCustomerId: 'cus_relay' });
    billed = aSubscription(plan, customer, { paymentProvider: 'stripe', paymentSubscriptionId: 'sub_relay' });
    sandboxed = aSubscription(plan, customer, { paymentProvider: 'sandbox' });
    await db.uow.run(async (r) => {
      await r.organisations.save(org);
      await r.customers.save(customer);
      await r.products.save(product);
      await r.plans.save(plan);
      await r.subscriptions.save(billed);
      await r.subscriptions.save(sandboxed);
    });
    usage = new UsageService({ uow: db.uow, clock, ids: new RandomIds() });
    await usage.createMeter(tenant, { slug: 'tokens', name: 'Tokens' });
  });
  afterAll(async () => {
    await db?.drop();
  });

  /** Everything the relay still has to send is sent (passes until one finds nothing). */
  const drain = async (relay: MeterEventRelay) => {
    for (let i = 0; i < 50; i++) if (!(await relay.pass()).more) return;
  };
  /**
   * Waits until at least `n` entries are past the relay's horizon. The horizon is the server's
   * oldest running writer (every database of it: other test files run beside this one), so a fresh
   * entry may wait a moment; what is asserted is never *whether* it goes, only that it goes once.
   */
  const visible = async (n: number) => {
    for (let i = 0; i < 400; i++) {
      const seen = await db.uow.run(async (r) => {
        const cursor = await r.usage.claimMeterRelay('stripe');
        return cursor ? (await r.usage.pendingMeterEvents(cursor, 1000)).events.filter((e) => e.customerId).length : 0;
      });
      if (seen >= n) return;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`fewer than ${n} entries became visible to the relay`);
  };
  /** Passes until `done` (bounded: a wait, not a speed assertion). */
  const until = async (relay: MeterEventRelay, done: () => boolean) => {
    for (let i = 0; i < 400 && !done(); i++) {
      if (!(await relay.pass()).more) await new Promise((r) => setTimeout(r, 50));
    }
    expect(done()).toBe(true);
  };
  const billedEntries = async () => {
    const page = await db.uow.read((r) => r.usage.pageRecords(tenant, { limit: 1000, owner: billed.id }));
    return page.items;
  };

  describe(`${kind}: usage meter-event relay`, () => {
    it('sends each used entry of a Stripe-billed subscription once, in batches, and passes over other owners', async () => {
      const meter = new FakeMeter();
      const relay = new MeterEventRelay({ uow: db.uow, clock, payments: meter, batch: 4 });
      for (let i = 1; i <= 10; i++) await usage.record(tenant, { owner: billed.id, meterSlug: 'tokens', quantity: i });
      await usage.record(tenant, { owner: sandboxed.id, meterSlug: 'tokens', quantity: 100 });
      await usage.record(tenant, { owner: 'someone-else', meterSlug: 'tokens', quantity: 100 });
      await usage.grant(tenant, { owner: billed.id, meterSlug: 'tokens', amount: 1000 });
      await usage.consume(tenant, { owner: billed.id, meterSlug: 'tokens', quantity: 45 });
      const entries = await billedEntries();
      await until(relay, () => meter.taken.size >= entries.length);
      expect([...meter.taken.keys()].sort()).toEqual(entries.map((e) => e.id).sort());
      expect(meter.requests).toHaveLength(entries.length);
      expect(meter.units()).toBe(55 + 45);
      expect(meter.requests.every((e) => e.customerId === 'cus_relay' && e.eventName === 'tokens')).toBe(true);
      expect((await relay.pass()).sent).toBe(0);
    });

    it('a crash after the sends and before the cursor commit resends the same identifiers; Stripe counts them once', async () => {
      const meter = new FakeMeter();
      for (const quantity of [7, 8, 9]) await usage.record(tenant, { owner: billed.id, meterSlug: 'tokens', quantity });
      await visible(3);
      await expect(new MeterEventRelay({ uow: dying(db.uow), clock, payments: meter }).pass()).rejects.toThrow('killed before commit');
      const first = meter.requests.map((e) => e.identifier).sort();
      expect(first).toHaveLength(3);
      await until(new MeterEventRelay({ uow: db.uow, clock, payments: meter }), () => meter.requests.length >= 6);
      expect(
        meter.requests
          .slice(3)
          .map((e) => e.identifier)
          .sort(),
      ).toEqual(first);
      expect(meter.units()).toBe(24);
    });

    if (kind === 'postgres') {
      it('never skips an entry whose transaction commits after a later one was relayed', async () => {
        const meter = new FakeMeter();
        const relay = new MeterEventRelay({ uow: db.uow, clock, payments: meter });
        await drain(relay);
        const [balance] = await usage.balances(tenant, billed.id, 'tokens');
        // A writer that began first (smaller transaction id, older created_at) and commits last.
        let release: () => void = () => undefined;
        const gate = new Promise<void>((r) => (release = r));
        const slowId = '00000000-0000-4000-8000-00000000510e';
        let inserted: () => void = () => undefined;
        const began = new Promise<void>((r) => (inserted = r));
        const slow = db.db.transaction().execute(async (trx) => {
          await sql`insert into usage_ledger (id, organisation_id, is_test, balance_id, owner, meter_id, kind, quantity,
              granted_delta, used_delta, reserved_delta, created_at)
            values (${slowId}, ${tenant.organisationId}, ${tenant.isTest}, ${balance.balance.id}, ${billed.id},
              ${balance.balance.meterId}, 'record', 3, 0, 3, 0, ${new Date('2026-01-15T11:00:00.000Z')})`.execute(trx);
          inserted();
          await gate;
        });
        await began;
        await usage.record(tenant, { owner: billed.id, meterSlug: 'tokens', quantity: 11 });
        // The later entry committed, but the cursor may not pass the unfinished writer: it waits too
        // (a cursor at the committed entry would skip the slow one when it commits).
        await drain(relay);
        expect(meter.requests).toHaveLength(0);
        release();
        await slow;
        await until(relay, () => meter.taken.has(slowId) && meter.units() === 14);
        expect(meter.units()).toBe(14);
        await sql`delete from usage_ledger where id = ${slowId}`.execute(db.db);
      });

      it('kill -9 of the relay process after the sends and before its commit: the restarted relay sends the same identifiers', async () => {
        const meter = new FakeMeter();
        await drain(new MeterEventRelay({ uow: db.uow, clock, payments: meter }));
        for (const quantity of [4, 6]) await usage.record(tenant, { owner: billed.id, meterSlug: 'tokens', quantity });
        await visible(2);
        const built = path.join(__dirname, '..', 'dist', 'index.js');
        if (!fs.existsSync(built)) throw new Error('packages/adapter-postgres is not built: run npm run build first');
        // Another process claims the cursor and hands the events to "Stripe", which takes them; then it is killed.
        const child = spawn(process.execPath, [path.join(__dirname, 'fixtures', 'relay-child.js')], {
          env: { PATH: process.env.PATH, DATABASE_URL: db.url },
          cwd: path.join(__dirname, '..'),
        });
        let out = '';
        child.stdout.on('data', (d: Buffer) => (out += d.toString()));
        const exited = new Promise((resolve) => child.once('exit', resolve));
        const sent = () =>
          out
            .split('\n')
            .filter((l) => l.startsWith('{'))
            .map((l) => JSON.parse(l) as { identifier: string; value: string });
        for (let i = 0; i < 1000 && sent().length < 2; i++) await new Promise((r) => setTimeout(r, 20));
        expect(
          sent()
            .map((e) => e.value)
            .sort(),
        ).toEqual(['4', '6']);
        // While it holds the cursor, this instance's relay skips it (never waits, never sends the same batch).
        expect(await new MeterEventRelay({ uow: db.uow, clock, payments: meter }).pass()).toMatchObject({ ran: false });
        child.kill('SIGKILL');
        await exited;
        // Restarted: the cursor never moved; the same entries go again with the same identifiers.
        const after = new FakeMeter();
        let pass = await new MeterEventRelay({ uow: db.uow, clock, payments: after }).pass();
        // The server ends the killed backend's transaction when it sees the socket close: a moment at most.
        for (let i = 0; i < 100 && !pass.ran; i++) {
          await new Promise((r) => setTimeout(r, 50));
          pass = await new MeterEventRelay({ uow: db.uow, clock, payments: after }).pass();
        }
        expect(pass).toMatchObject({ ran: true, sent: 2 });
        expect([...after.taken.keys()].sort()).toEqual(
          sent()
            .map((e) => e.identifier)
            .sort(),
        );
        expect(after.units()).toBe(10);
      });

      it('two relays at once: one sends, the other skips the claimed cursor; nothing is sent twice', async () => {
        const meter = new FakeMeter();
        meter.delayMs = 20;
        for (let i = 0; i < 12; i++) await usage.record(tenant, { owner: billed.id, meterSlug: 'tokens', quantity: 2 });
        await visible(12);
        const a = new MeterEventRelay({ uow: db.uow, clock, payments: meter, concurrency: 4 });
        const b = new MeterEventRelay({ uow: db.uow, clock, payments: meter, concurrency: 4 });
        const [pa, pb] = await Promise.all([a.pass(), b.pass()]);
        expect([pa.ran, pb.ran].sort()).toEqual([false, true]);
        expect(meter.requests).toHaveLength(12);
        expect(meter.taken.size).toBe(12);
        expect(meter.maxInFlight).toBeLessThanOrEqual(4);
      });
    }

    it('retention keeps a month holding entries not yet relayed, and drops it once they are', async () => {
      const meter = new FakeMeter();
      const relay = new MeterEventRelay({ uow: db.uow, clock, payments: meter });
      await drain(relay);
      await usage.maintainLedger(null);
      await usage.record(tenant, { owner: billed.id, meterSlug: 'tokens', quantity: 5 });
      await usage.record(tenant, { owner: 'someone-else', meterSlug: 'tokens', quantity: 5 });
      // Every balance closed: only the unsent entry can keep January.
      for (const owner of [billed.id, sandboxed.id, 'someone-else'])
        await usage.closePeriod(tenant, { owner, meterSlug: 'tokens' }, { periodEnd: null });
      clock.set(new Date('2026-06-10T00:00:00.000Z'));
      expect((await usage.maintainLedger(2)).dropped).not.toContain('usage_ledger_y2026m01');
      await until(relay, () => meter.units() === 5);
      expect((await usage.maintainLedger(2)).dropped).toContain('usage_ledger_y2026m01');
      clock.set(new Date('2026-01-15T12:00:00.000Z'));
    });
  });
}
