/* The edge, attacked over HTTP (issue #24 points 4, 5, 6, 9): webhook targets in every private
   spelling, slow request bodies, honest clients sharing an address, replayed deferred checkout links. */
import { connect, type Socket } from 'node:net';
import { PRIVATE_WEBHOOK_TARGETS } from '@tollgate/core/testing';
import { call, createDatabase, seedOrg, sql, startInstance, type Instance, type Org } from './harness';

let db: Awaited<ReturnType<typeof createDatabase>>;
let org: Org;
let server: Instance;

beforeAll(async () => {
  db = await createDatabase();
  org = await seedOrg(db.url, 'edge');
  server = await startInstance(db.url, {
    RATE_LIMIT: 'on',
    RATE_LIMIT_AUTH_FAILURES: '30',
    HTTP_REQUEST_TIMEOUT_MS: '2000',
    HTTP_HEADERS_TIMEOUT_MS: '2000',
    HTTP_MAX_CONNECTIONS_PER_ADDRESS: '1000',
  });
});
afterAll(async () => {
  await server?.stop();
  await db?.drop();
});

it('refuses every private spelling of a webhook target at registration (400), and registers none', async () => {
  for (const url of PRIVATE_WEBHOOK_TARGETS) {
    const res = await call(server.url, 'POST', '/api/webhooks', { bearer: org.live, body: { url } });
    expect({ url, status: res.status, text: res.text }).toMatchObject({ url, status: 400, text: expect.stringContaining('private') });
  }
  expect(await sql(db.url, 'select id from webhook_endpoints')).toEqual([]);
});

it('lets 40 concurrent honest clients from one address through, before and after others fail from it', async () => {
  // One product (not a list: lists have their own per-key concurrency limit).
  const path = `/products/${org.keys['products.notes']}`;
  const honest = () =>
    Promise.all(Array.from({ length: 40 }, () => call(server.url, 'GET', path, { key: org.live }).then((r) => r.status)));
  expect(await honest()).toEqual(Array(40).fill(200));
  // One after the other: failures count once answered (concurrent ones in flight may pass the budget together).
  const bad = [];
  for (let i = 0; i < 35; i++) bad.push(await call(server.url, 'GET', path, { key: `live_bad_${i}` }));
  expect(bad.filter((r) => r.status === 401).length).toBe(30);
  expect(bad.filter((r) => r.status === 429).length).toBe(5);
  expect(await honest()).toEqual(Array(40).fill(200));
});

it('closes 500 connections sending a body slowly once the request timeout passes', async () => {
  const { port } = new URL(server.url);
  const sockets: Socket[] = [];
  const drip = setInterval(() => sockets.forEach((s) => s.writable && s.write('x')), 250);
  try {
    const head = `POST /api/products HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${org.live}\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"name":"`;
    const started = Date.now();
    const closed = await Promise.all(
      Array.from({ length: 500 }, () => {
        const s = connect(Number(port), '127.0.0.1', () => s.write(head));
        sockets.push(s);
        return new Promise<{ ms: number; answer: string }>((resolve) => {
          let answer = '';
          s.on('data', (c) => (answer += c));
          s.on('error', () => undefined);
          s.on('close', () => resolve({ ms: Date.now() - started, answer }));
        });
      }),
    );
    expect(closed.filter((c) => c.answer.startsWith('HTTP/1.1 408')).length).toBe(500);
    expect(Math.max(...closed.map((c) => c.ms))).toBeLessThan(15_000);
  } finally {
    clearInterval(drip);
    sockets.forEach((s) => s.destroy());
  }
  // The server still answers.
  expect((await call(server.url, 'GET', '/products', { key: org.live })).status).toBe(200);
}, 60_000);

it('creates one checkout session for 300 anonymous follows of one deferred link', async () => {
  const query =
    'expand=generateCheckoutLinks&successUrl=https://app.example.com/ok&cancelUrl=https://app.example.com/no&granteeId=g&member=m@example.com';
  const product = await call(server.url, 'GET', `/products/${org.keys['products.notes']}?${query}`, {
    key: org.live,
    headers: { version: 'v1' },
  });
  const link = (product.body as { plans: { pricingType: string; checkoutUrl: string }[] }).plans.find((p) => p.pricingType !== 'free')!;
  const path = new URL(link.checkoutUrl).pathname;
  const before = await sql<{ n: string }>(db.url, 'select count(*)::text as n from checkout_sessions');
  const follow = () => fetch(`${server.url}${path}`, { redirect: 'manual' }).then((r) => r.headers.get('location'));
  const locations = new Set<string | null>();
  for (let round = 0; round < 10; round++) (await Promise.all(Array.from({ length: 30 }, follow))).forEach((l) => locations.add(l));
  expect(locations.size).toBe(1);
  const after = await sql<{ n: string }>(db.url, 'select count(*)::text as n from checkout_sessions');
  expect(Number(after[0].n) - Number(before[0].n)).toBe(1);
}, 60_000);
