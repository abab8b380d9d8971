import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createPublicKey } from 'node:crypto';

import { createTestWorld, type TestWorld } from '@tollgate/runtime/testing';
import { runCli } from '../src';

let world: TestWorld;
let dir: string;
beforeAll(async () => {
  world = await createTestWorld();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tollgate-cli-'));
});
afterAll(async () => {
  await world?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

async function run(...argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(argv, world, { out: (l) => out.push(l), err: (l) => err.push(l) });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

const catalogYaml = `
organisation: cli-org
products:
  - key: notes
    name: notes-app
    currencies: [USD]
    capabilities: [edit]
    plans:
      - { key: free, displayName: Free, pricingType: free, capabilities: [edit] }
`;

describe('tollgate CLI', () => {
  it('creates a key shown once, lists keys without it, and revokes', async () => {
    const created = await run('keys', 'create', '--org', 'cli-org', '--scopes', 'products:read,licenses:read', '--test', '--json');
    expect(created.code).toBe(0);
    const { id, key, scopes, test } = JSON.parse(created.out);
    expect(key).toMatch(/^test_/);
    expect(scopes).toEqual(['products:read', 'licenses:read']);
    expect(test).toBe(true);
    const apiKeys = world.core.apiKeys;
    expect((await apiKeys.authenticate(key)).id).toBe(id);
    const listed = await run('keys', 'list', '--org', 'cli-org', '--json');
    expect(listed.out).not.toContain(key);
    expect(JSON.parse(listed.out)).toEqual([expect.objectContaining({ id, revokedAt: null })]);
    expect((await run('keys', 'revoke', id)).code).toBe(0);
    await expect(apiKeys.authenticate(key)).rejects.toMatchObject({ code: 'UNAUTHENTICATED' });
  });

  it('makes the read-only key a client library needs with --client', async () => {
    const created = await run('keys', 'create', '--org', 'cli-org', '--client', '--json');
    expect(created.code).toBe(0);
    const { key, scopes } = JSON.parse(created.out);
    expect(scopes).toEqual(['products:read', 'plans:read', 'pricing-tables:read', 'licenses:read']);
    const record = await world.core.apiKeys.authenticate(key);
    expect(record.name).toBe('client library');
    const both = await run('keys', 'create', '--org', 'cli-org', '--client', '--scopes', '*');
    expect(both.code).toBe(2);
    expect(both.err).toMatch(/--client or --scopes, not both/);
  });

  it('refuses bad scopes and missing options with a clear message', async () => {
    const bad = await run('keys', 'create', '--org', 'cli-org', '--scopes', 'everything');
    expect(bad.code).toBe(1);
    expect(bad.err).toMatch(/unknown scope everything/);
    expect((await run('keys', 'create')).code).toBe(2);
    expect((await run('frobnicate')).code).toBe(2);
  });

  it('imports a YAML catalog, prints keys to uuids with --json, and a second import changes nothing', async () => {
    const file = path.join(dir, 'catalog.yaml');
    fs.writeFileSync(file, catalogYaml);
    const first = await run('import', file, '--json');
    expect(first.code).toBe(0);
    const keys = JSON.parse(first.out);
    expect(Object.keys(keys).sort()).toEqual(['plans.notes.free', 'products.notes']);
    const again = await run('import', file);
    expect(again.out).toMatch(/0 created, 0 updated, \d+ unchanged/);
    fs.writeFileSync(path.join(dir, 'broken.yaml'), 'organisation: [unclosed');
    expect((await run('import', path.join(dir, 'broken.yaml'))).err).toMatch(/not valid YAML/);
  });

  it('exports the catalog as YAML that imports back unchanged', async () => {
    const exported = await run('export', '--org', 'cli-org');
    expect(exported.code).toBe(0);
    expect(exported.out).toMatch(/^organisation: cli-org/);
    const file = path.join(dir, 'exported.yaml');
    fs.writeFileSync(file, exported.out);
    expect((await run('import', file)).out).toMatch(/0 created, 0 updated/);
    expect(JSON.parse((await run('export', '--org', 'cli-org', '--json')).out).products[0].key).toBe('notes');
    expect((await run('export')).code).toBe(2);
  });

  it('prints the organisation public signing key as PEM, and rotates', async () => {
    const first = await run('keys', 'signing', '--org', 'cli-org');
    const pem = first.out.slice(0, first.out.indexOf('-----END PUBLIC KEY-----') + 24);
    expect(createPublicKey(pem).asymmetricKeyType).toBe('ec');
    world.clock.advanceDays(1);
    const rotated = await run('keys', 'signing', '--org', 'cli-org', '--rotate');
    expect(rotated.out).not.toEqual(first.out);
  });

  it('sets up the demo organisation with two keys', async () => {
    const demo = await run('demo');
    expect(demo.out).toMatch(/live key \(shown once\): live_/);
    expect(demo.out).toMatch(/test key \(shown once\): test_/);
    expect((await run('migrate')).out).toBe('database is up to date');
  });

  it('creates (secret shown once), lists and deletes webhook endpoints per mode', async () => {
    await run('keys', 'create', '--org', 'hooks-cli', '--json');
    const created = await run(
      'webhooks',
      'create',
      '--org',
      'hooks-cli',
      '--url',
      'https://vendor.example.com/hooks',
      '--events',
      'license.created,seats.changed',
      '--json',
    );
    expect(created.code).toBe(0);
    const hook = JSON.parse(created.out);
    expect(hook).toMatchObject({ url: 'https://vendor.example.com/hooks', events: ['license.created', 'seats.changed'], test: false });
    expect(hook.secret).toMatch(/^whsec_/);
    const text = await run('webhooks', 'create', '--org', 'hooks-cli', '--url', 'https://vendor.example.com/test', '--test');
    expect(text.out).toMatch(/secret: whsec_/);
    const live = JSON.parse((await run('webhooks', 'list', '--org', 'hooks-cli', '--json')).out);
    expect(live).toEqual([
      { id: hook.id, url: 'https://vendor.example.com/hooks', events: ['license.created', 'seats.changed'], test: false, active: true },
    ]);
    expect(JSON.parse((await run('webhooks', 'list', '--org', 'hooks-cli', '--test', '--json')).out)).toHaveLength(1);
    // The test mode cannot delete a live endpoint.
    expect((await run('webhooks', 'delete', hook.id, '--org', 'hooks-cli', '--test')).code).toBe(1);
    expect((await run('webhooks', 'delete', hook.id, '--org', 'hooks-cli')).out).toBe(`deleted ${hook.id}`);
    expect(JSON.parse((await run('webhooks', 'list', '--org', 'hooks-cli', '--json')).out)).toEqual([]);
    const bad = await run('webhooks', 'create', '--org', 'hooks-cli', '--url', 'https://vendor.example.com/x', '--events', 'nope');
    expect(bad.code).toBe(1);
    expect(bad.err).toMatch(/nope is not an event type/);
    expect((await run('webhooks', 'create', '--org', 'hooks-cli')).code).toBe(2);
    expect((await run('webhooks', 'list', '--org', 'nobody')).err).toMatch(/ORGANISATION_NOT_FOUND/);
  });
});

describe('tollgate usage and credits', () => {
  it('grants credits to an owner and verifies that every balance equals its ledger', async () => {
    const org = await world.core.apiKeys.ensureOrganisation('cli-usage');
    await world.core.usage.createMeter({ organisationId: org.id, isTest: false }, { slug: 'tokens', name: 'Tokens' });
    const granted = await run(
      'credits',
      'grant',
      '--org',
      'cli-usage',
      '--owner',
      'acme',
      '--meter',
      'tokens',
      '--amount',
      '500',
      '--json',
    );
    expect(granted.code).toBe(0);
    expect(JSON.parse(granted.out)).toMatchObject({ owner: 'acme', meter: 'tokens', granted: '500', remaining: '500' });
    const bad = await run('credits', 'grant', '--org', 'cli-usage', '--owner', 'acme', '--meter', 'nope', '--amount', '5');
    expect(bad.code).toBe(1);
    expect(bad.err).toContain('meterSlug');
    expect((await run('credits', 'grant', '--org', 'cli-usage')).code).toBe(2);
    const verified = await run('usage', 'verify');
    expect(verified).toMatchObject({ code: 0, out: 'every balance equals its ledger' });
    // A counter changed behind the ledger's back is reported, and the command fails.
    await world.db.uow.run(async (r) => {
      const [b] = await r.usage.openBalances({ organisationId: org.id, isTest: false }, 'acme');
      await r.usage.write({ balance: { ...b, used: b.used + 1n }, grants: [], holds: [], entries: [], keys: [] });
    });
    const broken = await run('usage', 'verify', '--json');
    expect(broken.code).toBe(1);
    expect(JSON.parse(broken.out).mismatches).toEqual([
      expect.objectContaining({ counters: expect.objectContaining({ used: '1' }), ledger: expect.objectContaining({ used: '0' }) }),
    ]);
  });
});
