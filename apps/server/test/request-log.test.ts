import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { builtEntry, freePort, startProcess } from '@tollgate/runtime/testing';

// Processes start on a shared, busy machine: give them time.
jest.setTimeout(120_000);

// The request log is written to stdout asynchronously, in buffered chunks (issue 22): a stop
// signal must still write every line of every request answered before it.
const SERVER = builtEntry('apps/server/dist/main.js');

let dataDir: string;
beforeAll(() => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tollgate-request-log-'));
});
afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }));

const lines = (stdout: string) =>
  stdout
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);

it('loses no request line at SIGTERM: every answered request has its line, in the same form', async () => {
  const server = await startProcess(SERVER, { DATA_DIR: dataDir, LOG_LEVEL: 'info' }, await freePort());
  try {
    const key = /live API key \(shown once\): (\S+)/.exec(server.stdout())?.[1];
    expect(key).toBeDefined();
    const headers = { 'x-api-key': key as string };
    const products = (await (await fetch(`${server.url}/products`, { headers })).json()) as { uuid: string }[];
    const product = products[0].uuid;
    const ids: string[] = [];
    // Fewer bytes than a buffer's worth at the end: the last lines are still held when the signal comes.
    for (let i = 0; i < 203; i++) {
      const id = `req-${i}`;
      const res = await fetch(`${server.url}/licenses/check?productUuid=${product}&granteeIds=user-${i % 7}`, {
        headers: { ...headers, 'x-request-id': id },
      });
      await res.arrayBuffer();
      expect([200, 204]).toContain(res.status);
      ids.push(id);
    }
    expect(await server.stop()).toBe(0);
    const checks = lines(server.stdout()).filter((l) => l.msg === 'request' && l.path === '/licenses/check');
    expect(checks.map((l) => l.requestId)).toEqual(ids);
    for (const l of checks) {
      expect(Object.keys(l)).toEqual(['level', 'time', 'requestId', 'method', 'path', 'status', 'ms', 'msg']);
      expect(l).toMatchObject({ level: 'info', method: 'GET', status: expect.any(Number), ms: expect.any(Number) });
    }
    expect(checks.map((l) => JSON.stringify(l)).join('\n')).not.toContain(key as string);
  } finally {
    await server.stop();
  }
});
