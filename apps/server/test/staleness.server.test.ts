import {
  builtEntry,
  createTestWorld,
  freePort,
  seedOrganisation,
  startProcess,
  type Running,
  type TestWorld,
} from '@tollgate/runtime/testing';

// Processes start on a shared, busy machine: give them time.
jest.setTimeout(180_000);

// Two server processes on one PostgreSQL (issue 22): a change committed through B is seen by A's
// check (whose index holds every license), and once seen, never a stale answer after; a check
// that starts a whole feed bound after the commit is never stale. Ordering, not speed: the
// figures are `npm run bench`'s.
const SERVER = builtEntry('apps/server/dist/main.js');
const SECRET = 'test master secret, not for production';
const BOUND_MS = 1000;

let world: TestWorld;
let a: Running;
let b: Running;
let org: Awaited<ReturnType<typeof seedOrganisation>>;

beforeAll(async () => {
  world = await createTestWorld({ kind: 'postgres' });
  org = await seedOrganisation(world, 'staleness');
  // Licenses before the servers start: the product is in each instance's index.
  await world.core.licenses.createAdHoc(
    org.tenant,
    Array.from({ length: 20 }, (_, i) => ({
      planUuid: org.keys['plans.notes.free'],
      member: `m${i}@example.com`,
      granteeId: `seeded-${i}`,
    })),
  );
  const env = { DATABASE_URL: world.db.url, TOLLGATE_SECRET: SECRET, CHANGE_FEED_BOUND_MS: String(BOUND_MS) };
  [a, b] = await Promise.all([startProcess(SERVER, env, await freePort()), startProcess(SERVER, env, await freePort())]);
});
afterAll(async () => {
  await a?.stop();
  await b?.stop();
  await world?.close();
});

const checkOn = async (server: Running, grantee: string) => {
  const res = await fetch(`${server.url}/licenses/check?productUuid=${org.keys['products.notes']}&granteeIds=${grantee}`, {
    headers: { 'x-api-key': org.readOnlyKey },
  });
  await res.arrayBuffer();
  return res.status;
};

async function onB(method: 'POST' | 'PUT', body: unknown) {
  const res = await fetch(`${b.url}/licenses`, {
    method,
    headers: { 'x-api-key': org.liveKey, 'content-type': 'application/json', ...(method === 'PUT' ? { version: 'v1' } : {}) },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  expect([200, 201]).toContain(res.status);
  return JSON.parse(text) as { uuid?: string } | { uuid: string }[];
}

/**
 * Asks A again and again after a change committed through B (`committedAt`): the answers switch
 * from `before` to `after` once and never back, and any check started a feed bound after the
 * commit answers `after`.
 */
async function watch(grantee: string, committedAt: number, before: number, after: number): Promise<number[]> {
  const seen: { status: number; startedAt: number }[] = [];
  for (;;) {
    const startedAt = performance.now();
    const status = await checkOn(a, grantee);
    seen.push({ status, startedAt });
    if (status === after && seen.filter((s) => s.status === after).length >= 5) break;
    if (startedAt - committedAt > 30_000) throw new Error(`A never saw ${grantee}'s change`);
  }
  const statuses = seen.map((s) => s.status);
  const first = statuses.indexOf(after);
  expect(statuses.slice(0, first).every((s) => s === before)).toBe(true);
  expect(statuses.slice(first).every((s) => s === after)).toBe(true);
  for (const s of seen) if (s.startedAt - committedAt >= BOUND_MS) expect(s.status).toBe(after);
  return statuses;
}

it('sees a license created or taken away on the other instance, and never answers stale after, under concurrent checks', async () => {
  // Other grantees' checks keep A busy meanwhile.
  let busy = true;
  const load = Array.from({ length: 8 }, async (_, i) => {
    for (let n = 0; busy; n++) await checkOn(a, n % 2 ? `seeded-${n % 20}` : `load-${i}-${n % 50}`);
  });
  try {
    for (let i = 0; i < 10; i++) {
      const grantee = `fresh-${i}`;
      // A holds "nothing" for the grantee first (the index's answer, then the kept answer).
      expect(await checkOn(a, grantee)).toBe(204);
      expect(await checkOn(a, grantee)).toBe(204);
      const created = (await onB('POST', {
        planUuid: org.keys['plans.notes.free'],
        member: `${grantee}@example.com`,
        granteeId: grantee,
      })) as {
        uuid: string;
      };
      await watch(grantee, performance.now(), 204, 200);
      // Taken away on B: A stops granting, and never grants again.
      await onB('PUT', [{ uuid: created.uuid, granteeId: null }]);
      await watch(grantee, performance.now(), 200, 204);
    }
  } finally {
    busy = false;
    await Promise.all(load);
  }
  // A answered from its index all along (its metrics say so).
  const metrics = await (await fetch(`${a.url}/metrics`)).text();
  expect(metrics).toMatch(/tollgate_check_cache_live 1/);
  expect(metrics).toMatch(/tollgate_check_index_in_use 1/);
  expect(metrics).toMatch(/tollgate_check_index_licenses 20\b/);
});
