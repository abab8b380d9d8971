import { createTestWorld, type TestWorld } from '@tollgate/runtime/testing';
import { runCli } from '../src';

/* `tollgate keys create --scopes ""` made a full-access key (no scope read as `*`): it is misuse now,
   one line and exit code 2, and no key is made. Without --scopes the key is `*`, as the help says. */
let world: TestWorld;
beforeAll(async () => {
  world = await createTestWorld();
});
afterAll(() => world?.close());

async function run(...argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(argv, world, { out: (l) => out.push(l), err: (l) => err.push(l) });
  return { code, out, err };
}

it('refuses an empty --scopes with one line and exit 2, making no key; no --scopes still means *', async () => {
  await run('orgs', 'create', 'scopes-cli');
  for (const scopes of ['', ',', ' , ']) {
    const r = await run('keys', 'create', '--org', 'scopes-cli', '--scopes', scopes);
    expect(r.code).toBe(2);
    expect(r.err).toHaveLength(1);
    expect(r.err[0]).toMatch(/^tollgate: --scopes names no scope/);
    expect(r.out).toEqual([]);
  }
  expect(await world.core.apiKeys.list('scopes-cli')).toEqual([]);
  const made = await run('keys', 'create', '--org', 'scopes-cli', '--json');
  expect(made.code).toBe(0);
  expect(JSON.parse(made.out[0]).scopes).toEqual(['*']);
});
