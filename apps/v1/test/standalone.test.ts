import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { builtEntry, freePort, runToEnd, startProcess, type Running } from '@tollgate/runtime/testing';

// Processes start on a shared, busy machine: give them time.
jest.setTimeout(120_000);

// Each generation run alone (`node apps/<gen>/dist/main.js`) is a complete service (DESIGN section
// 13): health, readiness, metrics, its background work, and the pages its links point to.
const CLI = builtEntry('packages/cli/dist/bin.js');
const CATALOG = `organisation: solo
products:
  - key: notes
    name: notes-app
    currencies: [USD]
    capabilities: [edit]
    plans:
      - { key: team, displayName: Team, pricingType: paid, licenseType: perSeat, perSeatAmount: 2, prices: { USD: 12 }, capabilities: [edit] }
    pricingTables:
      - { key: main, name: Main, plans: [team] }
`;

let dataDir: string;
let app: Running | undefined;
let ids: Record<string, string>;
let key: string;
beforeAll(() => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tollgate-standalone-'));
  const file = path.join(dataDir, 'catalog.yaml');
  fs.writeFileSync(file, CATALOG);
  const env = { DATA_DIR: dataDir };
  expect(runToEnd(CLI, ['orgs', 'create', 'solo'], env).code).toBe(0);
  ids = JSON.parse(runToEnd(CLI, ['import', file, '--json'], env).stdout);
  key = JSON.parse(runToEnd(CLI, ['keys', 'create', '--org', 'solo', '--json'], env).stdout).key;
});
afterEach(async () => {
  await app?.stop();
  app = undefined;
});
afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }));

async function start(generation: string): Promise<Running> {
  const port = await freePort();
  return startProcess(
    builtEntry(`apps/${generation}/dist/main.js`),
    { DATA_DIR: dataDir, PUBLIC_URL: `http://127.0.0.1:${port}`, WORKER_INTERVAL_MS: '100' },
    port,
  );
}

async function expectOperated(url: string) {
  expect((await fetch(`${url}/healthz`)).status).toBe(200);
  const ready = await fetch(`${url}/readyz`);
  expect(await ready.json()).toMatchObject({ status: 'ready' });
  const metrics = await (await fetch(`${url}/metrics`)).text();
  expect(metrics).toMatch(/tollgate_http_requests_total\{method="GET",route="\/healthz",status="200"\} \d+/);
  expect(metrics).toMatch(/tollgate_events_open/);
}

describe('an app run alone', () => {
  it('v1: answers /healthz, /readyz and /metrics; its checkout link opens and pays on itself; its worker applies seat changes; its pricing page opens', async () => {
    app = await start('v1');
    const { url } = app;
    await expectOperated(url);
    const api = (p: string, init: RequestInit = {}) =>
      fetch(`${url}${p}`, {
        ...init,
        headers: { 'x-api-key': key, version: 'v1', 'content-type': 'application/json', ...(init.headers ?? {}) },
      });
    const query =
      'successUrl=https://vendor.example.com/ok&cancelUrl=https://vendor.example.com/no&granteeId=alice&member=alice@example.com';
    const { checkoutUrl } = (await (await api(`/plans/${ids['plans.notes.team']}/checkoutlink?${query}`)).json()) as {
      checkoutUrl: string;
    };
    expect(checkoutUrl.startsWith(`${url}/`)).toBe(true);
    const page = await fetch(checkoutUrl, { redirect: 'manual' });
    const followed = page.status === 303 ? await fetch(new URL(page.headers.get('location') as string, url)) : page;
    expect(followed.status).toBe(200);
    expect(await followed.text()).toMatch(/Team/);
    const pay = await fetch(`${followed.url}/pay`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: '',
    });
    expect(pay.status).toBe(303);
    expect(pay.headers.get('location')).toMatch(/^https:\/\/vendor\.example\.com\/ok/);
    const check = await api(`/licenses/check?productUuid=${ids['products.notes']}&granteeIds=alice`);
    expect(check.status).toBe(200);
    expect(JSON.stringify(await check.json())).toContain('edit');

    const [license] = (await (await api('/licenses/granteeId/alice')).json()) as { subscriptionUuid: string }[];
    const { eventUuid } = (await (
      await api(`/subscriptions/${license.subscriptionUuid}/seats`, { method: 'POST', body: JSON.stringify({ increment: 1 }) })
    ).json()) as {
      eventUuid: string;
    };
    let status = '';
    for (let i = 0; i < 100 && status !== 'success'; i++) {
      status = ((await (await api(`/events/${eventUuid}`)).json()) as { status: string }).status;
      if (status !== 'success') await new Promise((r) => setTimeout(r, 100));
    }
    expect(status).toBe('success');

    const link = await api(
      `/pricing-tables/${ids['pricingTables.notes.main']}/page-link?globalSuccessUrl=https://vendor.example.com/ok&globalCancelUrl=https://vendor.example.com/no&globalGranteeId=bob&member=bob@example.com`,
    );
    const pricing = (await link.json()) as { url: string };
    expect(pricing.url.startsWith(`${url}/`)).toBe(true);
    const hosted = await fetch(pricing.url);
    expect(hosted.status).toBe(200);
    expect(await hosted.text()).toMatch(/Team/);
  });

  it.each(['legacy', 'catalog'])('%s: answers /healthz, /readyz and /metrics, and serves its API', async (generation) => {
    app = await start(generation);
    await expectOperated(app.url);
    const products =
      generation === 'legacy'
        ? await fetch(`${app.url}/products`, { headers: { 'x-api-key': key } })
        : await fetch(`${app.url}/api/products`, { headers: { authorization: `Bearer ${key}` } });
    expect(products.status).toBe(200);
    expect(await app.stop()).toBe(0);
  });
});
