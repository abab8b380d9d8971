/* Usage is exact across two instances on one PostgreSQL and through kill -9 (DESIGN section 14):
   no overdraft, no lost or double-counted unit, nothing acknowledged before its commit, and the
   counters always equal the ledger's sums. */
import { randomUUID } from 'node:crypto';
import { call, createDatabase, eventually, seedOrg, sql, startInstance, type Instance, type Org } from './harness';

let db: Awaited<ReturnType<typeof createDatabase>>;
let a: Instance;
let b: Instance;
let org: Org;

beforeAll(async () => {
  db = await createDatabase();
  // One after the other: two first starts on an empty database race to set it up.
  a = await startInstance(db.url);
  b = await startInstance(db.url);
  org = await seedOrg(db.url, 'usage');
  expect((await call(a.url, 'POST', '/api/meters', { bearer: org.live, body: { slug: 'tokens', name: 'Tokens' } })).status).toBe(201);
});
afterAll(async () => {
  await Promise.all([a?.stop(), b?.stop()]);
  await db?.drop();
});

const post = (base: string, path: string, body: unknown, key?: string) =>
  call(base, 'POST', path, { bearer: org.live, body, headers: key ? { 'idempotency-key': key } : {} });

/**
 * A keyed write, sent again when the connection fails (a loaded machine resets some): what a client
 * with an idempotency key is meant to do, and safe for that reason.
 */
async function postRetrying(base: string, path: string, body: unknown, key: string): Promise<Awaited<ReturnType<typeof call>>> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await post(base, path, body, key);
    } catch (e) {
      if (attempt >= 5) throw e;
      await new Promise((r) => setTimeout(r, 100 * attempt));
    }
  }
}

/** Every balance's counters equal its ledger's sums (what `tollgate usage verify` checks). */
async function expectCountersEqualLedger(): Promise<void> {
  const off = await sql(
    db.url,
    `select b.id from usage_balances b
       left join (select balance_id, sum(granted_delta) g, sum(used_delta) u, sum(reserved_delta) r from usage_ledger group by balance_id) l
         on l.balance_id = b.id
      where b.granted <> coalesce(l.g, 0) or b.used <> coalesce(l.u, 0) or b.reserved <> coalesce(l.r, 0)`,
  );
  expect(off).toEqual([]);
}

const balance = async (owner: string) =>
  ((await call(b.url, 'GET', `/api/balances?owner=${owner}`, { bearer: org.live })).body as { data: Record<string, number>[] }).data[0];

/** Runs `tasks` with at most `width` in flight. */
async function pooled<T>(tasks: (() => Promise<T>)[], width: number): Promise<T[]> {
  const out: T[] = new Array(tasks.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < tasks.length) {
        const i = next++;
        out[i] = await tasks[i]();
      }
    }),
  );
  return out;
}

it('200 concurrent consumers of 7 through two instances against a grant of 1000: 142 allowed, 58 denied, 6 left', async () => {
  expect((await post(a.url, '/api/credits/grants', { owner: 'race', meterSlug: 'tokens', amount: 1000 })).status).toBe(201);
  const answers = await Promise.all(
    Array.from({ length: 200 }, (_, i) =>
      post(i % 2 ? a.url : b.url, '/api/usage/consume', { owner: 'race', meterSlug: 'tokens', quantity: 7 }),
    ),
  );
  expect(answers.every((r) => r.status === 200)).toBe(true);
  const allowed = answers.filter((r) => (r.body as { data: { allowed: boolean } }).data.allowed);
  expect(allowed).toHaveLength(142);
  expect(answers.length - allowed.length).toBe(58);
  expect(await balance('race')).toMatchObject({ granted: 1000, used: 994, reserved: 0, remaining: 6 });
  await expectCountersEqualLedger();
});

it('10 000 records of which 20 % are replays (same key, either instance) count each once', async () => {
  const keys = Array.from({ length: 8000 }, () => randomUUID());
  const sends = [
    ...keys.map((k, i) => ({ k, base: i % 2 ? a.url : b.url })),
    ...keys.slice(0, 2000).map((k, i) => ({ k, base: i % 2 ? b.url : a.url })),
  ];
  // Interleaved: a replay may arrive before, with or after its first send.
  for (let i = sends.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [sends[i], sends[j]] = [sends[j], sends[i]];
  }
  const answers = await pooled(
    sends.map((s) => () => postRetrying(s.base, '/api/usage/record', { owner: 'replays', meterSlug: 'tokens', increment: 1 }, s.k)),
    64,
  );
  expect(answers.filter((r) => r.status !== 204).map((r) => r.text)).toEqual([]);
  expect((await balance('replays')).used).toBe(8000);
  const [entries] = await sql<{ n: number; keys: number }>(
    db.url,
    "select count(*)::int as n, count(distinct idempotency_key)::int as keys from usage_ledger where owner = 'replays' and kind = 'record'",
  );
  expect(entries).toEqual({ n: 8000, keys: 8000 });
  await expectCountersEqualLedger();
}, 600_000);

it('a hold blocks what it holds on the other instance, commit returns the rest, an expired hold returns by itself', async () => {
  await post(a.url, '/api/credits/grants', { owner: 'holds', meterSlug: 'tokens', amount: 100 });
  const hold = await post(a.url, '/api/usage/reservations', { owner: 'holds', meterSlug: 'tokens', quantity: 90, ttlSeconds: 60 });
  expect(hold.status).toBe(201);
  const id = (hold.body as { data: { id: string } }).data.id;
  expect(
    (
      (await post(b.url, '/api/usage/consume', { owner: 'holds', meterSlug: 'tokens', quantity: 11 })).body as {
        data: { allowed: boolean };
      }
    ).data.allowed,
  ).toBe(false);
  expect((await post(b.url, `/api/usage/reservations/${id}/commit`, { quantity: 40 })).status).toBe(200);
  expect(await balance('holds')).toMatchObject({ used: 40, reserved: 0, remaining: 60 });
  const short = await post(b.url, '/api/usage/reservations', { owner: 'holds', meterSlug: 'tokens', quantity: 60, ttlSeconds: 1 });
  expect((short.body as { data: { remaining: number } }).data.remaining).toBe(0);
  // Nothing else touches the balance: the instances' sweep returns it.
  await eventually(async () => (await balance('holds')).reserved === 0, 30_000, 'the expired hold returned');
  expect(await balance('holds')).toMatchObject({ used: 40, remaining: 60 });
  await expectCountersEqualLedger();
});

/**
 * Keyed writes of `body` to `path` on `victim` from `width` writers for 1.5 s, then kill -9 of the
 * victim: every key sent, and those whose answer `accepted` (a connection that died with the
 * process is not acknowledged).
 */
async function writeUntilKilled(
  victim: Instance,
  path: string,
  body: unknown,
  width: number,
  accepted: (r: Awaited<ReturnType<typeof post>>) => boolean,
): Promise<{ sent: string[]; acknowledged: string[] }> {
  const sent: string[] = [];
  const acknowledged: string[] = [];
  let stop = false;
  const writer = async () => {
    while (!stop) {
      const key = randomUUID();
      sent.push(key);
      try {
        if (accepted(await post(victim.url, path, body, key))) acknowledged.push(key);
      } catch {
        // The connection died with the process: not acknowledged.
      }
    }
  };
  const writers = Array.from({ length: width }, writer);
  await new Promise((r) => setTimeout(r, 1500));
  await victim.kill();
  stop = true;
  await Promise.all(writers);
  return { sent, acknowledged };
}

it('kill -9 during a stream of consumes: every acknowledged operation is in the ledger once, counters equal the ledger', async () => {
  await post(a.url, '/api/credits/grants', { owner: 'crash', meterSlug: 'tokens', amount: 1_000_000 });
  const victim = await startInstance(db.url);
  const { sent, acknowledged } = await writeUntilKilled(
    victim,
    '/api/usage/consume',
    { owner: 'crash', meterSlug: 'tokens', quantity: 3 },
    16,
    (r) => r.status === 200 && (r.body as { data: { allowed: boolean } }).data.allowed,
  );
  expect(acknowledged.length).toBeGreaterThan(20);
  const rows = await sql<{ key: string; n: number }>(
    db.url,
    "select idempotency_key as key, count(*)::int as n from usage_ledger where owner = 'crash' and kind = 'consume' group by idempotency_key",
  );
  const counted = new Map(rows.map((r) => [r.key, r.n]));
  expect(acknowledged.filter((k) => counted.get(k) !== 1)).toEqual([]);
  expect([...counted.values()].every((n) => n === 1)).toBe(true);
  expect([...counted.keys()].every((k) => sent.includes(k))).toBe(true);
  // A retry of every sent key on a surviving instance replays or counts once, never twice.
  await pooled(
    sent.map((k) => () => postRetrying(a.url, '/api/usage/consume', { owner: 'crash', meterSlug: 'tokens', quantity: 3 }, k)),
    32,
  );
  expect((await balance('crash')).used).toBe(3 * sent.length);
  await expectCountersEqualLedger();
}, 120_000);

it('kill -9 while usage waits for its usage.recorded window: after a restart every unit is told by exactly one usage.recorded', async () => {
  const owner = 'crash-window';
  // A window of 1 s on both: what the victim used within it waits on the balance row when it dies.
  const window = { USAGE_EVENT_WINDOW_SECONDS: '1' };
  const victim = await startInstance(db.url, window);
  const { sent } = await writeUntilKilled(victim, '/api/usage/record', { owner, meterSlug: 'tokens', increment: 2 }, 8, () => true);
  const told = async () =>
    Number(
      (
        await sql<{ n: string | null }>(
          db.url,
          `select sum((payload->'data'->>'quantity')::numeric)::text as n from outbox_events
            where type = 'usage.recorded' and payload->'data'->>'owner' = '${owner}'`,
        )
      )[0].n ?? 0,
    );
  // Every sent key once more on a new instance (replays, or first counts), then its sweep tells what waits.
  const next = await startInstance(db.url, window);
  try {
    await pooled(
      sent.map((k) => () => postRetrying(next.url, '/api/usage/record', { owner, meterSlug: 'tokens', increment: 2 }, k)),
      16,
    );
    const used = (await balance(owner)).used;
    expect(used).toBe(2 * sent.length);
    await eventually(async () => (await told()) >= used, 20_000, 'every unit told');
    expect(await told()).toBe(used);
    const [row] = await sql<{ unreported: string; ops: number }>(
      db.url,
      `select unreported::text, unreported_ops as ops from usage_balances where owner = '${owner}' and closed_at is null`,
    );
    expect(row).toEqual({ unreported: '0', ops: 0 });
  } finally {
    await next.stop();
  }
}, 120_000);

it('usage plans, records, meters and the entitlement check stay within their organisation and mode', async () => {
  const other = await seedOrg(db.url, 'usage-other');
  const get = (key: string, path: string) => call(b.url, 'GET', path, { bearer: key });
  // The other organisation has a meter of the same slug and a final period of the same owner.
  expect((await call(a.url, 'POST', '/api/meters', { bearer: other.live, body: { slug: 'tokens', name: 'Theirs' } })).status).toBe(201);
  await call(a.url, 'POST', '/api/credits/grants', { bearer: other.live, body: { owner: 'shared-name', meterSlug: 'tokens', amount: 9 } });
  await call(a.url, 'POST', '/api/usage/consume', { bearer: other.live, body: { owner: 'shared-name', meterSlug: 'tokens', quantity: 4 } });
  await post(a.url, '/api/credits/grants', { owner: 'shared-name', meterSlug: 'tokens', amount: 100 });

  const records = (key: string, status: string) =>
    get(key, `/api/usage-records?owner=shared-name&meterSlug=tokens&status=${status}`).then(
      (r) => (r.body as { data: { count: number }[] }).data,
    );
  expect(await records(org.live, 'current')).toEqual([expect.objectContaining({ count: 0, ownerId: 'shared-name' })]);
  expect(await records(other.live, 'current')).toEqual([expect.objectContaining({ count: 4 })]);
  // The test mode of the same organisation sees neither (its meter does not exist there: 400 naming it).
  const testMode = await get(org.test, '/api/usage-records?owner=shared-name&meterSlug=tokens&status=current');
  expect(testMode.status).toBe(400);
  expect(JSON.stringify(testMode.body)).toContain('meterSlug');
  const meters = (key: string) =>
    get(key, '/api/meters?search=tok').then((r) => (r.body as { data: { name: string }[] }).data.map((m) => m.name));
  expect(await meters(org.live)).toEqual(['Tokens']);
  expect(await meters(other.live)).toEqual(['Theirs']);
  expect(await meters(org.test)).toEqual([]);
  const check = (key: string) =>
    get(key, '/api/entitlements/check?granteeId=nobody&owner=shared-name').then(
      (r) => (r.body as { data: { entitlements: { remaining: number }[] } }).data.entitlements,
    );
  expect(await check(org.live)).toEqual([expect.objectContaining({ type: 'meter', remaining: 100 })]);
  expect(await check(other.live)).toEqual([expect.objectContaining({ type: 'meter', remaining: 5 })]);
  expect(await check(org.test)).toEqual([]);
  // A plan saved with a metered line item counts on the saver's own meter, never another's.
  const saved = await call(b.url, 'POST', '/api/plans/save', {
    bearer: other.live,
    body: {
      productId: other.keys['products.notes'],
      name: 'Metered',
      lineItems: [{ name: 'Tokens', priceType: 'metered', meterSlug: 'tokens', allowance: 10, prices: [] }],
    },
  });
  expect(saved.status).toBe(201);
  const theirs = ((await get(other.live, '/api/meters?search=tokens')).body as { data: { id: string }[] }).data;
  expect((saved.body as { data: { lineItems: { meter: { id: string } }[] } }).data.lineItems[0].meter.id).toBe(theirs[0].id);
  // Another organisation's product cannot be given a usage plan.
  const foreign = await call(b.url, 'POST', '/api/plans/save', {
    bearer: org.live,
    body: { productId: other.keys['products.notes'], name: 'Intruder', lineItems: [{ name: 'T', priceType: 'metered', allowance: 1 }] },
  });
  expect(foreign.status).toBe(403);
});

it('bad usage plan terms, record statuses and record bodies are 400 naming the member, never 500, with nothing written', async () => {
  const productId = org.keys['products.notes'];
  const before = await sql<{ n: number }>(db.url, 'select count(*)::int as n from plans');
  const terms: [Record<string, unknown>, string][] = [
    [{ allowance: -1 }, 'allowance'],
    [{ allowance: 1.5 }, 'allowance'],
    [{ allowance: '1e3' }, 'allowance'],
    [{ allowance: 10 ** 13 }, 'allowance'],
    [{ maxUsage: 'lots' }, 'maxUsage'],
    [{ minUsage: 5, maxUsage: 4 }, 'minUsage'],
    [{ rollover: 'some' }, 'rollover'],
    [{ rollover: { upTo: -3 } }, 'rollover'],
    [{ rollover: { upTo: 3, more: 1 } }, 'rollover'],
  ];
  for (const [bad, member] of terms) {
    const r = await call(a.url, 'POST', '/api/plans/save', {
      bearer: org.live,
      body: { productId, name: 'Fuzz', lineItems: [{ name: 'T', priceType: 'metered', meterSlug: 'fuzz', ...bad }] },
    });
    expect([r.status, JSON.stringify(r.body).includes(member)]).toEqual([400, true]);
  }
  expect(await sql<{ n: number }>(db.url, 'select count(*)::int as n from plans')).toEqual(before);
  for (const q of ['status=pending', 'status=recorded,', 'sort=sideways', 'status=current', 'limit=0', 'after=not-a-cursor'])
    expect((await call(b.url, 'GET', `/api/usage-records?${q}`, { bearer: org.live })).status).toBe(400);
  for (const body of [
    { owner: 'x', meterSlug: 'tokens', increment: 0.5 },
    { owner: 'x', meterSlug: 'tokens', increment: '1' },
    { owner: '', meterSlug: 'tokens', increment: 1 },
  ])
    expect((await post(a.url, '/api/usage/record', body)).status).toBe(400);
  await expectCountersEqualLedger();
});
