import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { builtEntry, freePort, runToEnd, startProcess } from '@tollgate/runtime/testing';

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
