import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from '@tollgate/core';
import { createTestWorld, purchase, seedOrganisation, type SeededOrg, type TestWorld } from '@tollgate/runtime/testing';
import { createServerApp, createServerHttp, type ServerApp } from '../src';

// The check's fast path (DESIGN section 11) must answer exactly what the generation routers
// answer: every request below goes to a server with the fast path and to one without it (same
// runtime, so the same signatures are reused), and the raw answers are compared byte for byte.

interface Raw {
  status: number;
  headers: IncomingHttpHeaders;
  /** The header lines as sent (names as spelt, in order), without `Date`. */
  lines: string[];
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

/** A raw GET (no client-side normalisation of the path, not even a fragment's removal, or of the headers). */
function get(base: string, path: string, headers: Record<string, string>, body?: string): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const length: Record<string, string> = body === undefined ? {} : { 'content-length': String(Buffer.byteLength(body)) };
    const { hostname, port } = new URL(base);
    const options = { hostname, port, path, method: 'GET', headers: { 'x-request-id': 'same-id', ...length, ...headers } };
    const req = httpRequest(options, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      const lines: string[] = [];
      for (let i = 0; i < res.rawHeaders.length; i += 2)
        if (res.rawHeaders[i] !== 'Date') lines.push(`${res.rawHeaders[i]}: ${res.rawHeaders[i + 1]}`);
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, lines, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const compared = (r: Raw) => ({
  status: r.status,
  // Every header line but Date, as spelt and in order: the fast path writes the router's bytes.
  lines: r.lines,
  body: r.body,
  'content-type': r.headers['content-type'],
  'content-length': r.headers['content-length'],
  'x-request-id': r.headers['x-request-id'],
  'retry-after': r.headers['retry-after'],
});

beforeAll(async () => {
  world = await createTestWorld();
  org = await seedOrganisation(world, 'fast-path-org');
  await purchase(world, org.keys['plans.notes.team'], 'licensed', 3);
  await purchase(world, org.keys['plans.notes.business'], 'other-licensed');
  // An SDK's unencoded e-mail grantee: `+` is a literal plus (literal-plus.test.ts).
  await purchase(world, org.keys['plans.notes.team'], 'ann+licensed@example.com', 2);
  scopelessKey = (await world.core.apiKeys.create({ organisation: 'fast-path-org', scopes: ['products:read'], isTest: false })).plaintext;
  fast = createServerApp(world);
  fastBase = await listen(fast);
  routerBase = await listen(createServerApp(world, { checkFastPath: false }));
});

afterAll(async () => {
  await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
  await world?.close();
});

describe('the check fast path', () => {
  const product = () => org.keys['products.notes'];

  it('answers the happy path itself, with the same status, headers and bytes as the routers', async () => {
    const cases: [string, Record<string, string>][] = [
      [`/licenses/check?productUuid=${product()}&granteeIds=licensed`, { 'x-api-key': org.liveKey }],
      [`/licenses/check?productUuid=${product()}&granteeIds=licensed`, { 'x-api-key': org.readOnlyKey, version: 'v1' }],
      [`/licenses/check?productUuid=${product()}&granteeIds=[licensed,other-licensed]&grace=3`, { 'x-api-key': ` ${org.liveKey} ` }],
      [`/licenses/check?productUuid=${product()}&granteeIds=licensed&sigEncode=P1363&extra=ignored`, { 'x-api-key': org.liveKey }],
      [`/licenses/check?productUuid=${product()}&granteeIds=nobody`, { 'x-api-key': org.liveKey }],
      [`/licenses/check?productUuid=${product()}&granteeIds=${encodeURIComponent('"nobody", "else"')}`, { 'x-api-key': org.liveKey }],
      // `+` is a literal plus, as the routers read it; `%20` a space.
      [`/licenses/check?productUuid=${product()}&granteeIds=ann+licensed@example.com`, { 'x-api-key': org.liveKey }],
      [`/licenses/check?productUuid=${product()}&granteeIds=[ann+licensed@example.com,+other-licensed]`, { 'x-api-key': org.liveKey }],
      [`/licenses/check?productUuid=${product()}&granteeIds=ann%2Blicensed@example.com&grace=+3`, { 'x-api-key': org.liveKey }],
      [`/licenses/check?productUuid=${product()}&granteeIds=ann%20licensed@example.com`, { 'x-api-key': org.liveKey, version: 'v1' }],
    ];
    for (const [path, headers] of cases) {
      const before = fast.fastPathStats().served;
      // Three times: the first fills the caches, the second answers from memory and keeps its
      // answer, the third is the kept answer with its body rendered once.
      for (let i = 0; i < 3; i++) {
        const [a, b] = [await get(fastBase, path, headers), await get(routerBase, path, headers)];
        expect(compared(a)).toEqual(compared(b));
        expect([200, 204]).toContain(a.status);
      }
      expect(fast.fastPathStats().served).toBe(before + 3);
    }
    const licensed = await get(fastBase, cases[0][0], cases[0][1]);
    expect(JSON.parse(licensed.body)).toMatchObject({ capabilities: expect.arrayContaining([expect.any(String)]) });
    expect((await get(fastBase, cases[4][0], cases[4][1])).status).toBe(204);
    expect(JSON.parse((await get(fastBase, cases[6][0], cases[6][1])).body).capabilities).toEqual(JSON.parse(licensed.body).capabilities);
    expect((await get(fastBase, cases[9][0], cases[9][1])).status).toBe(204);
  });

  it('leaves everything but the happy path to the routers, which answer it as before', async () => {
    await world.core.apiKeys.ensureOrganisation('someone-else');
    const other = (await world.core.apiKeys.create({ organisation: 'someone-else', scopes: ['*'], isTest: false })).plaintext;
    const q = `productUuid=${product()}&granteeIds=licensed`;
    const cases: [string, Record<string, string>, number, string?][] = [
      [`/licenses/check?${q}`, {}, 401],
      [`/licenses/check?${q}`, { 'x-api-key': '   ' }, 401],
      [`/licenses/check?${q}`, { 'x-api-key': 'not-a-key' }, 401],
      [`/licenses/check?${q}`, { 'x-api-key': scopelessKey }, 403],
      [`/licenses/check?${q}`, { 'x-api-key': org.testKey }, 404],
      [`/licenses/check?${q}`, { 'x-api-key': other }, 403],
      [`/licenses/check?${q}`, { 'x-api-key': org.liveKey, version: 'v4' }, 400],
      // v3 has no /licenses/check (its check is /entitlements/check); a version is spelt in lower case.
      [`/licenses/check?${q}`, { 'x-api-key': org.liveKey, version: 'v3' }, 404],
      [`/licenses/check?${q}`, { 'x-api-key': org.liveKey, version: 'V2' }, 400],
      [`/licenses/check?${q}&grace=0`, { 'x-api-key': org.liveKey }, 400],
      [`/licenses/check?${q}&grace=soon`, { 'x-api-key': org.liveKey }, 400],
      [`/licenses/check?${q}&sigEncode=base64`, { 'x-api-key': org.liveKey }, 400],
      [`/licenses/check?${q}&productUuid=${product()}`, { 'x-api-key': org.liveKey }, 400],
      [`/licenses/check?productUuid=${product()}&granteeIds=%00`, { 'x-api-key': org.liveKey }, 400],
      [`/licenses/check?productUuid=${product()}&granteeIds=,,`, { 'x-api-key': org.liveKey }, 400],
      [`/licenses/check?productUuid=not-a-uuid&granteeIds=licensed`, { 'x-api-key': org.liveKey }, 400],
      // A literal `+` is no space the edge trims: not a UUID, not a number of days.
      [`/licenses/check?productUuid=${product()}+&granteeIds=licensed`, { 'x-api-key': org.liveKey }, 400],
      [`/licenses/check?${q}&grace=3+`, { 'x-api-key': org.liveKey }, 400],
      [`/licenses/check?productUuid=${org.keys['plans.notes.team']}&granteeIds=licensed`, { 'x-api-key': org.liveKey }, 404],
      [`/licenses/check?granteeIds=licensed`, { 'x-api-key': org.liveKey }, 400],
      [`/licenses/check?${q}`, { 'x-api-key': org.liveKey, 'content-type': 'application/json' }, 400, '{"granteeIds":"\\u0000"}'],
      // A raw `#` in the request line: the routers' URL parser drops the fragment (final review).
      [`/licenses/check?${q}#fragment`, { 'x-api-key': org.liveKey }, 200],
      // An empty body the routers' JSON parser still refuses: its charset (415), its encoding (400).
      [
        `/licenses/check?${q}`,
        { 'x-api-key': org.liveKey, 'content-length': '0', 'content-type': 'application/json; charset=latin1' },
        415,
      ],
      [
        `/licenses/check?${q}`,
        { 'x-api-key': org.liveKey, 'content-length': '0', 'content-type': 'application/json', 'content-encoding': 'gzip' },
        400,
      ],
    ];
    for (const [path, headers, status, body] of cases) {
      const before = fast.fastPathStats();
      const [a, b] = [await get(fastBase, path, headers, body), await get(routerBase, path, headers, body)];
      expect({ path, ...compared(a) }).toEqual({ path, ...compared(b) });
      expect({ path, status: a.status }).toEqual({ path, status });
      expect({ path, headers, ...fast.fastPathStats() }).toEqual({ path, headers, served: before.served, passed: before.passed + 1 });
    }
  });

  it('does not take other spellings of the path, which the routers serve', async () => {
    const before = fast.fastPathStats();
    for (const path of [
      `/licenses/check/?productUuid=${product()}&granteeIds=licensed`,
      `/Licenses/Check?productUuid=${product()}&granteeIds=licensed`,
    ]) {
      const [a, b] = [await get(fastBase, path, { 'x-api-key': org.liveKey }), await get(routerBase, path, { 'x-api-key': org.liveKey })];
      expect(compared(a)).toEqual(compared(b));
      expect(a.status).toBe(200);
    }
    expect(fast.fastPathStats()).toEqual(before);
  });

  it('sees a cancelled license at once (the check reads the same caches the change feed evicts)', async () => {
    const { subscription } = await purchase(world, org.keys['plans.notes.team'], 'leaving', 2);
    const path = `/licenses/check?productUuid=${product()}&granteeIds=leaving`;
    expect((await get(fastBase, path, { 'x-api-key': org.liveKey })).status).toBe(200);
    await world.core.subscriptions.cancel(org.tenant, subscription.id, 'now');
    expect((await get(fastBase, path, { 'x-api-key': org.liveKey })).status).toBe(204);
  });

  it('renders a changed answer anew: a kept, rendered answer is not served after a license of the grantee changes', async () => {
    await purchase(world, org.keys['plans.notes.team'], 'growing', 2);
    const path = `/licenses/check?productUuid=${product()}&granteeIds=growing`;
    const ask = async () => {
      const [a, b] = [await get(fastBase, path, { 'x-api-key': org.liveKey }), await get(routerBase, path, { 'x-api-key': org.liveKey })];
      expect(compared(a)).toEqual(compared(b));
      expect(a.status).toBe(200);
      return JSON.parse(a.body) as { capabilities: string[]; capsHashed: string; signature: string };
    };
    // Asked three times: kept by core, its body rendered once and served again.
    const before = await ask();
    expect(await ask()).toEqual(before);
    expect(await ask()).toEqual(before);
    // A second plan for the grantee: the very next answer has its capabilities, signed anew.
    await purchase(world, org.keys['plans.notes.business'], 'growing');
    const after = await ask();
    expect(after.capabilities.length).toBeGreaterThan(before.capabilities.length);
    expect(after.capabilities).toEqual(expect.arrayContaining(before.capabilities));
    expect(after.capsHashed).toBe(after.capabilities.join(','));
    expect(after.signature).not.toBe(before.signature);
  });
});

describe("the check fast path for v2 (SDK 5's call)", () => {
  const product = () => org.keys['products.notes'];
  /** What SDK 5 sends with every call: the version and a JSON content type (on a GET without a body). */
  const sdk = (key = org.liveKey) => ({ 'x-api-key': key, version: 'v2', 'content-type': 'application/json' });

  it("answers v2's happy path itself, with the bytes of v2's route", async () => {
    const cases: [string, Record<string, string>, number][] = [
      [`/licenses/check?productUuid=${product()}&granteeIds=licensed`, sdk(), 200],
      [`/licenses/check?productUuid=${product()}&granteeIds=licensed,other-licensed`, sdk(), 200],
      [`/licenses/check?productUuid=${product()}&granteeIds=[licensed,other-licensed]&grace=3`, sdk(` ${org.readOnlyKey} `), 200],
      // SDK 5 writes an absent option as `undefined`: v2 drops the pair.
      [`/licenses/check?productUuid=${product()}&granteeIds=licensed&grace=undefined`, sdk(), 200],
      // v2 signs DER whatever `sigEncode` says: not in its schema, it is ignored as any unknown parameter.
      [`/licenses/check?productUuid=${product()}&granteeIds=licensed&sigEncode=P1363&extra=ignored`, sdk(), 200],
      [`/licenses/check?productUuid=${product()}&granteeIds=licensed&sigEncode=base64`, { ...sdk(), 'content-length': '0' }, 200],
      [`/licenses/check?productUuid=${product()}&granteeIds=nobody`, sdk(), 204],
      [`/licenses/check?productUuid=${product()}&granteeIds=nobody,else&grace=undefined`, sdk(), 204],
      // SDK 5 interpolates grantees unencoded: `+` is a literal plus, as v2's router reads it; `%20` a space.
      [`/licenses/check?productUuid=${product()}&granteeIds=ann+licensed@example.com&grace=undefined`, sdk(), 200],
      [`/licenses/check?productUuid=${product()}&granteeIds=nobody,ann+licensed@example.com`, sdk(), 200],
      [`/licenses/check?productUuid=${product()}&granteeIds=ann%20licensed@example.com&grace=undefined`, sdk(), 204],
    ];
    for (const [path, headers, status] of cases) {
      const before = fast.fastPathStats();
      for (let i = 0; i < 3; i++) {
        const [a, b] = [await get(fastBase, path, headers), await get(routerBase, path, headers)];
        expect({ path, ...compared(a) }).toEqual({ path, ...compared(b) });
        expect({ path, status: a.status }).toEqual({ path, status });
      }
      expect({ path, ...fast.fastPathStats() }).toEqual({ path, served: before.served + 3, passed: before.passed });
    }
    const answer = JSON.parse((await get(fastBase, cases[1][0], cases[1][1])).body) as Record<string, unknown>;
    expect(Object.keys(answer)).toEqual(['capabilities', 'signature']);
    expect(answer.capabilities).toEqual(
      expect.arrayContaining([{ capability: expect.any(String), expiry: expect.stringMatching(/^\d{4}-\d\d-\d\dT.*Z$/) }]),
    );
    // DER: an ASN.1 SEQUENCE in hex.
    expect(answer.signature).toMatch(/^30[0-9a-f]+$/);
  });

  it('keeps the v1 and the v2 renderings of one kept answer apart', async () => {
    const path = `/licenses/check?productUuid=${product()}&granteeIds=licensed,other-licensed`;
    const asked: Record<string, string>[] = [{ 'x-api-key': org.liveKey }, sdk(), { 'x-api-key': org.liveKey, version: 'v1' }, sdk()];
    for (const headers of asked) {
      const before = fast.fastPathStats().served;
      const [a, b] = [await get(fastBase, path, headers), await get(routerBase, path, headers)];
      expect(compared(a)).toEqual(compared(b));
      expect(fast.fastPathStats().served).toBe(before + 1);
      expect(Object.keys(JSON.parse(a.body))).toEqual(
        headers.version === 'v2' ? ['capabilities', 'signature'] : expect.arrayContaining(['capsHashed']),
      );
    }
  });

  it("leaves everything but v2's happy path to the router, which answers it as before", async () => {
    await world.core.apiKeys.ensureOrganisation('someone-else');
    const other = (await world.core.apiKeys.create({ organisation: 'someone-else', scopes: ['*'], isTest: false })).plaintext;
    const q = `productUuid=${product()}&granteeIds=licensed`;
    const cases: [string, Record<string, string>, number, string?][] = [
      [`/licenses/check?${q}`, { version: 'v2' }, 401],
      [`/licenses/check?${q}`, sdk('   '), 401],
      [`/licenses/check?${q}`, sdk('not-a-key'), 401],
      [`/licenses/check?${q}`, sdk(scopelessKey), 403],
      [`/licenses/check?${q}`, sdk(org.testKey), 404],
      [`/licenses/check?${q}`, sdk(other), 403],
      [`/licenses/check?${q}&grace=0`, sdk(), 400],
      [`/licenses/check?${q}&grace=soon`, sdk(), 400],
      [`/licenses/check?${q}&grace=%75ndefined`, sdk(), 400],
      [`/licenses/check?${q}&productUuid=${product()}`, sdk(), 400],
      [`/licenses/check?productUuid=${product()}&granteeIds=%00`, sdk(), 400],
      [`/licenses/check?productUuid=${product()}&granteeIds=,,`, sdk(), 400],
      [`/licenses/check?productUuid=${product()}&granteeIds=undefined`, sdk(), 400],
      [`/licenses/check?productUuid=not-a-uuid&granteeIds=licensed`, sdk(), 400],
      [`/licenses/check?productUuid=${product()}+&granteeIds=licensed`, sdk(), 400],
      [`/licenses/check?${q}&grace=+undefined`, sdk(), 400],
      [`/licenses/check?productUuid=${org.keys['plans.notes.team']}&granteeIds=licensed`, sdk(), 404],
      [`/licenses/check?granteeIds=licensed`, sdk(), 400],
      [`/licenses/check?undefined=undefined`, sdk(), 400],
      // A fragment in a raw request line: the router's URL parser drops it (and what follows).
      [`/licenses/check?${q}#fragment`, sdk(), 200],
      [`/licenses/check?${q}`, sdk(), 400, '{"granteeIds":"\\u0000"}'],
      [`/licenses/check?${q}`, sdk(), 200, '{}'],
      [`/licenses/check?${q}`, { ...sdk(), 'content-length': '0', 'content-type': 'application/json; charset=latin1' }, 415],
      [`/licenses/check?${q}`, { ...sdk(), 'content-length': '0', 'content-encoding': 'gzip' }, 400],
    ];
    for (const [path, headers, status, body] of cases) {
      const before = fast.fastPathStats();
      const [a, b] = [await get(fastBase, path, headers, body), await get(routerBase, path, headers, body)];
      expect({ path, ...compared(a) }).toEqual({ path, ...compared(b) });
      expect({ path, status: a.status }).toEqual({ path, status });
      expect({ path, headers, ...fast.fastPathStats() }).toEqual({ path, headers, served: before.served, passed: before.passed + 1 });
    }
  });
});

describe('the check fast path with request logs on', () => {
  it("logs a v2 check as it logs v1's: the router's fields but the client address (request-log.test.ts pins the form)", async () => {
    const lines: Record<string, unknown>[] = [];
    const logger: Logger = { info: (m, f) => void (m === 'request' && lines.push(f ?? {})), error: () => undefined };
    const logged = { ...world, logger, config: { ...world.config, logRequests: true } };
    const app = createServerApp(logged);
    const [withFast, without] = [await listen(app), await listen(createServerApp(logged, { checkFastPath: false }))];
    const path = `/licenses/check?productUuid=${org.keys['products.notes']}&granteeIds=licensed`;
    const seen: Record<string, unknown>[] = [];
    const asked: Record<string, string>[] = [{ 'x-api-key': org.liveKey }, { 'x-api-key': org.liveKey, version: 'v2' }];
    for (const headers of asked) {
      lines.length = 0;
      await get(withFast, path, headers);
      await get(without, path, headers);
      expect(lines).toHaveLength(2);
      const [a, b] = lines.map(({ ms, ...rest }): Record<string, unknown> => ({ ...rest, ms: typeof ms }));
      const { address, ...routerWithoutAddress } = b;
      expect(address).toBe('127.0.0.1');
      expect(a).toEqual(routerWithoutAddress);
      seen.push(a);
    }
    expect(seen[1]).toEqual(seen[0]);
    expect(seen[0]).toEqual({ requestId: 'same-id', method: 'GET', path: '/licenses/check', status: 200, ms: 'number' });
    expect(app.fastPathStats().served).toBe(2);
  });
});

describe('the check fast path with rate limits on', () => {
  it('leaves a key an address over its failed-authentication budget has not seen to the routers (429); a key it has seen is served', async () => {
    const limited = createServerApp({
      ...world,
      config: { ...world.config, rateLimits: { enabled: true, authFailuresPerMinute: 2, writesPerMinute: 100 } },
    });
    const base = await listen(limited);
    const path = `/licenses/check?productUuid=${org.keys['products.notes']}&granteeIds=licensed`;
    expect((await get(base, path, { 'x-api-key': org.liveKey })).status).toBe(200);
    expect(limited.fastPathStats().served).toBe(1);
    for (let i = 0; i < 2; i++) expect((await get(base, path, { 'x-api-key': `wrong-${i}` })).status).toBe(401);
    const refused = await get(base, path, { 'x-api-key': 'wrong-guess' });
    expect(refused.status).toBe(429);
    expect(refused.headers['retry-after']).toBeDefined();
    expect(JSON.parse(refused.body)).toMatchObject({ code: 'RATE_LIMITED' });
    // Others' failures never lock out a key that authenticated from this address.
    expect((await get(base, path, { 'x-api-key': org.liveKey })).status).toBe(200);
    expect(limited.fastPathStats().served).toBe(2);
  });
});
