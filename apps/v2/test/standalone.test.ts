import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { builtEntry, freePort, runToEnd, startProcess, type Running } from '@tollgate/runtime/testing';

// A process starts on a shared, busy machine: give it time.
jest.setTimeout(120_000);

// v2 and v3 run alone (`node apps/v2/dist/main.js`) as a complete service (DESIGN section 13).
const CLI = builtEntry('packages/cli/dist/bin.js');
const CATALOG = `organisation: solo-v2
products:
  - key: notes
    name: notes-app
    currencies: [USD]
    capabilities: [edit]
    plans:
      - { key: free, displayName: Free, pricingType: free, licenseType: user, capabilities: [edit] }
`;

let dataDir: string;
let app: Running | undefined;
let key: string;
beforeAll(() => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tollgate-v2-standalone-'));
  const file = path.join(dataDir, 'catalog.yaml');
  fs.writeFileSync(file, CATALOG);
  const env = { DATA_DIR: dataDir };
  expect(runToEnd(CLI, ['orgs', 'create', 'solo-v2'], env).code).toBe(0);
  expect(runToEnd(CLI, ['import', file, '--json'], env).code).toBe(0);
  key = JSON.parse(runToEnd(CLI, ['keys', 'create', '--org', 'solo-v2', '--json'], env).stdout).key;
});
afterAll(async () => {
  await app?.stop();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

it('v2/v3 alone: answers /healthz, /readyz and /metrics, serves v2 and v3 by the version header, refuses others', async () => {
  const port = await freePort();
  app = await startProcess(builtEntry('apps/v2/dist/main.js'), { DATA_DIR: dataDir, PUBLIC_URL: `http://127.0.0.1:${port}` }, port);
  const { url } = app;
  expect((await fetch(`${url}/healthz`)).status).toBe(200);
  expect(await (await fetch(`${url}/readyz`)).json()).toMatchObject({ status: 'ready' });
  expect(await (await fetch(`${url}/metrics`)).text()).toMatch(/tollgate_http_requests_total/);
  const get = (version: string | undefined) => fetch(`${url}/products`, { headers: { 'x-api-key': key, ...(version ? { version } : {}) } });
  const v2 = await get('v2');
  expect(v2.status).toBe(200);
  expect(((await v2.json()) as { slug: string }[]).map((p) => p.slug)).toEqual(['notes']);
  const v3 = await get('v3');
  expect(await v3.json()).toMatchObject({ data: [{ slug: 'notes' }] });
  for (const v of [undefined, 'v1']) expect((await get(v)).status).toBe(400);
  expect(await app.stop()).toBe(0);
  app = undefined;
});
