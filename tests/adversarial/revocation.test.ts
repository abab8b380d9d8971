/* Issue #24, points 1, 2, 7 and 8, against two server processes on one PostgreSQL: revoked keys
   stay revoked while the change feed's notifications are dropped and delayed on purpose (a proxy
   in front of the database, hurting only the listening connections), a listener whose route stops
   forwarding without closing, idempotency keys that never cross modes, and kill -9 in the middle
   of idempotent writes. */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { FaultProxy } from '@tollgate/adapter-postgres';
import { call, createDatabase, eventually, seedOrg, sql, startInstance, type Instance, type Org } from './harness';

const BOUND_MS = 1000;
/**
 * What the bound is allowed beyond itself: the feed's check runs on a timer every bound/5 (200 ms)
 * and the key re-validation every bound/2, and on a loaded CI machine timers fire late. The bound
 * is still asserted; only the scheduling of the timers that enforce it gets this margin.
 */
const TIMER_LAG_MS = 500;
const ROUNDS = 20;
const KEYS_PER_ROUND = 50;

let db: Awaited<ReturnType<typeof createDatabase>>;
let proxy: FaultProxy;
let a: Instance;
let b: Instance;
let org: Org;
let orgId: string;

beforeAll(async () => {
  db = await createDatabase();
  org = await seedOrg(db.url, 'revocation');
  [{ id: orgId }] = await sql<{ id: string }>(db.url, 'select id from organisations where name = $1', ['revocation']);
  const target = new URL(db.url);
  // Only the change feeds' connections are hurt; the pools reach the database directly.
  proxy = await FaultProxy.start({ host: target.hostname, port: Number(target.port || 5432) }, { appliesTo: /change-feed/ });
  const env = { CHANGE_FEED_BOUND_MS: String(BOUND_MS), RUN_WORKER: 'false' };
  a = await startInstance(proxy.url(db.url), env);
  b = await startInstance(proxy.url(db.url), env);
});
afterAll(async () => {
  await a?.stop();
  await b?.stop();
  await proxy?.close();
  await db?.drop();
});

/** New live keys of the organisation, written straight to the database (as the CLI would). */
async function newKeys(n: number): Promise<{ id: string; key: string }[]> {
  const keys = Array.from({ length: n }, () => ({ id: randomUUID(), key: `live_${randomBytes(24).toString('base64url')}` }));
  await sql(
    db.url,
    `insert into api_keys (id, organisation_id, name, key_hash, prefix, scopes, is_test, created_at)
     select k.id, $1, 'trial', k.hash, left(k.key, 9), '["*"]'::jsonb, false, now()
     from jsonb_to_recordset($2::jsonb) as k(id uuid, key text, hash text)`,
    [orgId, JSON.stringify(keys.map((k) => ({ ...k, hash: createHash('sha256').update(k.key).digest('hex') })))],
  );
  return keys;
}

/**
 * A request with the key: an express route, or the capability check's fast path (which uses a key
 * held in memory without waiting for a lookup), in turn, so both are proven to refuse in time.
 */
let asked = 0;
const ask = (instance: Instance, key: string) =>
  call(
    instance.url,
    'GET',
    asked++ % 2 === 0 ? '/products' : `/licenses/check?productUuid=${org.keys['products.notes']}&granteeIds=nobody`,
    {
      key,
    },
  ).then((r) => r.status);

it(`refuses every revoked key on both instances within ${BOUND_MS} ms while notifications are dropped and delayed (${ROUNDS * KEYS_PER_ROUND} trials)`, async () => {
  proxy.faults.dropNotifications = 0.5;
  proxy.faults.delayNotificationsMs = 300;
  const latencies: number[] = [];
  const late: string[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const keys = await newKeys(KEYS_PER_ROUND);
    // Each key is known (cached) by both instances.
    for (const instance of [a, b]) {
      const statuses = await Promise.all(keys.flatMap((k) => [ask(instance, k.key), ask(instance, k.key)]));
      // 200 from the route, 204 from the check (the grantee has no capability): both accepted the key.
      expect(statuses.every((s) => s === 200 || s === 204)).toBe(true);
    }
    await sql(db.url, 'update api_keys set revoked_at = now() where id = any($1::uuid[])', [keys.map((k) => k.id)]);
    const committed = Date.now();
    await Promise.all(
      keys.flatMap((k) =>
        [a, b].map(async (instance) => {
          for (;;) {
            const sent = Date.now();
            const status = await ask(instance, k.key);
            if (status === 401) return void latencies.push(sent - committed);
            if (sent - committed > BOUND_MS + TIMER_LAG_MS)
              return void late.push(`${k.id} on ${instance.url}: ${status} ${sent - committed} ms after`);
            await new Promise((r) => setTimeout(r, 100));
          }
        }),
      ),
    );
  }
  latencies.sort((x, y) => x - y);
  console.log(
    `revocation: ${latencies.length} refusals, median ${latencies[latencies.length >> 1]} ms, max ${latencies.at(-1)} ms after commit; ${proxy.dropped} notifications dropped`,
  );
  expect(late).toEqual([]);
  expect(latencies).toHaveLength(ROUNDS * KEYS_PER_ROUND * 2);
  proxy.faults.dropNotifications = 0;
  proxy.faults.delayNotificationsMs = 0;
});

it('says so on /readyz and refuses a revoked key within the bound while a listener stops forwarding without closing', async () => {
  await eventually(async () => (await fetch(`${a.url}/readyz`)).status === 200, 10_000, 'A ready');
  const [k] = await newKeys(1);
  // The route and the check (200, 204: accepted), both holding the key now.
  expect([await ask(a, k.key), await ask(a, k.key)].sort()).toEqual([200, 204]);
  const stalled = Date.now();
  proxy.faults.stalled = true;
  try {
    await eventually(async () => (await fetch(`${a.url}/readyz`)).status === 503, 10_000, 'A not ready');
    const noticed = Date.now() - stalled;
    await sql(db.url, 'update api_keys set revoked_at = now() where id = $1', [k.id]);
    const revoked = Date.now();
    await new Promise((r) => setTimeout(r, BOUND_MS));
    // Both paths on both instances.
    expect([await ask(a, k.key), await ask(a, k.key), await ask(b, k.key), await ask(b, k.key)]).toEqual([401, 401, 401, 401]);
    console.log(`stalled listener: /readyz 503 after ${noticed} ms; revoked key refused ${Date.now() - revoked} ms after commit`);
    expect(noticed).toBeLessThan(BOUND_MS + 1000);
  } finally {
    proxy.faults.stalled = false;
  }
  await eventually(async () => (await fetch(`${a.url}/readyz`)).status === 200, 20_000, 'A ready again');
});

it('never replays an idempotent write across modes, with the same key and body through either instance', async () => {
  const key = `mode-${randomUUID()}`;
  const post = (instance: Instance, bearer: string) =>
    call(instance.url, 'POST', '/api/products', { bearer, body: { name: 'Moded' }, headers: { 'idempotency-key': key } });
  const live = await post(a, org.live);
  const test = await post(b, org.test);
  expect([live.status, test.status]).toEqual([201, 201]);
  expect(test.headers.get('idempotent-replayed')).toBeNull();
  const liveId = (live.body as { data: { id: string } }).data.id;
  const testId = (test.body as { data: { id: string } }).data.id;
  expect(testId).not.toBe(liveId);
  const rows = await sql<{ id: string; is_test: boolean }>(db.url, 'select id, is_test from products where id = any($1::uuid[])', [
    [liveId, testId],
  ]);
  expect(Object.fromEntries(rows.map((r) => [r.id, r.is_test]))).toEqual({ [liveId]: false, [testId]: true });
  // Each mode replays its own answer, on the other instance too.
  expect((await post(b, org.live)).body).toEqual(live.body);
  expect((await post(a, org.test)).body).toEqual(test.body);
});

it('does idempotent work once across kill -9 and retries: the answer commits with the work', async () => {
  const names: string[] = [];
  let stop = false;
  let n = 0;
  const answered = new Set<string>();
  const writer = async () => {
    while (!stop) {
      const name = `crash-idem-${n++}`;
      names.push(name);
      try {
        const r = await call(a.url, 'POST', '/api/products', { bearer: org.live, body: { name }, headers: { 'idempotency-key': name } });
        if (r.status === 201) answered.add(name);
      } catch {
        // the connection died with the server
      }
    }
  };
  const writers = Array.from({ length: 6 }, writer);
  await new Promise((r) => setTimeout(r, 1500));
  await a.kill();
  stop = true;
  await Promise.all(writers);
  a = await startInstance(proxy.url(db.url), { CHANGE_FEED_BOUND_MS: String(BOUND_MS), RUN_WORKER: 'false' });
  // Every request retried with its key: the answered ones replay, the others run or replay.
  for (const name of names) {
    const r = await call(b.url, 'POST', '/api/products', { bearer: org.live, body: { name }, headers: { 'idempotency-key': name } });
    expect(r.status).toBe(201);
    if (answered.has(name)) expect(r.headers.get('idempotent-replayed')).toBe('true');
  }
  const rows = await sql<{ name: string; n: number }>(
    db.url,
    'select name, count(*)::int as n from products where name = any($1) group by name',
    [names],
  );
  console.log(`kill -9 under idempotent writes: ${names.length} keys, ${answered.size} answered before the kill`);
  expect(rows.filter((r) => r.n !== 1)).toEqual([]);
  expect(rows).toHaveLength(names.length);
});
