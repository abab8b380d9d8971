/* Two instances on one database, many writers at once: nothing lost, nothing doubled. */
import { buySeats, call, createDatabase, eventually, seedOrg, sql, startInstance, type Instance, type Org } from './harness';

let db: Awaited<ReturnType<typeof createDatabase>>;
let a: Instance;
let b: Instance;
let org: Org;

beforeAll(async () => {
  db = await createDatabase();
  a = await startInstance(db.url);
  b = await startInstance(db.url);
  org = await seedOrg(db.url, 'concurrency');
});
afterAll(async () => {
  await Promise.all([a?.stop(), b?.stop()]);
  await db?.drop();
});

it('applies 300 mixed seat changes through two instances: quantity = license rows = what the accepted events say', async () => {
  const sub = await buySeats(a.url, db.url, org, 100, 'seats-owner');
  // Increments of 1 to 3 and decrements of 1, through both instances at once; some decrements may be refused at request time.
  const changes: ({ increment: number } | { decrement: number })[] = Array.from({ length: 300 }, (_, i) =>
    i % 3 === 2 ? { decrement: 1 } : { increment: 1 + (i % 3) },
  );
  const answers = await Promise.all(
    changes.map((c, i) => {
      const base = i % 2 === 0 ? a.url : b.url;
      return 'increment' in c
        ? call(base, 'POST', `/subscriptions/${sub}/seats`, { key: org.live, body: c })
        : call(base, 'PUT', `/subscriptions/${sub}/seats`, { key: org.live, body: c });
    }),
  );
  for (const r of answers) expect([202, 400]).toContain(r.status);
  const accepted = answers.map((r, i) => ({ r, c: changes[i] })).filter((x) => x.r.status === 202);
  expect(accepted.length).toBeGreaterThan(250);
  const events = accepted.map((x) => ({ id: (x.r.body as { eventUuid: string }).eventUuid, c: x.c }));
  const statusOf = async (id: string) => ((await call(a.url, 'GET', `/events/${id}`, { key: org.live })).body as { status: string }).status;
  await eventually(
    async () => (await Promise.all(events.map((e) => statusOf(e.id)))).every((s) => s === 'success' || s === 'failed'),
    120_000,
    'every event done',
  );
  const done = await Promise.all(events.map(async (e) => ({ ...e, status: await statusOf(e.id) })));
  const expected =
    100 + done.filter((e) => e.status === 'success').reduce((n, e) => n + ('increment' in e.c ? e.c.increment : -e.c.decrement), 0);
  const subscription = (await call(b.url, 'GET', `/subscriptions/${sub}`, { key: org.live })).body as { quantity: number };
  const count = (await call(a.url, 'GET', `/licenses/count?subscriptionUuid=${sub}`, { key: org.live })).body as { count: number };
  const [rows] = await sql<{ n: number }>(db.url, 'select count(*)::int as n from licenses where subscription_id = $1', [sub]);
  expect(subscription.quantity).toBe(expected);
  expect(count.count).toBe(expected);
  expect(rows.n).toBe(expected);
  // Each event applied once: its attempts recorded, none left pending.
  const [pending] = await sql<{ n: number }>(
    db.url,
    "select count(*)::int as n from events where subscription_id = $1 and status in ('queued', 'pending')",
    [sub],
  );
  expect(pending.n).toBe(0);
});

it('creates one record from 50 concurrent same-key catalog POSTs split across the two instances', async () => {
  const key = `adv-${Date.now()}`;
  const answers = await Promise.all(
    Array.from({ length: 50 }, (_, i) =>
      call(i % 2 ? a.url : b.url, 'POST', '/api/products', {
        bearer: org.live,
        body: { name: 'raced twice' },
        headers: { 'idempotency-key': key },
      }),
    ),
  );
  for (const r of answers) expect([201, 409]).toContain(r.status);
  const ids = new Set(answers.filter((r) => r.status === 201).map((r) => (r.body as { data: { id: string } }).data.id));
  expect(ids.size).toBe(1);
  const [rows] = await sql<{ n: number }>(db.url, "select count(*)::int as n from products where name = 'raced twice'");
  expect(rows.n).toBe(1);
});
