import { verify } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { createRuntime, type Runtime } from '@tollgate/runtime';
import { createTestWorld, seedOrganisation, testConfig, type SeededOrg, type TestWorld } from '@tollgate/runtime/testing';
import { createServerApp, createServerHttp } from '../src';

// Two instances on one PostgreSQL server (collected only with TEST_DATABASE_URL), each with its own
// connection pool, change feed and signing-key cache. An organisation's first signed answers, asked
// of both at once, must all be signed with ONE key: the one `GET /signing-key` serves. (Before the
// fix each instance, and each concurrent request of one, made a key of its own: 2-3 active keys,
// an answer whose `publicHash` no served key has, and a verifier that could never check it.)

jest.setTimeout(120_000);

const silent = { info: () => undefined, error: () => undefined };
let world: TestWorld;
let second: Runtime;
const servers: Server[] = [];
let bases: string[];

async function listen(runtime: Runtime): Promise<string> {
  const server = createServerHttp(createServerApp(runtime));
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

beforeAll(async () => {
  world = await createTestWorld({ kind: 'postgres' });
  // The second instance opens the same database with a pool (and a LISTEN connection) of its own.
  second = await createRuntime(testConfig({ databaseUrl: world.db.url }), { clock: world.clock, logger: silent });
  bases = [await listen(world), await listen(second)];
});
afterAll(async () => {
  for (const s of servers) await new Promise((resolve) => s.close(resolve));
  await second?.close();
  await world?.close();
});

interface Check {
  capabilities: string[];
  capsHashed: string;
  publicHash: string;
  signature: string;
}

const get = async (url: string, key: string, version?: string) => {
  const res = await fetch(url, { headers: { 'x-api-key': key, ...(version ? { version } : {}) } });
  const text = await res.text();
  expect({ url, status: res.status }).toEqual({ url, status: 200 });
  return JSON.parse(text) as unknown;
};

/** The check of alice, on instance `i % 2`. */
const check = (org: SeededOrg, test: boolean, i: number) =>
  get(
    `${bases[i % 2]}/licenses/check?productUuid=${(test ? org.testKeys : org.keys)['products.notes']}&granteeIds=alice`,
    test ? org.testKey : org.liveKey,
  ) as Promise<Check>;

/** The public key `GET /signing-key` (v1) serves, on instance `i % 2`. */
const signingKey = async (org: SeededOrg, test: boolean, i: number) =>
  ((await get(`${bases[i % 2]}/signing-key`, test ? org.testKey : org.liveKey, 'v1')) as { data: { id: string; publicKey: string } }).data;

const verifies = (c: Check, publicKeyPem: string) =>
  verify('sha256', Buffer.from(c.capsHashed, 'utf8'), { key: publicKeyPem, dsaEncoding: 'der' }, Buffer.from(c.signature, 'hex'));

async function newOrganisation(name: string): Promise<SeededOrg> {
  const org = await seedOrganisation(world, name);
  for (const [tenant, keys] of [
    [org.tenant, org.keys],
    [org.testTenant, org.testKeys],
  ] as const)
    await world.core.licenses.createAdHoc(tenant, [
      { planUuid: keys['plans.notes.free'], member: 'alice@example.com', granteeId: 'alice' },
    ]);
  return org;
}

describe.each([
  ['live mode, legacy checks', false, 6, 0],
  ['test mode, v1 GET /signing-key and checks', true, 4, 4],
])('%s: concurrent first use on two instances makes one signing key', (_name, test, checks, keyReads) => {
  it.each([1, 2, 3])('round %i (a new organisation)', async (round) => {
    const org = await newOrganisation(`signrace-${test ? 'test' : 'live'}-${round}`);
    const tenant = test ? org.testTenant : org.tenant;
    // Every first request at once, alternating between the instances.
    const [answers, served] = await Promise.all([
      Promise.all(Array.from({ length: checks }, (_, i) => check(org, test, i))),
      Promise.all(Array.from({ length: keyReads }, (_, i) => signingKey(org, test, i + 1))),
    ]);

    // One active key of that organisation and mode, on both instances' view.
    const active = await world.core.signing.active(tenant);
    expect(active.map((k) => k.id)).toHaveLength(1);
    expect((await second.core.signing.active(tenant)).map((k) => k.id)).toEqual([active[0].id]);
    expect(new Set(served.map((k) => k.id))).toEqual(new Set(keyReads ? [active[0].id] : []));

    // Every answer carries one publicHash, the one later answers (of either instance) carry, and
    // verifies with the public key both instances serve now.
    const later = await Promise.all([check(org, test, 0), check(org, test, 1)]);
    const hashes = new Set([...answers, ...later].map((c) => c.publicHash));
    expect(hashes.size).toBe(1);
    const keys = await Promise.all([signingKey(org, test, 0), signingKey(org, test, 1)]);
    expect(keys.map((k) => k.id)).toEqual([active[0].id, active[0].id]);
    for (const c of [...answers, ...later]) expect(verifies(c, keys[0].publicKey)).toBe(true);
  });
});
