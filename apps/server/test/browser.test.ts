import fs from 'node:fs';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { createServer, type Server } from 'node:http';
import request from 'supertest';
import type { Browser } from 'playwright-core';
import { launchBrowser } from './support/browser';
import { createTestWorld, seedOrganisation, type SeededOrg, type TestWorld } from '@tollgate/runtime/testing';
import { createServerApp } from '../src';

// The sandbox checkout in a real browser (Chromium from the npm registry, driven by playwright-core).
const ARTIFACTS = path.join(__dirname, '..', '..', '..', 'test-artifacts');

let world: TestWorld;
let org: SeededOrg;
let server: Server;
let base: string;
let browser: Browser;

beforeAll(async () => {
  world = await createTestWorld();
  org = await seedOrganisation(world, 'browser-org');
  server = createServer(createServerApp(world));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  browser = await launchBrowser();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => server?.close(resolve));
  await world?.close();
});

it('buys a plan in the sandbox checkout page, from the link to the success redirect', async () => {
  const successUrl = `${base}/healthz`;
  const { body } = await request(server)
    .get(
      `/plans/${org.keys['plans.notes.team']}/checkoutlink?successUrl=${encodeURIComponent(successUrl)}&cancelUrl=${encodeURIComponent(base)}&granteeId=browser-user&member=buyer@example.com&changeQuantity=true`,
    )
    .set('x-api-key', org.liveKey)
    .set('version', 'v1')
    .expect(200);
  const checkout = new URL(body.checkoutUrl);

  const page = await browser.newPage();
  await page.goto(`${base}${checkout.pathname}`);
  expect(await page.title()).toContain('Checkout: Team');
  expect(await page.textContent('#plan')).toBe('Team');
  expect(await page.textContent('#grantee')).toBe('browser-user');
  await page.getByLabel('Seats').fill('4');
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: path.join(ARTIFACTS, 'sandbox-checkout.png'), fullPage: true });
  await Promise.all([page.waitForURL(successUrl), page.getByRole('button', { name: 'Pay' }).click()]);
  expect(page.url()).toBe(successUrl);
  expect(await page.textContent('body')).toContain('"status":"ok"');
  await page.close();

  const check = await request(server)
    .get(`/licenses/check?productUuid=${org.keys['products.notes']}&granteeIds=browser-user`)
    .set('x-api-key', org.liveKey)
    .expect(200);
  expect(check.body.capabilities).toEqual(['edit', 'export']);
  const count = await request(server).get('/licenses/count').set('x-api-key', org.liveKey).set('version', 'v1').expect(200);
  expect(count.body.count).toBe(4);
  expect(fs.statSync(path.join(ARTIFACTS, 'sandbox-checkout.png')).size).toBeGreaterThan(1000);
}, 60_000);
