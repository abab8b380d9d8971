/* No signed checkout token in a log line, whatever the spelling of its path and whatever the answer (observability audit). */
import { createHmac, randomUUID } from 'node:crypto';
import { createServer, type RequestListener } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import request from 'supertest';
import { DomainError, ErrorCodes, type Logger } from '@tollgate/core';
import { ClientLeft, errorHandler, ERROR_STATUS, legacyErrorBody, loggablePath } from '@tollgate/http';
import { createTestWorld, seedOrganisation, type SeededOrg, type TestWorld } from '@tollgate/runtime/testing';
import { createServerApp } from '../src';

let world: TestWorld;
let org: SeededOrg;
let token: string;
beforeAll(async () => {
  world = await createTestWorld();
  org = await seedOrganisation(world, 'token-logs-org');
  const params =
    'globalSuccessUrl=https://app.example.com/ok&globalCancelUrl=https://app.example.com/no&globalGranteeId=alice&member=m@example.com';
  const table = await request(createServerApp(world))
    .get(`/pricing-tables/${org.keys['pricingTables.notes.main']}?${params}`)
    .set('x-api-key', org.liveKey)
    .set('version', 'v1')
    .expect(200);
  const link = new URL(table.body.plans.find((p: { plan: { checkoutUrl?: string } }) => p.plan.checkoutUrl).plan.checkoutUrl);
  token = link.pathname.split('/').pop() as string;
});
afterAll(() => world?.close());
afterEach(() => jest.restoreAllMocks());

/** The combined server logging every line (requests and failures) into `lines`. */
function logged() {
  const lines: { message: string; fields: Record<string, unknown> }[] = [];
  const logger: Logger = {
    info: (message, fields) => void lines.push({ message, fields: fields ?? {} }),
    error: (message, fields) => void lines.push({ message, fields: fields ?? {} }),
  };
  const app = createServerApp({ ...world, logger, config: { ...world.config, logRequests: true } });
  return { app, lines };
}

/** A GET of `path` exactly as written, on a socket of its own (HTTP clients read `//host/...` as another host). */
async function rawGet(app: RequestListener, path: string): Promise<number> {
  const server = createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const { port } = server.address() as AddressInfo;
    const answer = await new Promise<string>((resolve, reject) => {
      let text = '';
      const socket = connect(port, '127.0.0.1', () => socket.write(`GET ${path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n`));
      socket.on('data', (d) => (text += d));
      socket.on('end', () => resolve(text));
      socket.on('error', reject);
    });
    return Number(/^HTTP\/1\.1 (\d+)/.exec(answer)?.[1]);
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
}

/** Neither the token nor its body (the payload, which carries the customer's email) is in any line. */
const expectNoToken = (lines: unknown[]) => {
  const text = JSON.stringify(lines);
  expect(token.length).toBeGreaterThan(40);
  expect(text).not.toContain(token);
  expect(text).not.toContain(token.split('.')[0]);
  expect(text).not.toContain(token.split('.')[1]);
};

describe('a checkout link in the request log', () => {
  // Express routes paths in any case and with a trailing slash; the log must read them the same way.
  it.each([
    ['as made', () => `/checkout/start/${token}`, '/checkout/start/[token]'],
    ['in other case', () => `/Checkout/Start/${token}`, '/checkout/start/[token]'],
    ['in capitals, with a trailing slash', () => `/CHECKOUT/START/${token}/`, '/checkout/start/[token]/'],
    [
      'with its token partly escaped',
      () => `/checkout/start/%${token.charCodeAt(0).toString(16)}${token.slice(1).replace('.', '%2E')}`,
      '/checkout/start/[token]',
    ],
  ])('%s: answered, and logged without its token', async (_name, path, loggedAs) => {
    const { app, lines } = logged();
    await request(app).get(path()).expect(303);
    expectNoToken(lines);
    expect(lines).toContainEqual({ message: 'request', fields: expect.objectContaining({ path: loggedAs, status: 303 }) });
  });

  it.each([
    ['a doubled slash', () => `//checkout/start/${token}`],
    ['an escaped slash', () => `/checkout%2Fstart/${token}`],
    ['an escaped slash in lower case', () => `/checkout%2fStart/${token}`],
    ['another prefix', () => `/api/checkout/start/${token}`],
    ['a mistyped route', () => `/checkout/starts/${token}`],
  ])('%s: logged without its token, whatever the answer', async (_name, path) => {
    const { app, lines } = logged();
    await rawGet(app, path());
    // The line is written when the answer has finished, which may come just after the client read it.
    for (let i = 0; i < 200 && !lines.some((l) => l.message === 'request'); i++) await new Promise((r) => setTimeout(r, 10));
    expect(lines.some((l) => l.message === 'request')).toBe(true);
    expectNoToken(lines);
  });
});

describe('a checkout link that fails', () => {
  it.each([
    ['the database refusing (500)', new Error(`relation "checkout_sessions" does not exist`), 500],
    ['the payment provider failing (502)', new DomainError(ErrorCodes.PAYMENT_PROVIDER_FAILED, 'Stripe did not answer'), 502],
  ])('%s: the failure is logged with its path, without the token', async (_name, failure, status) => {
    jest.spyOn(world.core.checkout, 'followDeferredLink').mockRejectedValue(failure);
    for (const path of [`/checkout/start/${token}`, `/Checkout/Start/${token}`]) {
      const { app, lines } = logged();
      await request(app).get(path).expect(status);
      expectNoToken(lines);
      expect(lines).toContainEqual({ message: 'request failed', fields: expect.objectContaining({ path: '/checkout/start/[token]' }) });
    }
  });

  it('a client leaving before the answer is logged without the token', () => {
    const lines: unknown[] = [];
    const logger: Logger = { info: (m, f) => void lines.push([m, f]), error: (m, f) => void lines.push([m, f]) };
    const req = { method: 'GET', path: `/Start/${token}`, originalUrl: `/Checkout/Start/${token}?x=1` };
    const res = { locals: { requestId: 'r1' }, destroy: () => undefined };
    errorHandler(ERROR_STATUS, legacyErrorBody, logger)(new ClientLeft(), req as never, res as never, () => undefined);
    expectNoToken(lines);
    expect(lines).toEqual([['client left before the answer ended', { requestId: 'r1', method: 'GET', path: '/checkout/start/[token]' }]]);
  });
});

describe('the hosted pricing page', () => {
  it('logs its failure with its path, without the token of its link (a query parameter)', async () => {
    const params =
      'globalSuccessUrl=https://app.example.com/ok&globalCancelUrl=https://app.example.com/no&globalGranteeId=alice&member=m@example.com';
    const made = await request(createServerApp(world))
      .get(`/pricing-tables/${org.keys['pricingTables.notes.main']}/page-link?${params}`)
      .set('x-api-key', org.liveKey)
      .set('version', 'v1')
      .expect(200);
    const page = new URL(made.body.url as string);
    const pageToken = page.searchParams.get('token') as string;
    expect(pageToken.length).toBeGreaterThan(40);
    jest.spyOn(world.core.queries, 'getPricingTable').mockRejectedValue(new Error('the database refused'));
    for (const path of [
      `${page.pathname}${page.search}`,
      `/Pricing-Tables${page.pathname.slice('/pricing-tables'.length)}${page.search}`,
    ]) {
      const { app, lines } = logged();
      await request(app).get(path).expect(500);
      expect(lines).toContainEqual({ message: 'pricing page failed', fields: expect.objectContaining({ path: path.split('?')[0] }) });
      expect(JSON.stringify(lines)).not.toContain(pageToken);
      expect(JSON.stringify(lines)).not.toContain(pageToken.split('.')[0]);
    }
  });
});

describe('loggablePath', () => {
  it('redacts the token of every spelling Express routes, and token-shaped segments elsewhere; other paths as given', () => {
    const t = 'eyJwbGFuSWQiOiJ4In0.abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQ';
    expect(loggablePath(`/checkout/start/${t}`)).toBe('/checkout/start/[token]');
    expect(loggablePath(`/Checkout/START/${t}/x`)).toBe('/checkout/start/[token]/x');
    expect(loggablePath(`///checkout//start/${t}`)).toBe('/checkout/start/[token]');
    expect(loggablePath(`/checkout%2Fstart/${t}`)).toBe('/checkout/start/[token]');
    expect(loggablePath(`/checkout%2fstart%2F${t}`)).toBe('/checkout/start/[token]');
    expect(loggablePath(`/checkout/start/abc.def/x`)).toBe('/checkout/start/[token]/x');
    expect(loggablePath(`/elsewhere/${t}/x`)).toBe('/elsewhere/[token]/x');
    expect(loggablePath(`/elsewhere/${t.split('.')[0]}`)).toBe('/elsewhere/[token]');
    // A token past the first segment after the prefix, however that segment is spelt.
    expect(loggablePath(`/checkout/start/x/${t}`)).toBe('/checkout/start/[token]/[token]');
    expect(loggablePath(`/checkout/start/%20/${t}`)).toBe('/checkout/start/[token]/[token]');
    expect(loggablePath(`/checkout/start//x/${t.split('.')[0]}/y`)).toBe('/checkout/start/[token]/[token]/y');
    expect(loggablePath('/products')).toBe('/products');
    expect(loggablePath('/products/%E0%A4%A')).toBe('/products/%E0%A4%A');
    expect(loggablePath('/licenses/check')).toBe('/licenses/check');
    expect(loggablePath('/docs/assets/swagger-ui-bundle.js')).toBe('/docs/assets/swagger-ui-bundle.js');
  });

  it('reads only paths that may carry a token: every signed link (checkout, sandbox, pricing) has a `.` or `eyJ`', () => {
    // The format of HmacSignedLinks, which signs all three: `<base64url(JSON)>.<base64url(HMAC-SHA256)>`.
    const sign = (secret: string, payload: object) => {
      const body = Buffer.from(JSON.stringify({ ...payload, exp: Date.now() }), 'utf8').toString('base64url');
      return `${body}.${createHmac('sha256', secret).update(body).digest('base64url')}`;
    };
    for (const secret of ['checkout-links:s', 'sandbox-links:s']) {
      for (const payload of [{}, { a: 1 }, { email: 'a@b.c', planId: 'p'.repeat(40) }, { pricingTableId: randomUUID(), customerId: 'c' }]) {
        const token = sign(secret, payload);
        const [body] = token.split('.');
        for (const path of [`/x/${token}`, `/x/${body}`, `/x/%65${body.slice(1)}`, `/x/${token.replace('.', '%2E')}`])
          expect(loggablePath(path)).not.toContain(body.slice(1));
      }
    }
    // Paths without any of those are returned as given, unread.
    expect(loggablePath('/v1/licenses/check')).toBe('/v1/licenses/check');
    expect(loggablePath('/api/products/prod_01HF8ZK2Q3W4E5R6T7Y8U9I0')).toBe('/api/products/prod_01HF8ZK2Q3W4E5R6T7Y8U9I0');
  });
});
