import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createTestWorld, seedOrganisation, type SeededOrg, type TestWorld } from '@tollgate/runtime/testing';
import { createServerApp, createServerHttp, type ServerApp } from '../src';

// The consume's fast path must answer exactly what the catalog router answers: every request
// below goes to a server with the fast path and to one without it (same runtime), and the raw
// answers are compared byte for byte. A consume changes a balance, so a happy-path pair uses two
// owners granted the same units (names of the same length), and the owner is the only difference.

interface Raw {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

let world: TestWorld;
let org: SeededOrg;
let fast: ServerApp;
const servers: ReturnType<typeof createServerHttp>[] = [];
let fastBase: string;
let routerBase: string;
let scopelessKey: string;

async function listen(app: Parameters<typeof createServerHttp>[0]): Promise<string> {
  const server = createServerHttp(app);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** A raw POST of `body` as given (chunked when `chunked`, else with its Content-Length). */
function post(base: string, path: string, headers: Record<string, string>, body: string, chunked = false): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const length: Record<string, string> = chunked ? {} : { 'content-length': String(Buffer.byteLength(body)) };
    const req = httpRequest(`${base}${path}`, { method: 'POST', headers: { 'x-request-id': 'same-id', ...length, ...headers } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
    });
    req.on('error', reject);
    if (chunked) {
      req.write(body.slice(0, 3));
      req.end(body.slice(3));
    } else req.end(body);
  });
}

const compared = (r: Raw) => ({
  status: r.status,
  body: r.body,
  'content-type': r.headers['content-type'],
  'content-length': r.headers['content-length'],
  'x-request-id': r.headers['x-request-id'],
  'retry-after': r.headers['retry-after'],
});

const json = { 'content-type': 'application/json' };
const bearer = (key: string) => ({ ...json, authorization: `Bearer ${key}` });
const consume = (owner: string, quantity: unknown = 7, meterSlug = 'tokens') => JSON.stringify({ owner, meterSlug, quantity });

beforeAll(async () => {
  world = await createTestWorld();
  org = await seedOrganisation(world, 'usage-fast-path-org');
  await world.core.usage.createMeter(org.tenant, { slug: 'tokens', name: 'Tokens' });
  for (const owner of ['fast-a', 'rout-a', 'fast-b', 'rout-b', 'fast-k', 'rout-k'])
    await world.core.usage.grant(org.tenant, { owner, meterSlug: 'tokens', amount: 20 });
  scopelessKey = (await world.core.apiKeys.create({ organisation: 'usage-fast-path-org', scopes: ['usage:read'], isTest: false }))
    .plaintext;
  fast = createServerApp(world);
  fastBase = await listen(fast);
  routerBase = await listen(createServerApp(world, { usageFastPath: false }));
});

afterAll(async () => {
  await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
  await world?.close();
});

describe('the consume fast path', () => {
  it('answers consumes itself (allowed, then denied) with the same status, headers and bytes as the router', async () => {
    for (const [suffix, headers] of [
      ['a', bearer(org.liveKey)],
      ['b', { ...bearer(org.liveKey), authorization: `bearer   ${org.liveKey}  ` }],
    ] as const) {
      for (let i = 0; i < 4; i++) {
        const before = fast.usageFastPathStats().served;
        const a = await post(fastBase, '/api/usage/consume', headers, consume(`fast-${suffix}`));
        const b = await post(routerBase, '/api/usage/consume', headers, consume(`rout-${suffix}`));
        expect(compared(a)).toEqual({ ...compared(b), body: b.body.replace(`rout-${suffix}`, `fast-${suffix}`) });
        expect(a.status).toBe(200);
        expect(fast.usageFastPathStats().served).toBe(before + 1);
        // 20 units: 7, 7, then denied twice with 6 left.
        expect(JSON.parse(a.body)).toMatchObject({ type: 'object', data: { allowed: i < 2, remaining: i < 2 ? 13 - 7 * i : 6 } });
      }
    }
  });

  it('replays an idempotency key and refuses it with another body (409), as the router does', async () => {
    const key = (k: string) => ({ ...bearer(org.liveKey), 'idempotency-key': k });
    for (const [owner, k] of [
      ['fast-k', 'fk-1'],
      ['rout-k', 'rk-1'],
    ]) {
      const base = owner.startsWith('fast') ? fastBase : routerBase;
      const first = await post(base, '/api/usage/consume', key(k), consume(owner, 3));
      const again = await post(base, '/api/usage/consume', key(k), consume(owner, 3));
      expect(again.body).toBe(first.body);
      expect(JSON.parse(again.body)).toMatchObject({ data: { used: 3 } });
    }
    const before = fast.usageFastPathStats();
    const a = await post(fastBase, '/api/usage/consume', key('fk-1'), consume('fast-k', 4));
    const b = await post(routerBase, '/api/usage/consume', key('rk-1'), consume('rout-k', 4));
    expect(compared(a)).toEqual(compared(b));
    expect(a.status).toBe(409);
    expect(fast.usageFastPathStats().served).toBe(before.served + 1);
  });

  it('answers an error of the consume itself (an unknown meter, a quantity out of bounds) in the catalog shape, as the router does', async () => {
    for (const body of [
      consume('fast-a', 1, 'no_such_meter'),
      consume('fast-a', 10 ** 16),
      consume('fast-a', 0),
      consume('fast-a', 1, 'Bad Slug'),
      // A fraction is well formed (decimal meters take one); this meter's scale of 0 refuses it.
      consume('fast-a', 1.5),
    ]) {
      const before = fast.usageFastPathStats();
      const [a, b] = [
        await post(fastBase, '/api/usage/consume', bearer(org.liveKey), body),
        await post(routerBase, '/api/usage/consume', bearer(org.liveKey), body),
      ];
      expect({ sent: body, ...compared(a) }).toEqual({ sent: body, ...compared(b) });
      expect(a.status).toBe(400);
      expect(fast.usageFastPathStats().served).toBe(before.served + 1);
    }
  });

  it('answers a bad idempotency-key (empty, too long) as the router does, taking nothing', async () => {
    for (const k of ['', 'k'.repeat(300)]) {
      const headers = { ...bearer(org.liveKey), 'idempotency-key': k };
      const before = fast.usageFastPathStats();
      const [a, b] = [
        await post(fastBase, '/api/usage/consume', headers, consume('fast-a', 1)),
        await post(routerBase, '/api/usage/consume', headers, consume('fast-a', 1)),
      ];
      expect({ k, ...compared(a) }).toEqual({ k, ...compared(b) });
      expect(a.status).toBe(400);
      expect(fast.usageFastPathStats().served).toBe(before.served + 1);
    }
    const balance = await world.core.usage.balances(org.tenant, 'fast-a');
    expect(balance.map((b) => b.balance.used)).toEqual([14n]);
  });

  it('leaves everything but a well-formed consume of a known key to the router, which answers it as before', async () => {
    const ok = consume('nobody-yet', 1, 'no_such_meter');
    const cases: [Record<string, string>, string, number, boolean?][] = [
      [json, ok, 401],
      [{ ...json, authorization: 'Bearer not-a-key' }, ok, 401],
      [{ ...json, authorization: 'Basic abc' }, ok, 401],
      [bearer(scopelessKey), ok, 403],
      [{ ...bearer(org.liveKey), 'content-type': 'text/plain' }, ok, 400],
      [{ ...bearer(org.liveKey), 'content-type': 'application/json; charset=utf-8' }, ok, 400],
      [bearer(org.liveKey), ok, 400, true],
      [bearer(org.liveKey), JSON.stringify({ owner: 'x'.repeat(5000), meterSlug: 'tokens', quantity: 1 }), 400],
      // Read, then left to the router with its bytes:
      [bearer(org.liveKey), '{"owner": "fast-a", "meterSlug": "tokens", "quantity": 1', 400],
      [bearer(org.liveKey), `{"owner": ${'['.repeat(40)}${']'.repeat(40)}}`, 400],
      [bearer(org.liveKey), '"just a string"', 400],
      [bearer(org.liveKey), JSON.stringify({ owner: 'fast-a', meterSlug: 'tokens' }), 400],
      [bearer(org.liveKey), JSON.stringify({ owner: 'fast-a', meterSlug: 'tokens', quantity: 1, extra: true }), 400],
      [bearer(org.liveKey), JSON.stringify({ owner: 'fast-a', meterSlug: 'tokens', quantity: '1' }), 400],
      [bearer(org.liveKey), JSON.stringify({ owner: 'fast\u0000a', meterSlug: 'tokens', quantity: 1 }), 400],
      [bearer(org.liveKey), '\ufeff' + consume('fast-a', 1, 'no_such_meter'), 400],
    ];
    for (const [headers, body, status, chunked] of cases) {
      const before = fast.usageFastPathStats();
      const [a, b] = [
        await post(fastBase, '/api/usage/consume', headers, body, chunked),
        await post(routerBase, '/api/usage/consume', headers, body, chunked),
      ];
      expect({ sent: body, headers, ...compared(a) }).toEqual({ sent: body, headers, ...compared(b) });
      expect({ body, status: a.status }).toEqual({ body, status });
      expect({ body, headers, ...fast.usageFastPathStats() }).toEqual({ body, headers, served: before.served, passed: before.passed + 1 });
    }
    // Nothing of those was taken.
    const balance = await world.core.usage.balances(org.tenant, 'fast-a');
    expect(balance.map((b) => b.balance.used)).toEqual([14n]);
  });

  it('does not take other spellings of the path, which the router serves', async () => {
    const before = fast.usageFastPathStats();
    for (const path of ['/api/usage/consume/', '/api/usage/consume?x=1']) {
      const body = consume('fast-a', 1, 'no_such_meter');
      const [a, b] = [await post(fastBase, path, bearer(org.liveKey), body), await post(routerBase, path, bearer(org.liveKey), body)];
      expect(compared(a)).toEqual(compared(b));
      expect(a.status).toBe(400);
    }
    expect(fast.usageFastPathStats()).toEqual(before);
  });
});

describe('the record fast path', () => {
  const record = (owner: string, increment: unknown = 5) => JSON.stringify({ owner, meterSlug: 'tokens', increment });

  it('answers records itself (204, or 200 with the balance when asked) with the same status, headers and bytes as the router', async () => {
    for (const headers of [bearer(org.liveKey), { ...bearer(org.liveKey), prefer: 'return=representation' }] as Record<string, string>[]) {
      for (let i = 0; i < 2; i++) {
        const before = fast.usageFastPathStats().served;
        const a = await post(fastBase, '/api/usage/record', headers, record('fast-r'));
        const b = await post(routerBase, '/api/usage/record', headers, record('rout-r'));
        expect({ headers, ...compared(a) }).toEqual({ headers, ...compared(b), body: b.body.replace('rout-r', 'fast-r') });
        expect(a.status).toBe(headers.prefer ? 200 : 204);
        expect(fast.usageFastPathStats().served).toBe(before + 1);
      }
    }
    const balance = await world.core.usage.balances(org.tenant, 'fast-r');
    expect(balance.map((b) => b.balance.used)).toEqual([20n]);
  });

  it('leaves a body the route refuses to the router, and answers an error of the record itself as the router does', async () => {
    for (const [body, served] of [
      [JSON.stringify({ owner: 'fast-r', meterSlug: 'tokens', quantity: 5 }), false],
      [record('fast-r', -1), true],
      [JSON.stringify({ owner: 'fast-r', meterSlug: 'no_such_meter', increment: 1 }), true],
    ] as const) {
      const before = fast.usageFastPathStats();
      const [a, b] = [
        await post(fastBase, '/api/usage/record', bearer(org.liveKey), body),
        await post(routerBase, '/api/usage/record', bearer(org.liveKey), body),
      ];
      expect({ sent: body, ...compared(a) }).toEqual({ sent: body, ...compared(b) });
      expect(a.status).toBe(400);
      expect(fast.usageFastPathStats()).toEqual(
        served ? { served: before.served + 1, passed: before.passed } : { served: before.served, passed: before.passed + 1 },
      );
    }
  });
});

describe('the consume fast path with rate limits on', () => {
  it("counts each write once against the key's budget, whichever path answers it; over the budget the router answers 429", async () => {
    const limited = createServerApp({
      ...world,
      config: { ...world.config, rateLimits: { enabled: true, authFailuresPerMinute: 30, writesPerMinute: 1000, usageWritesPerMinute: 3 } },
    });
    const base = await listen(limited);
    await world.core.usage.grant(org.tenant, { owner: 'limited', meterSlug: 'tokens', amount: 100 });
    // A body the route refuses is read by the fast path, then counted once by the router.
    expect((await post(base, '/api/usage/consume', bearer(org.liveKey), '{"owner":')).status).toBe(400);
    expect(limited.usageFastPathStats()).toEqual({ served: 0, passed: 1 });
    for (let i = 0; i < 2; i++)
      expect((await post(base, '/api/usage/consume', bearer(org.liveKey), consume('limited', 1))).status).toBe(200);
    expect(limited.usageFastPathStats()).toEqual({ served: 2, passed: 1 });
    const refused = await post(base, '/api/usage/consume', bearer(org.liveKey), consume('limited', 1));
    expect(refused.status).toBe(429);
    expect(refused.headers['retry-after']).toBeDefined();
    expect(limited.usageFastPathStats()).toEqual({ served: 2, passed: 2 });
    const balance = await world.core.usage.balances(org.tenant, 'limited');
    expect(balance.map((b) => b.balance.used)).toEqual([2n]);
  });

  it('meters against a budget of its own: a key out of ordinary writes still meters, on both paths, and the reverse', async () => {
    const limited = createServerApp({
      ...world,
      config: { ...world.config, rateLimits: { enabled: true, authFailuresPerMinute: 30, writesPerMinute: 1, usageWritesPerMinute: 4 } },
    });
    const base = await listen(limited);
    await world.core.usage.grant(org.tenant, { owner: 'budgets', meterSlug: 'tokens', amount: 100 });
    const meter = (slug: string) => JSON.stringify({ slug, name: slug });
    // The one ordinary write of the minute, then the next is refused.
    expect((await post(base, '/api/meters', bearer(org.liveKey), meter('budget_a'))).status).toBe(201);
    const ordinary = await post(base, '/api/meters', bearer(org.liveKey), meter('budget_b'));
    expect([ordinary.status, JSON.parse(ordinary.body).detail]).toEqual([429, expect.stringContaining('too many writes')]);
    // Metering goes on: consumes (fast path) and a reservation (router) share the metering budget.
    for (let i = 0; i < 3; i++)
      expect((await post(base, '/api/usage/consume', bearer(org.liveKey), consume('budgets', 1))).status).toBe(200);
    const hold = JSON.stringify({ owner: 'budgets', meterSlug: 'tokens', quantity: 1, ttlSeconds: 60 });
    expect((await post(base, '/api/usage/reservations', bearer(org.liveKey), hold)).status).toBe(201);
    const over = await post(base, '/api/usage/consume', bearer(org.liveKey), consume('budgets', 1));
    expect([over.status, JSON.parse(over.body).detail]).toEqual([429, expect.stringContaining('too many metering writes')]);
    expect(over.headers['retry-after']).toBeDefined();
  });
});
