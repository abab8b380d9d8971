/* kill -9 in the middle of writes: every acknowledged write survives, nothing is half-written, and
   queued changes finish exactly once after a restart. */
import { buySeats, call, createDatabase, eventually, seedOrg, sql, startInstance, type Instance, type Org } from './harness';

let db: Awaited<ReturnType<typeof createDatabase>>;
let server: Instance;
let org: Org;
// Short leases, so that the restarted instance takes over what the killed one held without a long wait.
const env = { EVENT_LEASE_SECONDS: '3', WORKER_INTERVAL_MS: '100' };

beforeAll(async () => {
  db = await createDatabase();
  server = await startInstance(db.url, env);
  org = await seedOrg(db.url, 'crash');
});
afterAll(async () => {
  await server?.stop();
  await db?.drop();
});

it('keeps every acknowledged license and seat change across kill -9 and applies each queued change once', async () => {
  const sub = await buySeats(server.url, db.url, org, 10, 'crash-owner');
  const licenses: string[] = [];
  const events: string[] = [];
  let n = 0;
  let stop = false;
  const writer = async (kind: 'license' | 'seat') => {
    while (!stop) {
      const i = n++;
      try {
        if (kind === 'license') {
          const grantee = `crash-${i}`;
          const r = await call(server.url, 'POST', '/licenses', {
            key: org.live,
            body: { planUuid: org.keys['plans.notes.free'], member: 'm@example.com', granteeId: grantee },
          });
          if (r.status === 201) licenses.push(grantee);
        } else {
          const r = await call(server.url, 'POST', `/subscriptions/${sub}/seats`, { key: org.live, body: { increment: 1 } });
          if (r.status === 202) events.push((r.body as { eventUuid: string }).eventUuid);
        }
      } catch {
        // The connection died with the process: not acknowledged.
      }
    }
  };
  const writers = [writer('license'), writer('license'), writer('seat'), writer('seat')];
  await new Promise((r) => setTimeout(r, 1500));
  await server.kill();
  stop = true;
  await Promise.all(writers);
  expect(licenses.length).toBeGreaterThan(10);
  expect(events.length).toBeGreaterThan(5);

  server = await startInstance(db.url, env);
  // Every acknowledged license is there, once.
  const found = await sql<{ grantee_id: string; n: number }>(
    db.url,
    'select grantee_id, count(*)::int as n from licenses where grantee_id = any($1) group by grantee_id',
    [licenses],
  );
  expect(found.length).toBe(licenses.length);
  expect(found.every((r) => r.n === 1)).toBe(true);
  // Every accepted seat change finishes, exactly once: the acknowledged ones and any the killed
  // instance queued without answering (one it had leased is taken over when its lease expires, so
  // the counts below are read only once nothing of the subscription is still open).
  await eventually(
    async () => {
      const [open] = await sql<{ n: number }>(
        db.url,
        "select count(*)::int as n from events where (id = any($1) or subscription_id = $2) and status not in ('success', 'failed')",
        [events, sub],
      );
      return open.n === 0;
    },
    60_000,
    'every accepted seat change done',
  );
  const [ok] = await sql<{ n: number }>(db.url, "select count(*)::int as n from events where id = any($1) and status = 'success'", [
    events,
  ]);
  const [extra] = await sql<{ n: number }>(
    db.url,
    "select count(*)::int as n from events where subscription_id = $1 and status = 'success' and not (id = any($2))",
    [sub, events],
  );
  const applied = ok.n + extra.n;
  const subscription = (await call(server.url, 'GET', `/subscriptions/${sub}`, { key: org.live })).body as { quantity: number };
  const [rows] = await sql<{ n: number }>(db.url, 'select count(*)::int as n from licenses where subscription_id = $1', [sub]);
  // Nothing half-written: the subscription's quantity and its license rows agree with the applied changes.
  expect(subscription.quantity).toBe(10 + applied);
  expect(rows.n).toBe(10 + applied);
});
