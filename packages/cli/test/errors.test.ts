import { createTestWorld, type TestWorld } from '@tollgate/runtime/testing';
import { domainLine, runCli } from '../src/program';

// The README promises one line per error: a refusal of the core (a domain error) included.
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

describe('CLI refusals of the core', () => {
  it('are one line, prefixed like every other error, naming the input once', async () => {
    await run('orgs', 'create', 'errors-cli');
    const bad = await run('credits', 'grant', '--org', 'errors-cli', '--owner', 'acme', '--meter', 'nope', '--amount', '5');
    expect(bad.code).toBe(1);
    expect(bad.err).toHaveLength(1);
    expect(bad.err[0]).toMatch(/^tollgate: .*meterSlug/);
  });

  it('joins the message and the inputs it does not already name', () => {
    expect(domainLine('amount: must be greater than 0', [{ property: 'amount', error: 'must be greater than 0' }])).toBe(
      'amount: must be greater than 0',
    );
    expect(
      domainLine('the request is invalid', [
        { property: 'a', error: 'x' },
        { property: 'b', error: 'y' },
      ]),
    ).toBe('the request is invalid; a: x; b: y');
    // A detail that says what the message says is not said twice (`keys create --scopes nope:read`).
    expect(domainLine('unknown scope nope:read', [{ property: 'scopes', error: 'unknown scope nope:read' }])).toBe(
      'unknown scope nope:read',
    );
  });
});
