/* Safe defaults (#23): client addresses from a reverse proxy only when told, and no signed token in a log line. */
import request from 'supertest';
import type { Logger } from '@tollgate/core';
import { clientAddress, loggablePath } from '@tollgate/http';
import { createTestWorld, seedOrganisation, type SeededOrg, type TestWorld } from '@tollgate/runtime/testing';
import { createServerApp } from '../src';

let world: TestWorld;
let org: SeededOrg;
beforeAll(async () => {
  world = await createTestWorld();
  org = await seedOrganisation(world, 'safe-defaults-org');
});
afterAll(() => world?.close());

const limited = (trustProxy: number, logger: Logger = world.logger) =>
  createServerApp({
    ...world,
    logger,
    config: {
      ...world.config,
      logRequests: true,
      rateLimits: { enabled: true, authFailuresPerMinute: 5, writesPerMinute: 1000, trustProxy },
    },
  });

const fakeReq = (remote: string, xff?: string | string[]) =>
  ({ socket: { remoteAddress: remote }, headers: xff === undefined ? {} : { 'x-forwarded-for': xff } }) as never;

describe('the client address', () => {
  it('is the socket address unless proxies are trusted; then the one the outermost trusted proxy saw', () => {
    expect(clientAddress(fakeReq('10.0.0.9', '203.0.113.7'))).toBe('10.0.0.9');
    expect(clientAddress(fakeReq('10.0.0.9', '203.0.113.7'), 1)).toBe('203.0.113.7');
    // A client that writes its own X-Forwarded-For cannot choose the address counted behind one proxy.
    expect(clientAddress(fakeReq('10.0.0.9', '1.2.3.4, 203.0.113.7'), 1)).toBe('203.0.113.7');
    expect(clientAddress(fakeReq('10.0.0.9', ['1.2.3.4', '203.0.113.7, 10.0.0.2']), 2)).toBe('203.0.113.7');
    expect(clientAddress(fakeReq('10.0.0.9', '203.0.113.7'), 3)).toBe('203.0.113.7');
    expect(clientAddress(fakeReq('10.0.0.9'), 1)).toBe('10.0.0.9');
  });

  it('behind a trusted proxy, one client failing keys does not lock out the others', async () => {
    const app = limited(1);
    const from = (address: string, path: string, key: string) =>
      request(app).get(path).set('x-forwarded-for', address).set('x-api-key', key);
    for (let i = 0; i < 5; i++) await from('203.0.113.7', '/products', 'live_nope').expect(401);
    await from('203.0.113.7', '/products', org.liveKey).expect(429);
    await from('198.51.100.2', '/products', org.liveKey).expect(200);
    const check = `/licenses/check?productUuid=${org.keys['products.notes']}&granteeIds=nobody`;
    expect((await from('198.51.100.2', check, org.liveKey)).status).toBeLessThan(300);
  });

  it('without TRUST_PROXY, X-Forwarded-For is ignored: a client cannot escape its budget by writing it', async () => {
    const app = limited(0);
    for (let i = 0; i < 5; i++)
      await request(app).get('/products').set('x-forwarded-for', `203.0.113.${i}`).set('x-api-key', 'live_nope').expect(401);
    await request(app).get('/products').set('x-forwarded-for', '198.51.100.2').set('x-api-key', org.liveKey).expect(429);
  });
});

describe('request logs', () => {
  it('carry the path without the signed token of a checkout link, and the client address', async () => {
    const lines: Record<string, unknown>[] = [];
    const logger: Logger = { info: (_m, f) => void lines.push(f ?? {}), error: () => undefined };
    const app = limited(1, logger);
    const params =
      'globalSuccessUrl=https://app.example.com/ok&globalCancelUrl=https://app.example.com/no&globalGranteeId=alice&member=m@example.com';
    const table = await request(app)
      .get(`/pricing-tables/${org.keys['pricingTables.notes.main']}?${params}`)
      .set('x-api-key', org.liveKey)
      .set('version', 'v1')
      .expect(200);
    const link = new URL(table.body.plans.find((p: { plan: { checkoutUrl?: string } }) => p.plan.checkoutUrl).plan.checkoutUrl);
    const token = link.pathname.split('/').pop() as string;
    expect(token.length).toBeGreaterThan(20);
    await request(app).get(link.pathname).set('x-forwarded-for', '203.0.113.7').expect(303);
    expect(JSON.stringify(lines)).not.toContain(token);
    expect(lines).toContainEqual(expect.objectContaining({ path: '/checkout/start/[token]', status: 303, address: '203.0.113.7' }));
    expect(loggablePath('/checkout/start/abc.def/x')).toBe('/checkout/start/[token]/x');
    expect(loggablePath('/products')).toBe('/products');
  });
});
