import { sql } from 'kysely';
import { FixedClock, usageWorld, type UsageWorld } from '@tollgate/core/testing';
import { createTestDatabase, type TestDatabase } from '../src';

export function describeLedgerRetention(kind: 'pglite' | 'postgres'): void {
  // The usage ledger's monthly partitions on PGlite and on a server: months made
  // ahead (rows already in the default partition move in), months past the retention dropped, never
  // one holding a row of an open balance, and the open balances' counters still equal their ledgers.
  let db: TestDatabase;
  let w: UsageWorld;
  const clock = new FixedClock(new Date('2026-01-15T12:00:00.000Z'));

  beforeAll(async () => {
    db = await createTestDatabase(kind);
    w = await usageWorld(db.uow, clock);
    await w.usage.createMeter(w.tenant, { slug: 'calls', name: 'Calls' });
  });
  afterAll(async () => {
    await db?.drop();
  });

  const partitions = async () =>
    (
      await sql<{ name: string; rows: number }>`
      select c.relname as name, (select count(*) from usage_ledger l where l.tableoid = c.oid)::int as rows
      from pg_inherits i join pg_class c on c.oid = i.inhrelid join pg_class p on p.oid = i.inhparent
      where p.relname = 'usage_ledger' order by c.relname`.execute(db.db)
    ).rows;
  const ledgerSize = async () => Number((await sql<{ n: number }>`select count(*)::int as n from usage_ledger`.execute(db.db)).rows[0].n);
  const at = (iso: string) => clock.set(new Date(iso));

  describe(`${kind}: usage ledger retention`, () => {
    it('makes months ahead, moves their rows out of the default partition, and drops old months but never an open period’s', async () => {
      await w.usage.record(w.tenant, { owner: 'open-since-january', meterSlug: 'calls', quantity: 5 });
      await w.usage.grant(w.tenant, { owner: 'closes', meterSlug: 'calls', amount: 100 });
      await w.usage.consume(w.tenant, { owner: 'closes', meterSlug: 'calls', quantity: 40 });
      const before = await ledgerSize();

      const first = await w.usage.maintainLedger(null);
      expect(first).toEqual({ created: ['usage_ledger_y2026m01', 'usage_ledger_y2026m02', 'usage_ledger_y2026m03'], dropped: [] });
      expect(await partitions()).toEqual([
        { name: 'usage_ledger_default', rows: 0 },
        { name: 'usage_ledger_y2026m01', rows: before },
        { name: 'usage_ledger_y2026m02', rows: 0 },
        { name: 'usage_ledger_y2026m03', rows: 0 },
      ]);
      expect(await w.usage.maintainLedger(null)).toEqual({ created: [], dropped: [] });

      // June, keeping 2 months: February and March go; January holds rows of open balances and stays.
      at('2026-06-10T00:00:00.000Z');
      await w.usage.closePeriod(w.tenant, { owner: 'closes', meterSlug: 'calls' }, { periodEnd: null });
      const june = await w.usage.maintainLedger(2);
      expect(june.created).toEqual(['usage_ledger_y2026m06', 'usage_ledger_y2026m07', 'usage_ledger_y2026m08']);
      expect(june.dropped).toEqual(['usage_ledger_y2026m02', 'usage_ledger_y2026m03']);
      expect((await partitions()).map((p) => p.name)).toContain('usage_ledger_y2026m01');

      // Once every balance with January rows is closed, January goes too; what is open still adds up.
      await w.usage.closePeriod(w.tenant, { owner: 'open-since-january', meterSlug: 'calls' }, { periodEnd: null });
      await w.usage.record(w.tenant, { owner: 'open-since-january', meterSlug: 'calls', quantity: 7 });
      expect((await w.usage.maintainLedger(2)).dropped).toEqual(['usage_ledger_y2026m01']);
      expect(await w.usage.verify()).toEqual([]);
      const [open] = await w.usage.balances(w.tenant, 'open-since-january', 'calls');
      expect(open.balance.used).toBe(7n);
      expect(await w.usage.maintainLedger(null)).toEqual({ created: [], dropped: [] });
      await expect(w.usage.maintainLedger(0)).rejects.toMatchObject({
        details: [expect.objectContaining({ property: 'retentionMonths' })],
      });
    });
  });
}
