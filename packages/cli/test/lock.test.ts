import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { builtEntry, freePort, runToEnd, startProcess, type Running } from '@tollgate/runtime/testing';

// Processes start on a shared, busy machine: give them time.
jest.setTimeout(120_000);

// A server and a command line beside it on one embedded database: the second process is refused
// with one line naming the holder, and neither writes behind the other's back.
const SERVER = builtEntry('apps/server/dist/main.js');
const CLI = builtEntry('packages/cli/dist/bin.js');

let dataDir: string;
let server: Running | undefined;
beforeAll(() => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tollgate-lock-'));
});
afterAll(async () => {
  await server?.stop();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

describe('the embedded database lock', () => {
  it('refuses the CLI while a server holds the data directory, naming the server, and lets it in once the server stops', async () => {
    server = await startProcess(SERVER, { DATA_DIR: dataDir }, await freePort());
    const cli = runToEnd(CLI, ['keys', 'create', '--org', 'demo'], { DATA_DIR: dataDir });
    expect(cli.code).toBe(1);
    expect(cli.stdout).toBe('');
    const lines = cli.stderr.trimEnd().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      new RegExp(
        `^tollgate: the embedded database in ${dataDir} is in use by process ${server.process.pid} \\(tollgate server, since \\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z\\); stop it first`,
      ),
    );
    // A second server is refused the same way, and says so in one line.
    const second = runToEnd(SERVER, [], { DATA_DIR: dataDir, PORT: String(await freePort()) });
    expect(second.code).toBe(1);
    expect(second.stderr.trimEnd().split('\n')).toEqual([
      expect.stringMatching(/^cannot start: the embedded database in .* is in use by process \d+ \(tollgate server/),
    ]);

    expect(await server.stop()).toBe(0);
    server = undefined;
    expect(fs.existsSync(path.join(dataDir, 'tollgate.lock'))).toBe(false);
    const after = runToEnd(CLI, ['keys', 'create', '--org', 'demo', '--json'], { DATA_DIR: dataDir });
    expect(after.stderr).toBe(`tollgate: database: embedded PGlite in ${dataDir} (DATABASE_URL is not set)\n`);
    expect(after.code).toBe(0);
    expect(JSON.parse(after.stdout).key).toMatch(/^live_/);
  });

  it('takes over a lock its holder left behind (the process is gone)', () => {
    fs.writeFileSync(
      path.join(dataDir, 'tollgate.lock'),
      JSON.stringify({ pid: 2 ** 22 + 12345, command: 'tollgate server', since: 'earlier' }),
    );
    const r = runToEnd(CLI, ['orgs', 'list', '--json'], { DATA_DIR: dataDir });
    expect(r.stderr).toBe(`tollgate: database: embedded PGlite in ${dataDir} (DATABASE_URL is not set)\n`);
    expect(JSON.parse(r.stdout).map((o: { name: string }) => o.name)).toContain('demo');
    expect(fs.existsSync(path.join(dataDir, 'tollgate.lock'))).toBe(false);
  });
});
