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

it('assigns the very seats that seat decrements remove, through two instances: no seat answered as assigned is removed', async () => {
  const sub = await buySeats(a.url, db.url, org, 60, 'locks-owner');
  // Newest first: the seats a decrement removes first (docs/decisions.md), assigned while they are removed.
  const free = await sql<{ id: string }>(
    db.url,
    'select id from licenses where subscription_id = $1 and grantee_id is null order by created_at desc, id desc',
    [sub],
  );
  const decrements = await Promise.all(
    Array.from({ length: 20 }, (_, i) =>
      call(i % 2 ? a.url : b.url, 'PUT', `/subscriptions/${sub}/seats`, { key: org.live, body: { decrement: 1 } }),
    ),
  );
  for (const r of decrements) expect(r.status).toBe(202);
  const assigned: { id: string; grantee: string }[] = [];
  const assign = async (lane: number) => {
    for (let i = lane; i < free.length; i += 4) {
      const grantee = `locks-user-${i}`;
      const r = await call(i % 2 ? b.url : a.url, 'PUT', `/licenses/${free[i].id}`, { key: org.live, body: { granteeId: grantee } });
      expect([200, 404]).toContain(r.status);
      if (r.status === 200) assigned.push({ id: free[i].id, grantee });
    }
  };
  await Promise.all([0, 1, 2, 3].map(assign));
  const ids = decrements.map((r) => (r.body as { eventUuid: string }).eventUuid);
  const statusOf = async (id: string) => ((await call(a.url, 'GET', `/events/${id}`, { key: org.live })).body as { status: string }).status;
  await eventually(
    async () => (await Promise.all(ids.map(statusOf))).every((s) => s === 'success' || s === 'failed'),
    120_000,
    'every event done',
  );
  // Every seat answered 200 is held by its grantee: none was removed under it.
  const held = new Map(
    (
      await sql<{ id: string; grantee_id: string | null }>(db.url, 'select id, grantee_id from licenses where subscription_id = $1', [sub])
    ).map((l) => [l.id, l.grantee_id]),
  );
  const lost = assigned.filter((x) => held.get(x.id) !== x.grantee);
  expect(lost).toEqual([]);
  const subscription = (await call(b.url, 'GET', `/subscriptions/${sub}`, { key: org.live })).body as { quantity: number };
  expect(held.size).toBe(subscription.quantity);
});
