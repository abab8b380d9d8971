import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createTestWorld, purchase, seedOrganisation, type SeededOrg, type TestWorld } from '@tollgate/runtime/testing';
import { createServerApp, createServerHttp, type ServerApp } from '../src';

/* The real service's Node clients (`@salable/node-sdk` 3.x and 5.0.0) interpolate query values
   without encoding them (`granteeIds=${ids}`): a grantee `ann+test@example.com` arrives with its
   `+` as is. Legacy, v1, v2 and v3 read `+` as a literal plus (RFC 3986; a space is `%20`), through
   the routers and the check's fast path alike; the catalog (`/api`, whose clients form-encode)
   still reads it as a space. */

let world: TestWorld;
let org: SeededOrg;
let fast: ServerApp;
const servers: ReturnType<typeof createServerHttp>[] = [];
let fastBase: string;
let routerBase: string;

const PLUS = 'ann+test@example.com';
const SPACE = 'ann test@example.com';
const PURCHASER = 'x+y@e.com';

async function listen(app: Parameters<typeof createServerHttp>[0]): Promise<string> {
  const server = createServerHttp(app);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** A raw GET: the path goes on the request line exactly as written (an SDK's unencoded `+`). */
function get(base: string, path: string, headers: Record<string, string>): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const { hostname, port } = new URL(base);
    const req = httpRequest({ hostname, port, path, method: 'GET', headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on('error', reject);
    req.end();
  });
}

beforeAll(async () => {
  world = await createTestWorld();
  org = await seedOrganisation(world, 'literal-plus-org');
  await purchase(world, org.keys['plans.notes.team'], PLUS, 2);
  await purchase(world, org.keys['plans.notes.business'], SPACE);
  fast = createServerApp(world);
  fastBase = await listen(fast);
  routerBase = await listen(createServerApp(world, { checkFastPath: false }));
});

afterAll(async () => {
  await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
  await world?.close();
});

const product = () => org.keys['products.notes'];

describe('a literal `+` in the query string of legacy, v1, v2 and v3', () => {
  // What each SDK sends: legacy (SDK 3, no version), v1, SDK 5 (`version: v2`, a JSON content type, `undefined` options).
  const generations: [string, Record<string, string>, string][] = [
    ['legacy', {}, ''],
    ['v1', { version: 'v1' }, ''],
    ['v2', { version: 'v2', 'content-type': 'application/json' }, '&grace=undefined'],
  ];

  it.each(generations)(
    '%s: the check of a grantee with a `+` answers 200 with its capabilities, via the routers and the fast path',
    async (_, headers, extra) => {
      const path = `/licenses/check?productUuid=${product()}&granteeIds=${PLUS}${extra}`;
      const bare = `/licenses/check?productUuid=${product()}&granteeIds=${encodeURIComponent(PLUS)}${extra}`;
      const expected = (await get(routerBase, bare, { 'x-api-key': org.liveKey, ...headers })).body;
      for (const base of [routerBase, fastBase]) {
        const served = fast.fastPathStats().served;
        const answer = await get(base, path, { 'x-api-key': org.liveKey, ...headers });
        expect({ base, status: answer.status }).toEqual({ base, status: 200 });
        const body = JSON.parse(answer.body) as { capabilities: unknown[] };
        expect(body.capabilities.length).toBeGreaterThan(0);
        // The same answer as for the encoded `%2B`: the grantee with the plus, not the one with a space.
        expect(answer.body).toBe(expected);
        if (base === fastBase) expect(fast.fastPathStats().served).toBe(served + 1);
      }
      // `%20` is a space: the other grantee (another plan, so another answer).
      const spaced = await get(routerBase, path.replace('+', '%20'), { 'x-api-key': org.liveKey, ...headers });
      expect(spaced.status).toBe(200);
      expect(spaced.body).not.toBe(expected);
      expect((await get(fastBase, path.replace('+', '%20'), { 'x-api-key': org.liveKey, ...headers })).body).toBe(spaced.body);
    },
  );

  it('v3: /entitlements/check of a grantee with a `+` answers its features, not those of the grantee with a space', async () => {
    const features = async (granteeIds: string) => {
      const path = `/entitlements/check?granteeIds=${granteeIds}&productUuid=${product()}`;
      const answer = await get(routerBase, path, { 'x-api-key': org.liveKey, version: 'v3' });
      expect({ path, status: answer.status }).toEqual({ path, status: 200 });
      return (JSON.parse(answer.body) as { features: { feature: string }[] }).features.map((f) => f.feature).sort();
    };
    const plussed = await features(PLUS);
    expect(plussed.length).toBeGreaterThan(0);
    expect(plussed).toEqual(await features(encodeURIComponent(PLUS)));
    expect(plussed).not.toEqual(await features(encodeURIComponent(SPACE)));
  });

  it('finds the licenses of a purchaser with a `+` (no version, v1, v2)', async () => {
    const made = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const { hostname, port } = new URL(routerBase);
      const body = JSON.stringify([{ planUuid: org.keys['plans.notes.free'], member: PURCHASER, granteeId: 'purchased' }]);
      const req = httpRequest(
        { hostname, port, path: '/licenses', method: 'POST', headers: { 'x-api-key': org.liveKey, 'content-type': 'application/json' } },
        (res) => {
          let text = '';
          res.on('data', (c: Buffer) => (text += c.toString()));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
        },
      );
      req.on('error', reject);
      req.end(body);
    });
    expect([200, 201]).toContain(made.status);
    const [license] = JSON.parse(made.body) as { uuid: string }[];
    for (const headers of <Record<string, string>[]>[{}, { version: 'v1' }, { version: 'v2', 'content-type': 'application/json' }]) {
      const answer = await get(routerBase, `/licenses/purchaser?purchaser=${PURCHASER}&productUuid=${product()}`, {
        'x-api-key': org.liveKey,
        ...headers,
      });
      expect({ headers, status: answer.status }).toEqual({ headers, status: 200 });
      expect((JSON.parse(answer.body) as { uuid: string }[]).map((l) => l.uuid)).toEqual([license.uuid]);
    }
  });
});

describe('the catalog (`/api`) keeps form decoding', () => {
  const entitlements = async (granteeId: string) =>
    (
      JSON.parse(
        (await get(routerBase, `/api/entitlements/check?granteeId=${granteeId}`, { authorization: `Bearer ${org.liveKey}` })).body,
      ) as {
        data: { entitlements: { value: string }[] };
      }
    ).data.entitlements
      .map((e) => e.value)
      .sort();

  it('reads `+` as a space and `%2B` as a plus', async () => {
    const spaced = await entitlements(encodeURIComponent(SPACE));
    const plussed = await entitlements(encodeURIComponent(PLUS));
    // Two grantees of different plans: different entitlements.
    expect(spaced.length).toBeGreaterThan(0);
    expect(plussed.length).toBeGreaterThan(0);
    expect(spaced).not.toEqual(plussed);
    expect(await entitlements(PLUS)).toEqual(spaced);
  });
});
