/* Issue #20 part B: an API key made and revoked through the catalog API (`/api/api-keys`) is
   revoked on every instance as the CLI's revocation is: two server processes on one PostgreSQL,
   the key known (cached) by both, revoked through one, refused by the other within the change
   feed's bound. */
import { call, createDatabase, seedOrg, startInstance, type Instance, type Org } from './harness';

const BOUND_MS = 1000;
/** Timers on a loaded machine fire late (as in revocation.test.ts): the margin for their scheduling. */
const TIMER_LAG_MS = 500;

let db: Awaited<ReturnType<typeof createDatabase>>;
let a: Instance;
let b: Instance;
let org: Org;

beforeAll(async () => {
  db = await createDatabase();
  org = await seedOrg(db.url, 'api-keys');
  const env = { CHANGE_FEED_BOUND_MS: String(BOUND_MS), RUN_WORKER: 'false' };
  a = await startInstance(db.url, env);
  b = await startInstance(db.url, env);
});
afterAll(async () => {
  await a?.stop();
  await b?.stop();
  await db?.drop();
});

const products = (instance: Instance, bearer: string) => call(instance.url, 'GET', '/api/products', { bearer }).then((r) => r.status);

it(`refuses a key revoked through /api/api-keys on every instance within ${BOUND_MS} ms`, async () => {
  for (let round = 0; round < 5; round++) {
    const created = await call(a.url, 'POST', '/api/api-keys', { bearer: org.live, body: { scopes: ['products:read'] } });
    expect(created.status).toBe(201);
    const { id, value } = (created.body as { data: { id: string; value: string } }).data;
    // Known (cached) by both instances.
    for (const instance of [a, b]) for (let i = 0; i < 3; i++) expect(await products(instance, value)).toBe(200);
    expect((await call(b.url, 'DELETE', `/api/api-keys/${id}`, { bearer: org.live })).status).toBe(204);
    const revoked = Date.now();
    let refusedAfter = -1;
    while (Date.now() - revoked < 10_000) {
      if ((await products(a, value)) === 401) {
        refusedAfter = Date.now() - revoked;
        break;
      }
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(refusedAfter).toBeGreaterThanOrEqual(0);
    expect(refusedAfter).toBeLessThanOrEqual(BOUND_MS + TIMER_LAG_MS);
    expect(await products(b, value)).toBe(401);
  }
});

it("keeps the organisation's last * key when two revocations race on two instances (the organisation's row lock)", async () => {
  type Key = { id: string; value: string };
  const starKeys = async (bearer: string) => {
    const listed = await call(a.url, 'GET', '/api/api-keys?limit=100', { bearer });
    return listed.status === 200
      ? (listed.body as { data: { id: string; scopes: string[] }[] }).data.filter((k) => k.scopes.includes('*'))
      : [];
  };
  // Test mode, where the seeded `*` key is the organisation's only one.
  const [seeded] = await starKeys(org.test);
  let survivor: Key = { id: seeded.id, value: org.test };
  for (let round = 0; round < 20; round++) {
    const made = await call(a.url, 'POST', '/api/api-keys', { bearer: survivor.value, body: { name: `race ${round}` } });
    expect(made.status).toBe(201);
    const other = (made.body as { data: Key }).data;
    // At once, on either instance: the survivor revokes the other, and itself. Unserialised, each
    // sees the other key live and both go: no `*` key left.
    const [first, second] = round % 2 ? [a, b] : [b, a];
    const [revokedOther, revokedSelf] = await Promise.all([
      call(first.url, 'DELETE', `/api/api-keys/${other.id}`, { bearer: survivor.value }),
      call(second.url, 'DELETE', `/api/api-keys/${survivor.id}`, { bearer: survivor.value }),
    ]);
    const statuses = [revokedOther.status, revokedSelf.status];
    expect(statuses.filter((s) => s === 204)).toHaveLength(1);
    // Refused as the last `*` key (409), or as a key revoked meanwhile (401).
    expect(statuses.filter((s) => s === 409 || s === 401)).toHaveLength(1);
    survivor = revokedOther.status === 204 ? survivor : other;
    const left = await starKeys(survivor.value);
    expect(left.map((k) => k.id)).toEqual([survivor.id]);
  }
});
