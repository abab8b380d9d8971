import { createTestDatabase, type TestDatabase } from '@tollgate/adapter-postgres';
import { builtEntry, freePort, runToEnd, startProcess } from '@tollgate/runtime/testing';

// Processes start on a shared, busy machine: give them time.
jest.setTimeout(120_000);

// A PostgreSQL server is a real deployment: the server starts it empty, with no demo organisation
// and no full-scope keys printed to its logs.
const SERVER = builtEntry('apps/server/dist/main.js');
const CLI = builtEntry('packages/cli/dist/bin.js');
const SECRET = 'no-demo test secret, not for production';
const PASSWORD = 'no-demo-hunter2';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase('postgres');
});
afterAll(() => db?.drop());

it('creates no demo organisation and prints no key on an empty PostgreSQL database', async () => {
  // With a password in the URL (the test server trusts loopback, so any password connects): no
  // line of the server or the CLI shows it.
  const url = new URL(db.url ?? '');
  url.password = PASSWORD;
  const env = { DATABASE_URL: url.toString(), TOLLGATE_SECRET: SECRET };
  const server = await startProcess(SERVER, env, await freePort());
  const home = await fetch(server.url).then((r) => r.text());
  expect(await server.stop()).toBe(0);
  expect(server.stdout()).not.toMatch(/API key|live_\w|test_\w|[Dd]emo/);
  expect(server.stdout()).toContain('An empty database: create the first organisation with `npx tollgate orgs create NAME`');
  expect(home).not.toMatch(/pricing-tables\/[0-9a-f-]+\/page/);
  const orgs = runToEnd(CLI, ['orgs', 'list', '--json'], env);
  // stderr names the database the command used, password masked (stdout stays the JSON).
  expect(orgs.stderr).toBe(`tollgate: database: PostgreSQL postgres://${url.username}:***@${url.host}${url.pathname}${url.search}\n`);
  for (const text of [server.stdout(), server.stderr(), orgs.stdout, orgs.stderr]) expect(text).not.toContain(PASSWORD);
  expect(JSON.parse(orgs.stdout)).toEqual([]);
});
