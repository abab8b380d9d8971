import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { Client } from 'pg';
import { migrateToLatest, migrationNames, migrationsNamed, openDatabase, pendingMigrations, type DatabaseHandle } from '../src/database';

// The migrations of main at 7626790 (2026-11-24): later commits added `2026-11-25T10-00-usage-lock`
// and `2026-11-25T20-0x` under names that sort before `2026-11-25T30-0x`, which had shipped. A
// database migrated by that build must still upgrade (it refused to start: "corrupted migrations").
const SHIPPED_AT_7626790 = [
  '2026-11-22T00-initial',
  '2026-11-22T01-signing-keys',
  '2026-11-22T02-billing',
  '2026-11-22T03-idempotency',
  '2026-11-22T04-hardening',
  '2026-11-22T05-change-feed',
  '2026-11-22T06-webhooks',
  '2026-11-22T07-tier-tags',
  '2026-11-23T01-idempotency-scope',
  '2026-11-23T02-00-deferred-checkouts',
  '2026-11-23T02-01-webhook-fairness',
  '2026-11-23T04-usage',
  '2026-11-24T10-00-00-usage-plans',
  '2026-11-24T30-00-people',
  '2026-11-24T30-01-subscription-line-items',
  '2026-11-24T40-00-receipts',
  '2026-11-24T40-01-carts',
  '2026-11-25T30-00-meter-relay',
  '2026-11-25T30-01-meter-scale',
];
const ADDED_BEFORE_SHIPPED = [
  '2026-11-25T10-00-usage-lock',
  '2026-11-25T20-00-checkout-groups',
  '2026-11-25T20-01-subscription-plans',
  '2026-11-25T20-02-checkout-items',
];

/** A new, empty database of `kind` (not migrated) and how to drop it. */
async function emptyDatabase(kind: 'pglite' | 'postgres'): Promise<DatabaseHandle & { drop(): Promise<void> }> {
  if (kind === 'pglite') {
    const handle = openDatabase();
    return { ...handle, drop: () => handle.close() };
  }
  const server = process.env.TEST_DATABASE_URL as string;
  const name = `tollgate_test_${randomUUID().replace(/-/g, '').slice(0, 16)}`;
  const admin = new Client({ connectionString: server });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const url = new URL(server);
  url.pathname = `/${name}`;
  const handle = openDatabase({ url: url.toString() });
  return {
    ...handle,
    drop: async () => {
      await handle.close();
      const c = new Client({ connectionString: server });
      await c.connect();
      await c.query(`drop database if exists ${name} with (force)`);
      await c.end();
    },
  };
}

const kinds: ('pglite' | 'postgres')[] = process.env.TEST_DATABASE_URL ? ['pglite', 'postgres'] : ['pglite'];

describe.each(kinds)('%s: upgrading a database an older build migrated', (kind) => {
  it('applies migrations added under names that sort before ones already run, keeping the data', async () => {
    expect(migrationNames()).toEqual(expect.arrayContaining([...SHIPPED_AT_7626790, ...ADDED_BEFORE_SHIPPED]));
    const db = await emptyDatabase(kind);
    try {
      expect(await migrateToLatest(db.db, migrationsNamed(SHIPPED_AT_7626790))).toEqual(SHIPPED_AT_7626790);
      const id = randomUUID();
      await sql`insert into organisations (id, name, created_at) values (${id}, 'upgraded', now())`.execute(db.db);
      const pending = await pendingMigrations(db.db);
      expect(pending).toEqual(expect.arrayContaining(ADDED_BEFORE_SHIPPED));

      const applied = await migrateToLatest(db.db);
      expect(applied).toEqual(pending);
      expect(await pendingMigrations(db.db)).toEqual([]);
      expect(await migrateToLatest(db.db)).toEqual([]);
      const kept = await sql<{ name: string }>`select name from organisations where id = ${id}`.execute(db.db);
      expect(kept.rows).toEqual([{ name: 'upgraded' }]);
      // What the out-of-order migrations made is there (the usage lock's function, the checkout's group).
      const made = await sql<{ fn: string | null; col: number }>`
        select to_regproc('usage_lock_balances')::text as fn,
               (select count(*)::int from information_schema.columns
                 where table_name = 'checkout_sessions' and column_name = 'group_id') as col`.execute(db.db);
      expect(made.rows[0]).toEqual({ fn: 'usage_lock_balances', col: 1 });
    } finally {
      await db.drop();
    }
  });
});
