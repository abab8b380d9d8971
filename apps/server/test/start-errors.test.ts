import fs from 'node:fs';
import { createServer, type Server } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { builtEntry, freePort, runToEnd } from '@tollgate/runtime/testing';

// Processes start on a shared, busy machine: give them time.
jest.setTimeout(120_000);

// What a person sees when the server or the CLI cannot start: one clear line on stderr, no stack.
const SERVER = builtEntry('apps/server/dist/main.js');
const CLI = builtEntry('packages/cli/dist/bin.js');

let dataDir: string;
let busy: Server;
let busyPort: number;
beforeAll(async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tollgate-start-'));
  busy = createServer();
  await new Promise<void>((resolve) => busy.listen(0, resolve));
  busyPort = (busy.address() as { port: number }).port;
});
afterAll(async () => {
  await new Promise((r) => busy.close(r));
  fs.rmSync(dataDir, { recursive: true, force: true });
});

const oneLine = (stderr: string) => {
  const lines = stderr.trimEnd().split('\n');
  expect(lines).toHaveLength(1);
  expect(stderr).not.toMatch(/\n\s+at /);
  return lines[0];
};

describe('start-up errors', () => {
  it('a port in use', () => {
    const r = runToEnd(SERVER, [], { DATA_DIR: dataDir, PORT: String(busyPort) });
    expect(r.code).toBe(1);
    expect(oneLine(r.stderr)).toBe(`cannot start: port ${busyPort} is in use by another process; stop it or set PORT to a free port`);
    // The lock went with the process that failed: the next start is not refused.
    expect(fs.existsSync(path.join(dataDir, 'tollgate.lock'))).toBe(false);
  });

  it('an unreachable database (server and CLI)', async () => {
    const port = await freePort();
    const env = {
      DATABASE_URL: `postgres://postgres@127.0.0.1:${port}/tollgate`,
      TOLLGATE_SECRET: 'a secret of sixteen characters or more',
    };
    const expected = `cannot reach the database at 127.0.0.1:${port}: connection refused; check DATABASE_URL and that PostgreSQL is running`;
    const server = runToEnd(SERVER, [], { ...env, PORT: String(await freePort()) });
    expect(server.code).toBe(1);
    expect(oneLine(server.stderr)).toBe(expected);
    const cli = runToEnd(CLI, ['orgs', 'list'], env);
    expect(cli.code).toBe(1);
    expect(oneLine(cli.stderr)).toBe(`tollgate: ${expected}`);
  });

  it('a bad configuration: one line per bad variable', () => {
    const r = runToEnd(SERVER, [], { DATA_DIR: dataDir, PORT: 'eighty', SIGNER: 'rsa' });
    expect(r.code).toBe(1);
    expect(r.stderr.trimEnd().split('\n')).toEqual([
      'configuration error: PORT must be a whole number from 0 to 65535, got eighty',
      'configuration error: SIGNER must be one of ecdsa, hmac, got rsa',
    ]);
    const cli = runToEnd(CLI, ['orgs', 'list'], { DATA_DIR: dataDir, SIGNER: 'rsa' });
    expect(cli.code).toBe(1);
    expect(oneLine(cli.stderr)).toBe('tollgate: configuration error: SIGNER must be one of ecdsa, hmac, got rsa');
  });

  it('a missing import file', () => {
    const r = runToEnd(CLI, ['import', 'no-such-catalog.yaml'], { DATA_DIR: dataDir });
    expect(r.code).toBe(1);
    expect(oneLine(r.stderr)).toBe('tollgate: no-such-catalog.yaml: no such file');
  });

  it('--version and --help on a terminal', () => {
    const version = runToEnd(CLI, ['--version'], {});
    expect(version).toMatchObject({ code: 0, stdout: expect.stringMatching(/^\d+\.\d+\.\d+\n$/) });
    const help = runToEnd(CLI, ['keys', 'create', '--help'], {});
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Usage: tollgate keys create \[options\]/);
  });
});
