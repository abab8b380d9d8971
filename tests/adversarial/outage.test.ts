/* Issue #24, point 3: a database outage under load is not 500 everywhere. A PostgreSQL of this
   test's own (never the shared server) is stopped abruptly (immediate shutdown: no checkpoint,
   crash recovery on restart) while checks and writes run, and started again: no 500; writes answer
   503 with Retry-After in each generation's shape; checks are answered from memory within the
   grace, marked by a header (and counted by a metric), then 503; all is exact again afterwards. */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { call, eventually, seedOrg, sql, startInstance, type Instance, type Org } from './harness';

/** PostgreSQL's server programs: PG_BIN, or the newest /usr/lib/postgresql/<version>/bin that has initdb. */
function serverPrograms(): string {
  if (process.env.PG_BIN) return process.env.PG_BIN;
  const root = '/usr/lib/postgresql';
  const found = (fs.existsSync(root) ? fs.readdirSync(root) : [])
    .sort((x, y) => Number(y) - Number(x))
    .map((v) => path.join(root, v, 'bin'))
    .find((bin) => fs.existsSync(path.join(bin, 'initdb')));
  if (!found) throw new Error('the outage suite starts a PostgreSQL of its own: install the server programs or set PG_BIN');
  return found;
}
const BIN = serverPrograms();
const GRACE_S = 4;
const OUTAGE_MS = 7000;

let dir: string;
let port: number;
let url: string;
let server: Instance;
let org: Org;

// PostgreSQL refuses to run as root: as root, its programs run as the postgres user.
const asPostgres = (cmd: string, args: string[]) =>
  process.getuid?.() === 0
    ? execFileSync('runuser', ['-u', 'postgres', '--', `${BIN}/${cmd}`, ...args], { stdio: 'pipe' })
    : execFileSync(`${BIN}/${cmd}`, args, { stdio: 'pipe' });
const pgStart = () =>
  asPostgres('pg_ctl', ['-D', dir, '-w', '-l', path.join(dir, 'log'), '-o', `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1`, 'start']);
const pgCrash = () => asPostgres('pg_ctl', ['-D', dir, '-m', 'immediate', 'stop']);
const freePort = () =>
  new Promise<number>((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const p = (s.address() as { port: number }).port;
      s.close(() => resolve(p));
    });
  });

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tollgate-outage-'));
  fs.chmodSync(dir, 0o777);
  fs.mkdirSync(path.join(dir, 'data'));
  if (process.getuid?.() === 0) execFileSync('chown', ['postgres', path.join(dir, 'data')]);
  dir = path.join(dir, 'data');
  asPostgres('initdb', ['-D', dir, '-A', 'trust', '-U', 'postgres']);
  // A port found free may be taken by another process before PostgreSQL binds it: try another.
  for (let attempt = 1; ; attempt++) {
    port = await freePort();
    try {
      pgStart();
      break;
    } catch (e) {
      if (attempt === 3) throw e;
    }
  }
  url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  org = await seedOrg(url, 'outage');
  server = await startInstance(url, { CHECK_OUTAGE_GRACE_SECONDS: String(GRACE_S), RUN_WORKER: 'false' });
});
afterAll(async () => {
  await server?.stop();
  try {
    pgCrash();
  } catch {
    // already stopped
  }
  fs.rmSync(path.dirname(dir), { recursive: true, force: true });
});

it('answers writes 503 with Retry-After and checks from memory within the grace, then 503, and never 500', async () => {
  const free = org.keys['plans.notes.free'];
  const product = org.keys['products.notes'];
  await call(server.url, 'POST', '/licenses', {
    key: org.live,
    body: { planUuid: free, member: 'm@example.com', granteeId: 'outage-ann' },
  });
  // v1's call and SDK 5's (`version: v2`, its own shape): both on the check's fast path, both answered from memory.
  const check = (v2 = false) =>
    call(server.url, 'GET', `/licenses/check?productUuid=${product}&granteeIds=outage-ann`, {
      key: org.live,
      headers: v2 ? { version: 'v2' } : undefined,
    });
  expect((await check()).status).toBe(200);
  expect((await check()).headers.get('x-tollgate-from-memory')).toBeNull();

  type Seen = {
    at: number;
    /** What a write made: the legacy license's grantee, the catalog product's name. */
    made?: string;
    kind: 'check' | 'v2 check' | 'legacy write' | 'catalog write';
    status: number;
    fromMemory: boolean;
    retryAfter: string | null;
    body: unknown;
  };
  const seen: Seen[] = [];
  let stop = false;
  let n = 0;
  const load = async (kind: Seen['kind']) => {
    while (!stop) {
      // Classified before / during / after the outage by when it was SENT (its answer may come later).
      const sentAt = Date.now();
      const made = kind === 'legacy write' ? `outage-${n++}` : kind === 'catalog write' ? `outage ${n++}` : undefined;
      const r =
        kind === 'check' || kind === 'v2 check'
          ? await check(kind === 'v2 check')
          : kind === 'legacy write'
            ? await call(server.url, 'POST', '/licenses', {
                key: org.live,
                body: { planUuid: free, member: 'm@example.com', granteeId: made },
              })
            : await call(server.url, 'POST', '/api/products', { bearer: org.live, body: { name: made } });
      seen.push({
        at: sentAt,
        made,
        kind,
        status: r.status,
        fromMemory: r.headers.get('x-tollgate-from-memory') !== null,
        retryAfter: r.headers.get('retry-after'),
        body: r.body,
      });
      await new Promise((res) => setTimeout(res, 20));
    }
  };
  const loaders = [load('check'), load('v2 check'), load('legacy write'), load('catalog write')];
  await new Promise((r) => setTimeout(r, 1000));
  const down = Date.now();
  pgCrash();
  await new Promise((r) => setTimeout(r, OUTAGE_MS));
  const up = Date.now();
  pgStart();
  await eventually(async () => seen.some((s) => s.at > up && s.kind === 'legacy write' && s.status === 201), 60_000, 'writes again');
  await new Promise((r) => setTimeout(r, 1000));
  stop = true;
  await Promise.all(loaders);

  const during = seen.filter((s) => s.at > down + 200 && s.at < up);
  const counts: Record<string, number> = {};
  for (const s of seen)
    counts[`${s.kind} ${s.status}${s.fromMemory ? ' (memory)' : ''}`] =
      (counts[`${s.kind} ${s.status}${s.fromMemory ? ' (memory)' : ''}`] ?? 0) + 1;
  console.log(`outage of ${OUTAGE_MS} ms, grace ${GRACE_S} s: ${JSON.stringify(counts)}`);

  // No 500 at any time: only what the contract and the outage policy allow.
  expect(seen.filter((s) => s.status >= 500 && s.status !== 503)).toEqual([]);
  // Writes while down: 503, Retry-After, each generation's own error shape.
  const writes = during.filter((s) => s.kind !== 'check' && s.kind !== 'v2 check');
  expect(writes.length).toBeGreaterThan(0);
  for (const w of writes) {
    expect(w.status).toBe(503);
    expect(w.retryAfter).toMatch(/^\d+$/);
    if (w.kind === 'legacy write') expect(w.body).toMatchObject({ code: 'DATABASE_UNAVAILABLE', error: expect.any(String) });
    else expect(w.body).toMatchObject({ title: 'Service Unavailable', detail: expect.any(String) });
  }
  // Checks: from memory (marked) within the grace after the outage began, 503 after it.
  const checks = during.filter((s) => s.kind === 'check' || s.kind === 'v2 check');
  const early = checks.filter((s) => s.at < down + GRACE_S * 1000 - 500);
  const late = checks.filter((s) => s.at > down + GRACE_S * 1000 + 1500);
  expect(early.length).toBeGreaterThan(0);
  expect(late.length).toBeGreaterThan(0);
  for (const c of early) expect([c.status, c.fromMemory]).toEqual([200, true]);
  expect(early.filter((c) => c.kind === 'v2 check').length).toBeGreaterThan(0);
  for (const c of early.filter((e) => e.kind === 'v2 check'))
    expect(c.body).toMatchObject({
      capabilities: [expect.objectContaining({ capability: expect.any(String) })],
      signature: expect.any(String),
    });
  for (const c of late) expect([c.status, c.retryAfter !== null]).toEqual([503, true]);
  // Back: exact answers from the database again, unmarked.
  const after = await check();
  expect([after.status, after.headers.get('x-tollgate-from-memory')]).toEqual([200, null]);
  const metrics = await (await fetch(`${server.url}/metrics`)).text();
  expect(Number(/^tollgate_check_answered_from_memory (\d+)/m.exec(metrics)?.[1])).toBeGreaterThan(0);
  // Every acknowledged write is there, once. A write that answered 503 may be there too (its
  // COMMIT cut off by the crash), but only if its answer said so ("may have been applied"): none
  // that said "nothing was changed".
  const stored = {
    'legacy write': (await sql<{ v: string }>(url, "select grantee_id as v from licenses where grantee_id like 'outage-%'")).map(
      (r) => r.v,
    ),
    'catalog write': (await sql<{ v: string }>(url, "select name as v from products where name like 'outage %'")).map((r) => r.v),
  };
  const errorOf = (s: Seen) => {
    const b = s.body as { error?: string; detail?: string } | undefined;
    return b?.error ?? b?.detail ?? '';
  };
  for (const kind of ['legacy write', 'catalog write'] as const) {
    const writes = seen.filter((s) => s.kind === kind);
    const there = stored[kind];
    expect(new Set(there).size).toBe(there.length);
    expect(writes.filter((s) => s.status === 201 && !there.includes(s.made as string))).toEqual([]);
    expect(writes.filter((s) => s.status !== 201 && there.includes(s.made as string) && !/may have been applied/.test(errorOf(s)))).toEqual(
      [],
    );
  }
});
