import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createPublicKey } from 'node:crypto';

import { createTestWorld, type TestWorld } from '@tollgate/runtime/testing';
import { runCli, VERSION } from '../src';

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
  it('prints help for the program and for each command, and its version, without opening the database', async () => {
    const opened: string[] = [];
    const io = { out: (l: string) => opened.push(`out:${l}`), err: (l: string) => opened.push(`err:${l}`) };
    const never = async () => {
      throw new Error('the database was opened');
    };
    expect(await runCli(['--version'], never, io)).toBe(0);
    expect(opened).toEqual([`out:${VERSION}`]);
    const help = async (...argv: string[]) => {
      const lines: string[] = [];
      const code = await runCli(argv, never, { out: (l) => lines.push(l), err: (l) => lines.push(l) });
      return { code, text: lines.join('\n') };
    };
    const top = await help('--help');
    expect(top.code).toBe(0);
    for (const command of ['migrate', 'orgs', 'keys', 'webhooks', 'import', 'export', 'demo'])
      expect(top.text).toMatch(new RegExp(`\\n  ${command}\\b`));
    const keysCreate = await help('keys', 'create', '--help');
    expect(keysCreate.code).toBe(0);
    expect(keysCreate.text).toMatch(/^Usage: tollgate keys create \[options\]/);
    expect(keysCreate.text).toMatch(/--create-org/);
    expect((await help('help', 'import')).text).toMatch(/^Usage: tollgate import \[options\] <file>/);
    expect((await help()).code).toBe(0);
  });

  it('answers misuse with one line and exit code 2', async () => {
    const unknown = await run('frobnicate');
    expect(unknown.code).toBe(2);
    expect(unknown.err).toBe("error: unknown command 'frobnicate'");
    const typo = await run('keys', 'craete');
    expect(typo.code).toBe(2);
    expect(typo.err).toMatch(/unknown command 'craete'\n\(Did you mean create\?\)/);
    const option = await run('keys', 'list', '--org', 'x', '--nope');
    expect(option).toMatchObject({ code: 2, err: "error: unknown option '--nope'" });
    expect((await run('keys', 'create')).err).toBe("error: required option '--org <name>' not specified");
    expect((await run('keys', 'revoke')).err).toBe("error: missing required argument 'id'");
  });

  it('creates and lists organisations', async () => {
    const created = await run('orgs', 'create', 'orgs-cli-b', '--json');
    expect(created.code).toBe(0);
    expect(JSON.parse(created.out)).toMatchObject({ name: 'orgs-cli-b', created: true });
    expect((await run('orgs', 'create', 'orgs-cli-b')).out).toMatch(/^already exists: organisation orgs-cli-b/);
    await run('orgs', 'create', 'orgs-cli-a');
    const listed = JSON.parse((await run('orgs', 'list', '--json')).out) as { name: string }[];
    const names = listed.map((o) => o.name).filter((n) => n.startsWith('orgs-cli-'));
    expect(names).toEqual(['orgs-cli-a', 'orgs-cli-b']);
    expect((await run('orgs', 'list')).out).toMatch(/^orgs-cli-a {2}[0-9a-f-]{36} {2}created /m);
  });

  it('refuses an unknown organisation unless --create-org (a misspelt --org creates nothing)', async () => {
    await run('orgs', 'create', 'acme-cli');
    const before = (await world.core.apiKeys.organisations()).length;
    for (const argv of [
      ['keys', 'create', '--org', 'acme-clj'],
      ['keys', 'signing', '--org', 'acme-clj'],
      ['webhooks', 'create', '--org', 'acme-clj', '--url', 'https://vendor.example.com/hooks'],
    ]) {
      const r = await run(...argv);
      expect(r).toMatchObject({
        code: 1,
        err: 'tollgate: no organisation named acme-clj (tollgate orgs list shows them; add --create-org to create it)',
      });
    }
    const file = path.join(dir, 'misspelt.yaml');
    fs.writeFileSync(file, catalogYaml.replace('organisation: cli-org', 'organisation: acme-clj'));
    expect((await run('import', file)).err).toMatch(/^tollgate: no organisation named acme-clj/);
    expect((await world.core.apiKeys.organisations()).length).toBe(before);
    expect((await run('keys', 'create', '--org', 'acme-clj', '--create-org', '--json')).code).toBe(0);
    expect((await run('import', file)).code).toBe(0);
  });

  it('import --create-org makes the organisation in the import: a failed import leaves none', async () => {
    const file = path.join(dir, 'failing.yaml');
    // The schema takes it; the import refuses its unknown capability.
    fs.writeFileSync(
      file,
      catalogYaml
        .replace('organisation: cli-org', 'organisation: made-by-import')
        .replace('capabilities: [edit] }', 'capabilities: [edti] }'),
    );
    const failed = await run('import', file, '--create-org');
    expect(failed).toMatchObject({ code: 1, err: expect.stringContaining('unknown capability edti') });
    expect((await world.core.apiKeys.organisations()).map((x) => x.name)).not.toContain('made-by-import');
    fs.writeFileSync(file, catalogYaml.replace('organisation: cli-org', 'organisation: made-by-import'));
    expect((await run('import', file, '--create-org')).code).toBe(0);
    expect((await world.core.apiKeys.organisations()).map((x) => x.name)).toContain('made-by-import');
  });

  it('names a missing or unreadable import file in one line', async () => {
    const missing = await run('import', path.join(dir, 'nowhere.yaml'));
    expect(missing).toMatchObject({ code: 1, err: `tollgate: ${path.join(dir, 'nowhere.yaml')}: no such file` });
  });

  it('creates a key shown once, lists keys without it, and revokes', async () => {
    const created = await run(
      'keys',
      'create',
      '--org',
      'cli-org',
      '--create-org',
      '--scopes',
      'products:read,licenses:read',
      '--test',
      '--json',
    );
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
    expect(scopes).toEqual(['products:read', 'plans:read', 'pricing-tables:read', 'checks:read']);
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
    expect((await run('import', path.join(dir, 'broken.yaml'))).err).toMatch(/broken\.yaml:1: /);
  });

  it('checks the file against its schema: each problem one line with its path and line number, nothing written', async () => {
    const file = path.join(dir, 'wrong.yaml');
    fs.writeFileSync(
      file,
      `organisation: cli-org
products:
  - key: wrong
    name: wrong-app
    currencies: [USD]
    capabilities: [edit]
    plans:
      - key: team
        pricingType: paid
        licenseType: seat
        prices: { USD: 12, EUR: 11 }
        capabilites: [edit]
`,
    );
    const r = await run('import', file);
    expect(r.code).toBe(1);
    expect(r.err.split('\n')).toEqual([
      `tollgate: ${file}:10: products[0].plans[0].licenseType: must be one of user, perSeat, board, customId, got "seat"`,
      `tollgate: ${file}:12: products[0].plans[0].capabilites: unknown key capabilites (did you mean capabilities?); allowed: key, displayName, description, pricingType, licenseType, perSeatAmount, interval, length, evaluation, evalDays, trialDays, usageBased, visibility, active, prices, usage, capabilities, features`,
    ]);
    fs.writeFileSync(
      file,
      fs.readFileSync(file, 'utf8').replace('licenseType: seat', 'licenseType: perSeat').replace('capabilites', 'capabilities'),
    );
    expect((await run('import', file)).err).toBe(
      `tollgate: ${file}:11: products[0].plans[0].prices.EUR: EUR is not one of the product's currencies (USD); add it to products[0].currencies`,
    );
    const json = path.join(dir, 'wrong.json');
    fs.writeFileSync(json, JSON.stringify({ organisation: 'cli-org', colour: 'red', products: [{ key: 'x' }] }, null, 2));
    expect((await run('import', json)).err.split('\n')).toEqual([
      `tollgate: ${json}:3: colour: unknown key colour; allowed: organisation, test, products`,
      `tollgate: ${json}:5: products[0]: name is required`,
    ]);
    expect(JSON.parse((await run('export', '--org', 'cli-org', '--json')).out).products.map((p: { key: string }) => p.key)).not.toContain(
      'wrong',
    );
  });

  it('--dry-run shows what would change and writes nothing', async () => {
    const file = path.join(dir, 'dry.yaml');
    fs.writeFileSync(file, catalogYaml.replace('key: notes', 'key: dry').replace('notes-app', 'dry-app'));
    const dry = await run('import', file, '--dry-run');
    expect(dry.code).toBe(0);
    expect(dry.out.split('\n')).toEqual([
      'would create products.dry',
      'would create plans.dry.free',
      `dry run of ${file}: 2 to create, 0 to update, 0 unchanged; nothing written`,
    ]);
    expect(JSON.parse((await run('export', '--org', 'cli-org', '--json')).out).products.map((p: { key: string }) => p.key)).not.toContain(
      'dry',
    );
    expect((await run('import', file)).out).toMatch(/2 created/);
    fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace('displayName: Free', 'displayName: Gratis'));
    expect(JSON.parse((await run('import', file, '--dry-run', '--json')).out)).toEqual([{ key: 'plans.dry.free', change: 'updated' }]);
  });

  it('exports the catalog as YAML that imports back unchanged', async () => {
    const exported = await run('export', '--org', 'cli-org');
    expect(exported.code).toBe(0);
    expect(exported.out).toMatch(/^organisation: cli-org/);
    const file = path.join(dir, 'exported.yaml');
    fs.writeFileSync(file, exported.out);
    expect((await run('import', file)).out).toMatch(/0 created, 0 updated/);
    expect(JSON.parse((await run('export', '--org', 'cli-org', '--json')).out).products.map((p: { key: string }) => p.key)).toContain(
      'notes',
    );
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

  it('prints and rotates the test-mode signing key with --test, leaving the live key as it was', async () => {
    const live = (await run('keys', 'signing', '--org', 'cli-org')).out;
    const test = await run('keys', 'signing', '--org', 'cli-org', '--test');
    expect(test.code).toBe(0);
    expect(test.out).toMatch(/-----BEGIN PUBLIC KEY-----/);
    expect(test.out).not.toEqual(live);
    const rotated = await run('keys', 'signing', '--org', 'cli-org', '--test', '--rotate');
    expect(rotated.out).not.toEqual(test.out);
    expect((await run('keys', 'signing', '--org', 'cli-org')).out).toEqual(live);
    expect((await run('keys', 'signing', '--org', 'cli-org', '--test')).out).toEqual(rotated.out);
  });

  it('sets up the demo organisation with two keys', async () => {
    const demo = await run('demo');
    expect(demo.out).toMatch(/live key \(shown once\): live_/);
    expect(demo.out).toMatch(/test key \(shown once\): test_/);
    expect((await run('migrate')).out).toBe('database is up to date');
  });

  it('creates (secret shown once), lists and deletes webhook endpoints per mode', async () => {
    await run('orgs', 'create', 'hooks-cli');
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
    expect((await run('webhooks', 'list', '--org', 'nobody')).err).toMatch(/no organisation named nobody/);
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
