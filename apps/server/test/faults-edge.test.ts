/* Issue #24, the edge: the failed-authentication budget, slow clients, deferred checkout links. */
import { connect, type AddressInfo, type Socket } from 'node:net';
import request from 'supertest';
import { DEFAULT_HTTP_SERVER_LIMITS } from '@tollgate/http';
import { createTestWorld, seedOrganisation, type SeededOrg, type TestWorld } from '@tollgate/runtime/testing';
import { createServerApp, createServerHttp } from '../src';

let world: TestWorld;
let org: SeededOrg;
let other: SeededOrg;

beforeAll(async () => {
  world = await createTestWorld();
  org = await seedOrganisation(world, 'edge-org');
  other = await seedOrganisation(world, 'edge-other');
});
afterAll(() => world?.close());

const limited = () =>
  createServerApp({
    ...world,
    config: { ...world.config, rateLimits: { enabled: true, authFailuresPerMinute: 30, writesPerMinute: 10_000 } },
  });

/** 40 requests at once with one valid key, half legacy (the check's generation), half catalog; one product each (lists have their own limit). */
const honestClients = (target: Parameters<typeof request>[0]) =>
  Promise.all(
    Array.from({ length: 40 }, (_, i) =>
      i % 2
        ? request(target).get(`/products/${org.keys['products.notes']}`).set('x-api-key', org.liveKey)
        : request(target).get(`/api/products/${org.keys['products.notes']}`).set('authorization', `Bearer ${org.liveKey}`),
    ),
  );

describe('the failed-authentication budget counts failures only', () => {
  it('lets 40 concurrent honest clients from one address through (no 429), on the fast path and the routers', async () => {
    const server = createServerHttp(limited()).listen(0, '127.0.0.1');
    try {
      const answers = await Promise.all(
        Array.from({ length: 40 }, (_, i) =>
          i % 2
            ? request(server).get('/products').set('x-api-key', org.liveKey)
            : request(server).get('/api/products').set('authorization', `Bearer ${org.liveKey}`),
        ),
      );
      expect(answers.map((a) => a.status)).toEqual(Array(40).fill(200));
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });

  it("does not lock a key out for others' failures from its address; the failing key and unseen keys are refused", async () => {
    const app = limited();
    await request(app).get('/products').set('x-api-key', org.liveKey).expect(200);
    const bad = await Promise.all(Array.from({ length: 30 }, (_, i) => request(app).get('/products').set('x-api-key', `live_nope${i}`)));
    expect(bad.every((r) => r.status === 401)).toBe(true);
    const guess = await request(app).get('/products').set('x-api-key', 'live_guess').expect(429);
    expect(guess.body).toMatchObject({ code: 'RATE_LIMITED' });
    expect(Number(guess.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    // A key that authenticated from here keeps working, concurrently, in every generation.
    const good = await honestClients(app);
    expect(good.map((a) => a.status)).toEqual(Array(40).fill(200));
    // A key never seen from this address waits like any guess (docs/decisions.md).
    await request(app).get('/products').set('x-api-key', other.liveKey).expect(429);
  });
});

describe('slow clients and connection hoarding', () => {
  const listen = async (limits: Partial<typeof DEFAULT_HTTP_SERVER_LIMITS>) => {
    const server = createServerHttp(createServerApp(world), { ...DEFAULT_HTTP_SERVER_LIMITS, checkIntervalMs: 100, ...limits });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    return { server, port: (server.address() as AddressInfo).port };
  };
  /** A socket's end: what it received before the server closed it. */
  const ended = (socket: Socket) =>
    new Promise<string>((resolve) => {
      let got = '';
      socket.on('data', (c) => (got += c));
      socket.on('error', () => undefined);
      socket.on('close', () => resolve(got));
    });

  it('closes 500 connections that send a body slowly once the request timeout passes (408 in the generation shape)', async () => {
    const { server, port } = await listen({ requestTimeoutMs: 1_000, headersTimeoutMs: 1_000, maxConnectionsPerAddress: 1_000 });
    const sockets: Socket[] = [];
    const drip = setInterval(() => sockets.forEach((s) => s.writable && s.write('x')), 200);
    try {
      const head = `POST /api/products HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${org.liveKey}\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"name":"`;
      const ends = Array.from({ length: 500 }, () => {
        const s = connect(port, '127.0.0.1', () => s.write(head));
        sockets.push(s);
        return ended(s);
      });
      const started = Date.now();
      let timer: NodeJS.Timeout | undefined;
      const answers = await Promise.race([
        Promise.all(ends),
        new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error('slow bodies still open after 15 s')), 15_000))),
      ]).finally(() => clearTimeout(timer));
      expect(Date.now() - started).toBeGreaterThanOrEqual(900);
      expect(answers.filter((a) => a.startsWith('HTTP/1.1 408')).length).toBe(500);
      expect(answers[0]).toMatch(/"title":"Request Timeout"/);
    } finally {
      clearInterval(drip);
      sockets.forEach((s) => s.destroy());
      server.closeAllConnections();
      server.close();
    }
  }, 30_000);

  it('caps the connections one address holds; a client within the cap is served', async () => {
    const { server, port } = await listen({ maxConnectionsPerAddress: 10 });
    const held = Array.from({ length: 10 }, () => connect(port, '127.0.0.1'));
    try {
      await Promise.all(held.map((s) => new Promise((r) => s.once('connect', r))));
      const extra = Array.from({ length: 5 }, () => connect(port, '127.0.0.1'));
      expect(await Promise.all(extra.map(ended))).toEqual(Array(5).fill(''));
      expect((server as unknown as { connectionCap(): { refused: number } }).connectionCap().refused).toBe(5);
      held.forEach((s) => s.destroy());
      await new Promise((r) => setTimeout(r, 100));
      await request(server).get('/products').set('x-api-key', org.liveKey).expect(200);
    } finally {
      held.forEach((s) => s.destroy());
      server.closeAllConnections();
      server.close();
    }
  });
});

describe('a deferred checkout link creates at most one checkout session', () => {
  const checkoutParams =
    'successUrl=https://app.example.com/ok&cancelUrl=https://app.example.com/cancel&granteeId=alice&member=m@example.com';
  const deferredLink = async (app: ReturnType<typeof createServerApp>) => {
    const res = await request(app)
      .get(`/products/${org.keys['products.notes']}?expand=generateCheckoutLinks&${checkoutParams}`)
      .set('x-api-key', org.liveKey)
      .set('version', 'v1')
      .expect(200);
    const paid = (res.body.plans as { pricingType: string; checkoutUrl: string }[]).find((p) => p.pricingType !== 'free');
    return new URL(paid!.checkoutUrl).pathname;
  };

  it('reuses the session for every follow of one link, concurrent ones included, until it is a day old or canceled', async () => {
    const app = createServerApp(world);
    const link = await deferredLink(app);
    const follows = [
      ...(await Promise.all(Array.from({ length: 30 }, () => request(app).get(link).expect(303)))),
      ...(await Promise.all(Array.from({ length: 30 }, () => request(app).get(link).expect(303)))),
    ];
    const locations = new Set(follows.map((f) => f.headers.location));
    expect(locations.size).toBe(1);
    const [first] = locations;
    // The same plan's link of another view (later, signed anew) for the same request is the same
    // checkout: the guard is keyed on what a link grants, not on its token.
    world.clock.set(new Date(world.clock.now().getTime() + 1_000));
    expect(
      (
        await request(app)
          .get(await deferredLink(app))
          .expect(303)
      ).headers.location,
    ).toBe(first);
    // The customer cancels that checkout: the link starts a new one, then reuses that.
    const sessionPath = new URL(first).pathname;
    await request(app)
      .post(`${sessionPath}/cancel`)
      .expect((r) => expect(r.status).toBeLessThan(400));
    const second = (await request(app).get(link).expect(303)).headers.location;
    expect(second).not.toBe(first);
    expect((await request(app).get(link).expect(303)).headers.location).toBe(second);
    // A day later (the provider's session has expired) the link makes a fresh one.
    world.clock.set(new Date(world.clock.now().getTime() + 23 * 60 * 60 * 1000 + 1));
    const third = (await request(app).get(link).expect(303)).headers.location;
    expect(third).not.toBe(second);
    expect((await request(app).get(link).expect(303)).headers.location).toBe(third);
  });
});
