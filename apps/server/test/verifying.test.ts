import fs from 'node:fs';
import path from 'node:path';
import request from 'supertest';
import { CLIENT_SCOPES } from '@tollgate/core';
import { createTestWorld, purchase, seedOrganisation, type SeededOrg, type TestWorld } from '@tollgate/runtime/testing';
import { createServerApp } from '../src';

// docs/api/verifying.md's snippets, run as written against real checks and the served public key.
let world: TestWorld;
let org: SeededOrg;
let app: ReturnType<typeof createServerApp>;
let clientKey: string;

type Check = { capabilities: string[]; capsHashed: string; signature: string };
type Verify = (check: Check, pem: string) => boolean | Promise<boolean>;

function snippet(tag: string): Verify {
  const doc = fs.readFileSync(path.join(__dirname, '..', '..', '..', 'docs', 'api', 'verifying.md'), 'utf8');
  const code = new RegExp('```js ' + tag + '\\n([\\s\\S]*?)```').exec(doc)?.[1];
  if (!code) throw new Error(`docs/api/verifying.md has no ${tag} snippet`);
  return new Function('require', `${code}\nreturn verifyCheck;`)(require) as Verify;
}

beforeAll(async () => {
  world = await createTestWorld();
  org = await seedOrganisation(world, 'verifying-org');
  await purchase(world, org.keys['plans.notes.team'], 'verified', 2);
  clientKey = (await world.core.apiKeys.create({ organisation: 'verifying-org', scopes: [...CLIENT_SCOPES], isTest: false })).plaintext;
  app = createServerApp(world);
});
afterAll(() => world?.close());

const check = async (encoding?: string) =>
  (
    await request(app)
      .get(`/licenses/check?productUuid=${org.keys['products.notes']}&granteeIds=verified${encoding ? `&sigEncode=${encoding}` : ''}`)
      .set('x-api-key', clientKey)
      .expect(200)
  ).body as Check & { publicHash: string };

describe('the public signing key', () => {
  it('is served by v1 (no version header needed) and the catalog, to a client key', async () => {
    const v1 = await request(app).get('/signing-key').set('x-api-key', clientKey).expect(200);
    expect(v1.body).toEqual({
      type: 'object',
      data: {
        id: expect.any(String),
        organisation: org.tenant.organisationId,
        publicKey: expect.stringMatching(/^-----BEGIN PUBLIC KEY-----\n[\s\S]+-----END PUBLIC KEY-----\n?$/),
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
      },
    });
    const catalog = await request(app).get('/api/signing-keys').set('authorization', `Bearer ${clientKey}`).expect(200);
    expect(catalog.body).toEqual(v1.body);
    await request(app).get('/signing-key').expect(401);
    const noLicenses = (await world.core.apiKeys.create({ organisation: 'verifying-org', scopes: ['products:read'], isTest: false }))
      .plaintext;
    await request(app).get('/signing-key').set('x-api-key', noLicenses).expect(403);
    await request(app).get('/api/signing-keys').set('authorization', `Bearer ${noLicenses}`).expect(403);
  });
});

describe('docs/api/verifying.md', () => {
  const pem = async () => (await request(app).get('/signing-key').set('x-api-key', clientKey).expect(200)).body.data.publicKey as string;

  it('verifies a DER check with the Node snippet, and refuses a changed one', async () => {
    const verify = snippet('node-verify');
    const c = await check();
    const key = await pem();
    expect(await verify(c, key)).toBe(true);
    expect(await verify({ ...c, capsHashed: `${c.capsHashed},admin` }, key)).toBe(false);
    // The capabilities an app reads must be the ones signed.
    expect(await verify({ ...c, capabilities: [...c.capabilities, 'admin'] }, key)).toBe(false);
  });

  it('verifies a P1363 check with the WebCrypto snippet, and refuses a changed one', async () => {
    const verify = snippet('browser-verify');
    const c = await check('P1363');
    expect(c.signature).toMatch(/^[0-9a-f]{128}$/);
    const key = await pem();
    expect(await verify(c, key)).toBe(true);
    const flipped = c.signature.slice(0, -1) + (c.signature.endsWith('0') ? '1' : '0');
    expect(await verify({ ...c, signature: flipped }, key)).toBe(false);
    expect(await verify({ ...c, capabilities: [...c.capabilities, 'admin'] }, key)).toBe(false);
  });

  it('follows a rotation: the old key refuses new checks, the served key accepts them', async () => {
    const verify = snippet('node-verify');
    const before = await pem();
    await world.core.signing.rotate(org.tenant);
    const after = await pem();
    expect(after).not.toBe(before);
    const c = await check();
    expect(await verify(c, before)).toBe(false);
    expect(await verify(c, after)).toBe(true);
  });
});

describe('signing keys per mode (security audit)', () => {
  it("a test-mode key's signed check does not verify with the live public key; each mode's route serves its own key", async () => {
    const verify = snippet('node-verify');
    // What anyone holding a test-mode key can do: give a grantee capabilities in test mode and ask.
    await purchase(world, org.testKeys['plans.notes.team'], 'verified', 2);
    const testCheck = (
      await request(app)
        .get(`/licenses/check?productUuid=${org.testKeys['products.notes']}&granteeIds=verified`)
        .set('x-api-key', org.testKey)
        .expect(200)
    ).body as Check & { publicHash: string };
    const liveCheck = await check();
    // The signed text alone does not name the mode: the same capabilities give the same capsHashed.
    expect(testCheck.capsHashed).toBe(liveCheck.capsHashed);

    const liveKey = (await request(app).get('/signing-key').set('x-api-key', clientKey).expect(200)).body.data;
    const testKey = (await request(app).get('/signing-key').set('x-api-key', org.testKey).expect(200)).body.data;
    expect(testKey.id).not.toBe(liveKey.id);
    expect(testKey.publicKey).not.toBe(liveKey.publicKey);
    const catalog = (k: string) => request(app).get('/api/signing-keys').set('authorization', `Bearer ${k}`).expect(200);
    expect((await catalog(org.testKey)).body.data).toEqual(testKey);
    expect((await catalog(clientKey)).body.data).toEqual(liveKey);

    // The vendor's live app verifies with the live key: the test-mode signature is refused.
    expect(await verify(testCheck, liveKey.publicKey)).toBe(false);
    expect(await verify(liveCheck, liveKey.publicKey)).toBe(true);
    // A test-mode verifier fetches the test key with a test-mode API key.
    expect(await verify(testCheck, testKey.publicKey)).toBe(true);
    expect(await verify(liveCheck, testKey.publicKey)).toBe(false);
  });
});
