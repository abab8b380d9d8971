import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createTestWorld, runToEnd, builtEntry, type TestWorld } from '@tollgate/runtime/testing';
import type { Runtime } from '@tollgate/runtime';
import { runCli } from '../src';
import { databaseLine, openRuntime } from '../src/open';

// Processes start on a shared, busy machine: give them time.
jest.setTimeout(120_000);

/* What the ops audit left: the CLI now names the database it used (a fresh embedded one plainly),
   refuses blank organisation names, and names a key id that is not one. */
let world: TestWorld;
let root: string;
beforeAll(async () => {
  world = await createTestWorld();
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'tollgate-cli-ops-'));
});
afterAll(async () => {
  await world?.close();
  fs.rmSync(root, { recursive: true, force: true });
});

async function run(...argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(argv, world, { out: (l) => out.push(l), err: (l) => err.push(l) });
  return { code, out, err };
}

describe('which database a command used', () => {
  it('is one line on stderr: a new embedded database said plainly, then by its directory; stdout stays JSON', async () => {
    const dataDir = path.join(root, 'fresh', 'data');
    const once = async (...argv: string[]) => {
      const out: string[] = [];
      const err: string[] = [];
      let runtime: Runtime | undefined;
      try {
        const code = await runCli(argv, async () => (runtime ??= await openRuntime(argv, { DATA_DIR: dataDir }, (l) => err.push(l))), {
          out: (l) => out.push(l),
          err: (l) => err.push(l),
        });
        return { code, out, err };
      } finally {
        await runtime?.close();
      }
    };
    const first = await once('orgs', 'create', 'fresh-db', '--json');
    expect(first.code).toBe(0);
    expect(JSON.parse(first.out.join('\n'))).toMatchObject({ name: 'fresh-db', created: true });
    expect(first.err).toEqual([
      `tollgate: database: NEW embedded database created in ${dataDir}: DATABASE_URL is not set, so this is no existing server's database`,
    ]);
    const second = await once('orgs', 'list', '--json');
    expect(JSON.parse(second.out.join('\n')).map((o: { name: string }) => o.name)).toEqual(['fresh-db']);
    expect(second.err).toEqual([`tollgate: database: embedded PGlite in ${dataDir} (DATABASE_URL is not set)`]);
    // A command that never opens the database says nothing about one.
    expect((await once('keys', 'revoke', 'nope')).err).toEqual([
      'tollgate: nope is not a key id: <id> is a UUID (tollgate keys list --org NAME shows them)',
    ]);
    // Not new is told under the data directory's lock: another process that made the database
    // between this one's start and its lock (its lock released just before this one's) made it.
    const moved = path.join(root, 'fresh', 'pglite-made-by-another');
    fs.renameSync(path.join(dataDir, 'pglite'), moved);
    const write = fs.writeFileSync;
    jest.spyOn(fs, 'writeFileSync').mockImplementation((file, data, options) => {
      if (String(file) === path.join(dataDir, 'tollgate.lock') && fs.existsSync(moved)) fs.renameSync(moved, path.join(dataDir, 'pglite'));
      write(file, data, options);
    });
    try {
      const third = await once('orgs', 'list', '--json');
      expect(JSON.parse(third.out.join('\n')).map((o: { name: string }) => o.name)).toEqual(['fresh-db']);
      expect(third.err).toEqual([`tollgate: database: embedded PGlite in ${dataDir} (DATABASE_URL is not set)`]);
    } finally {
      jest.restoreAllMocks();
    }
  });

  it('names a PostgreSQL server by its URL with the password masked', () => {
    expect(databaseLine({ databaseUrl: 'postgres://tollgate:hunter2@db.internal:5432/tollgate', dataDir: '/ignored' }, false)).toBe(
      'database: PostgreSQL postgres://tollgate:***@db.internal:5432/tollgate',
    );
    expect(databaseLine({ databaseUrl: 'postgresql://db/t?user=x&password=hunter2', dataDir: '/x' }, true)).toBe(
      'database: PostgreSQL postgresql://db/t?user=x&password=***',
    );
  });

  it('the built command prints it on stderr, its output alone on stdout', () => {
    const dataDir = path.join(root, 'built');
    const r = runToEnd(builtEntry('packages/cli/dist/bin.js'), ['orgs', 'create', 'built-db', '--json'], { DATA_DIR: dataDir });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ name: 'built-db', created: true });
    expect(r.stderr).toBe(
      `tollgate: database: NEW embedded database created in ${dataDir}: DATABASE_URL is not set, so this is no existing server's database\n`,
    );
  });
});

describe('organisation names', () => {
  it('refuses a blank name or one with blanks around it, in one line naming name, creating nothing', async () => {
    const before = (await world.core.apiKeys.organisations()).length;
    for (const name of ['', '   ', ' acme', 'acme\t']) {
      const r = await run('orgs', 'create', name);
      expect(r.code).toBe(1);
      expect(r.err).toHaveLength(1);
      expect(r.err[0]).toMatch(/^tollgate: name: must not (be blank|begin or end with blanks)/);
      expect(r.out).toEqual([]);
    }
    const viaKeys = await run('keys', 'create', '--org', ' ', '--create-org');
    expect(viaKeys).toMatchObject({ code: 1, err: ['tollgate: name: must not be blank'] });
    const file = path.join(root, 'blank-org.yaml');
    fs.writeFileSync(file, 'organisation: " spaced "\nproducts: []\n');
    const imported = await run('import', file, '--create-org');
    expect(imported).toMatchObject({ code: 1, err: [expect.stringMatching(/^tollgate: organisation: must not begin or end with blanks/)] });
    expect((await world.core.apiKeys.organisations()).length).toBe(before);
    expect((await run('orgs', 'create', 'inner space')).code).toBe(0);
  });

  it('orgs create refuses a blank name before opening the database (no fresh ./data, no database line)', async () => {
    let opened = false;
    const err: string[] = [];
    const code = await runCli(
      ['orgs', 'create', ''],
      async () => {
        opened = true;
        return world;
      },
      { out: () => undefined, err: (l) => err.push(l) },
    );
    expect({ code, err, opened }).toEqual({ code: 1, err: ['tollgate: name: must not be blank'], opened: false });
  });

  it("the import's new organisation is named by the rule inside the import (core, not only the CLI)", async () => {
    const before = (await world.core.apiKeys.organisations()).length;
    for (const organisation of ['   ', ' spaced', 'tab\t'])
      for (const dryRun of [false, true])
        await expect(world.core.importer.apply({ organisation, products: [] }, { createOrganisation: true, dryRun })).rejects.toMatchObject(
          {
            code: 'VALIDATION_FAILED',
            details: [{ property: 'organisation', error: expect.stringMatching(/^must not (be blank|begin or end with blanks)/) }],
          },
        );
    expect((await world.core.apiKeys.organisations()).length).toBe(before);
    // An existing organisation is found as named; a good new name is made.
    await expect(
      world.core.importer.apply({ organisation: 'made by import', products: [] }, { createOrganisation: true }),
    ).resolves.toMatchObject({
      created: 0,
    });
    expect((await world.core.apiKeys.organisations()).map((o) => o.name)).toContain('made by import');
  });
});

describe('ids that are not ids', () => {
  it('keys revoke and webhooks delete name the argument in one line, exit 2', async () => {
    const key = await run('keys', 'revoke', 'notauuid');
    expect(key).toMatchObject({ code: 2, out: [] });
    expect(key.err).toEqual(['tollgate: notauuid is not a key id: <id> is a UUID (tollgate keys list --org NAME shows them)']);
    await run('orgs', 'create', 'ids-cli');
    const endpoint = await run('webhooks', 'delete', 'notauuid', '--org', 'ids-cli');
    expect(endpoint).toMatchObject({ code: 2, out: [] });
    expect(endpoint.err).toEqual([
      'tollgate: notauuid is not an endpoint id: <id> is a UUID (tollgate webhooks list --org NAME shows them)',
    ]);
    // A well-formed id that names no key is the core's answer, as before.
    expect((await run('keys', 'revoke', '00000000-0000-4000-8000-000000000000')).err).toEqual(['tollgate: api key not found']);
  });
});
