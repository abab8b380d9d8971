import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { builtEntry, freePort, processEnv, REPO_ROOT, runToEnd, startProcess } from '@tollgate/runtime/testing';

// Processes start on a shared, busy machine: give them time.
jest.setTimeout(120_000);

// What the ops audit left at start-up: the banner with PUBLIC_URL, an empty METRICS_TOKEN, and a
// DATA_DIR that cannot be a directory (under /proc Node's recursive mkdir never returned).
const SERVER = builtEntry('apps/server/dist/main.js');
const CLI = builtEntry('packages/cli/dist/bin.js');

let dataDir: string;
beforeAll(() => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tollgate-ops-start-'));
});
afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }));

it('the banner shows the local port beside PUBLIC_URL', async () => {
  const port = await freePort();
  const server = await startProcess(SERVER, { DATA_DIR: dataDir, PUBLIC_URL: 'https://billing.example.com' }, port);
  expect(await server.stop()).toBe(0);
  expect(server.stdout()).toContain(
    `Tollgate listening on http://localhost:${port} (public URL https://billing.example.com; embedded PGlite in ${dataDir})`,
  );
});

it('with PORT=0 the start-up lines name the port bound, never localhost:0', async () => {
  const fresh = fs.mkdtempSync(path.join(os.tmpdir(), 'tollgate-ops-port0-'));
  const child = spawn(process.execPath, [SERVER], { env: processEnv({ DATA_DIR: fresh, PORT: '0' }), cwd: REPO_ROOT });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  try {
    const deadline = Date.now() + 60_000;
    while (!/Demo pricing page/.test(out) && child.exitCode === null && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    const port = /listening on http:\/\/localhost:(\d+) /.exec(out)?.[1];
    expect(port).toMatch(/^[1-9]\d*$/);
    expect(out).not.toContain('localhost:0');
    const lines = out.split('\n');
    expect(lines).toEqual(
      expect.arrayContaining([
        `  legacy:  http://localhost:${port}/products            (x-api-key)`,
        `  v1:      http://localhost:${port}/products            (x-api-key, version: v1)`,
        `  catalog: http://localhost:${port}/api/products        (Authorization: Bearer)`,
        expect.stringMatching(new RegExp(`^  try: {5}curl -H "x-api-key: test_[\\w-]+" http://localhost:${port}/products$`)),
        // Its links (and the checkout pages they lead to) are built before the port is known.
        'Demo pricing page: not linked, as its links need an address: set PUBLIC_URL beside PORT=0',
      ]),
    );
    expect(await fetch(`http://127.0.0.1:${port}/healthz`).then((r) => r.status)).toBe(200);
  } finally {
    child.kill('SIGTERM');
    await exited;
    fs.rmSync(fresh, { recursive: true, force: true });
  }
});

it('the demo lines use PUBLIC_URL where it is set', async () => {
  const fresh = fs.mkdtempSync(path.join(os.tmpdir(), 'tollgate-ops-public-'));
  try {
    const server = await startProcess(SERVER, { DATA_DIR: fresh, PUBLIC_URL: 'https://billing.example.com' }, await freePort());
    expect(await server.stop()).toBe(0);
    expect(server.stdout()).toContain('  legacy:  https://billing.example.com/products            (x-api-key)');
    expect(server.stdout()).toMatch(/^ {2}try: {5}curl -H "x-api-key: test_[\w-]+" https:\/\/billing\.example\.com\/products$/m);
    expect(server.stdout()).toMatch(
      /^Demo pricing page \(sandbox payments\): https:\/\/billing\.example\.com\/pricing-tables\/[0-9a-f-]+\/page\?token=/m,
    );
  } finally {
    fs.rmSync(fresh, { recursive: true, force: true });
  }
});

it('an empty METRICS_TOKEN is refused in one line naming it', async () => {
  const r = runToEnd(SERVER, [], { DATA_DIR: dataDir, PORT: String(await freePort()), METRICS_TOKEN: '' });
  expect(r.code).toBe(1);
  expect(r.stderr).toBe(
    'configuration error: METRICS_TOKEN is set but blank, which would leave /metrics open: give it a token, or leave it unset for an open /metrics\n',
  );
});

it('a DATA_DIR under /proc is one line naming DATA_DIR, server and CLI, at once', async () => {
  const line =
    'configuration error: DATA_DIR /proc/tollgate-nowhere/data cannot be used: cannot create /proc/tollgate-nowhere: the file system does not allow a directory there (ENOENT)';
  const server = runToEnd(SERVER, [], { DATA_DIR: '/proc/tollgate-nowhere/data', PORT: String(await freePort()) });
  expect(server).toMatchObject({ code: 1, stderr: `${line}\n` });
  // With TOLLGATE_SECRET the configuration touches no disk: the data directory's lock finds it.
  const cli = runToEnd(CLI, ['orgs', 'list'], { DATA_DIR: '/proc/tollgate-nowhere/data', TOLLGATE_SECRET: 'sixteen characters at least' });
  expect(cli).toMatchObject({ code: 1, stdout: '', stderr: `tollgate: ${line}\n` });
});
