import { request as httpRequest, Agent } from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { createTestWorld, seedOrganisation, type SeededOrg, type TestWorld } from '@tollgate/runtime/testing';
import { closeGracefully } from '@tollgate/runtime';
import { createServerApp, createServerHttp } from '../src';

let world: TestWorld;
let org: SeededOrg;

beforeAll(async () => {
  world = await createTestWorld();
  org = await seedOrganisation(world, 'operations-org');
});
afterAll(() => world?.close());

describe('GET /readyz', () => {
  it('is ready when the database answers, its migrations are current and the change feed is heard', async () => {
    const res = await request(createServerApp(world)).get('/readyz').expect(200);
    expect(res.body).toEqual({ status: 'ready', checks: { database: { ok: true }, migrations: { ok: true }, listener: { ok: true } } });
  });

  it('is not ready (503) while the change feed is not heard, and ready again once it is', async () => {
    const app = createServerApp(world);
    await world.core.stopListening();
    try {
      const res = await request(app).get('/readyz').expect(503);
      expect(res.body).toMatchObject({ status: 'not ready', checks: { database: { ok: true }, listener: { ok: false } } });
      expect(res.body.checks.listener.detail).toMatch(/change feed/);
    } finally {
      await world.core.listen();
    }
    await request(app).get('/readyz').expect(200);
  });

  it('is not ready when the database does not answer', async () => {
    const other = await createTestWorld();
    await other.core.stopListening();
    await other.db.drop();
    const res = await request(createServerApp(other)).get('/readyz').expect(503);
    expect(res.body.checks.database).toMatchObject({ ok: false, detail: expect.stringMatching(/does not answer/) });
    expect(res.body.checks.migrations.ok).toBe(false);
  });
});

describe('GET /readyz while the database hangs', () => {
  it('answers 503 saying the checks ran late within about 2 s (the health checks give up at 3 s), one probe at a time', async () => {
    let probes = 0;
    const app = createServerApp({
      ...world,
      readiness: () => {
        probes++;
        return new Promise<never>(() => undefined);
      },
    });
    const started = Date.now();
    const [first, second] = await Promise.all([request(app).get('/readyz'), request(app).get('/readyz')]);
    expect(Date.now() - started).toBeLessThan(2_900);
    for (const res of [first, second]) {
      expect(res.status).toBe(503);
      expect(res.body).toEqual({
        status: 'not ready',
        checks: { readiness: { ok: false, detail: 'the readiness checks did not finish within 2000 ms' } },
      });
    }
    // The second probe waited on the first one's checks instead of taking another connection.
    expect(probes).toBe(1);
  });
});

describe('graceful shutdown', () => {
  it('lets every request in flight finish, then refuses new connections', async () => {
    const server = createServerHttp(createServerApp(world));
    let received = 0;
    server.on('request', () => received++);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const agent = new Agent({ keepAlive: true, maxSockets: Infinity });
    const get = (path: string) =>
      new Promise<{ status: number | string; ok: boolean }>((resolve) => {
        const req = httpRequest({ host: '127.0.0.1', port, path, agent, headers: { 'x-api-key': org.liveKey } }, (res) => {
          let body = '';
          res.on('data', (c) => (body += c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, ok: body.length > 0 }));
          res.on('error', () => resolve({ status: 'broken', ok: false }));
        });
        req.on('error', (e: NodeJS.ErrnoException) => resolve({ status: e.code ?? 'error', ok: false }));
        req.end();
      });
    const inFlight = Array.from({ length: 60 }, (_, i) => get(i % 2 ? '/products' : `/products/${org.keys['products.notes']}`));
    // Every request has reached the server (none is still queued in the client) before the stop.
    while (received < 60) await new Promise((r) => setTimeout(r, 5));
    const closed = closeGracefully(server, 20_000);
    const answers = await Promise.all(inFlight);
    expect(answers.filter((a) => a.status !== 200 || !a.ok)).toEqual([]);
    await closed;
    expect(server.listening).toBe(false);
    agent.destroy();
    const after = await get('/products');
    expect(after.status).toBe('ECONNREFUSED');
  });
});
