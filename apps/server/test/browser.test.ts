import fs from 'node:fs';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { createServer, type Server } from 'node:http';
import request from 'supertest';
import type { Browser } from 'playwright-core';
import { launchBrowser, watchCsp } from './support/browser';
import { createTestWorld, seedOrganisation, type SeededOrg, type TestWorld } from '@tollgate/runtime/testing';
import { createServerApp } from '../src';

// The sandbox checkout in a real browser (Chromium from the npm registry, driven by playwright-core).
const ARTIFACTS = path.join(__dirname, '..', '..', '..', 'test-artifacts');

let world: TestWorld;
let org: SeededOrg;
let server: Server;
let base: string;
let browser: Browser;

let vendor: Server;
let vendorBase: string;
let vendorPage = '';

beforeAll(async () => {
  // The server listens first, so that the links it makes (checkout, pricing pages) carry its address.
  let app: ReturnType<typeof createServerApp> | undefined = undefined;
  server = createServer((req, res) => (app ? app(req, res) : res.writeHead(503).end()));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  world = await createTestWorld({ config: { publicUrl: base } });
  org = await seedOrganisation(world, 'browser-org');
  app = createServerApp(world);
  // A vendor's own site on another origin, embedding the pricing table component.
  vendor = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(vendorPage));
  await new Promise<void>((resolve) => vendor.listen(0, '127.0.0.1', resolve));
  vendorBase = `http://localhost:${(vendor.address() as AddressInfo).port}`;
  browser = await launchBrowser();
  csp = watchCsp(browser);
}, 60_000);

// Every page works under its Content-Security-Policy: Chromium reports no refusal.
let csp: ReturnType<typeof watchCsp>;
afterEach(() => expect(csp.violations.splice(0)).toEqual([]));

afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => server?.close(resolve));
  await new Promise((resolve) => vendor?.close(resolve));
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

  const page = await csp.newPage();
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

/** A signed pricing page link for one customer (what a vendor's server asks for). */
async function pricingPageLink(grantee: string, successUrl: string): Promise<string> {
  const { body } = await request(server)
    .get(
      `/pricing-tables/${org.keys['pricingTables.notes.main']}/page-link?globalSuccessUrl=${encodeURIComponent(successUrl)}` +
        `&globalCancelUrl=${encodeURIComponent(base)}&globalGranteeId=${grantee}&member=${grantee}@example.com`,
    )
    .set('x-api-key', org.liveKey)
    .set('version', 'v1')
    .expect(200);
  return body.url;
}

const capabilitiesOf = async (grantee: string) =>
  (
    await request(server)
      .get(`/licenses/check?productUuid=${org.keys['products.notes']}&granteeIds=${grantee}`)
      .set('x-api-key', org.liveKey)
  ).body.capabilities;

it('buys from the hosted pricing page: currency switch, plan button, sandbox payment, success', async () => {
  const successUrl = `${base}/healthz?hosted`;
  const page = await csp.newPage();
  await page.goto(await pricingPageLink('hosted-user', successUrl));
  expect(await page.title()).toBe('Pick a plan');
  await expect(page.getByRole('heading', { level: 2 }).allTextContents()).resolves.toEqual(['Free', 'Team', 'Business']);
  await page.getByRole('link', { name: 'EUR' }).click();
  await page.waitForURL(/currency=EUR/);
  expect(await page.getAttribute('a[data-currency="EUR"]', 'aria-current')).toBe('true');
  expect(await page.textContent('[data-plan] .featured, .plan.featured h2')).toBe('Team');
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: path.join(ARTIFACTS, 'hosted-pricing-page.png'), fullPage: true });
  await page.getByRole('link', { name: 'Choose Business' }).click();
  await page.waitForURL(/\/sandbox\/checkout\//);
  expect(await page.textContent('#plan')).toBe('Business');
  expect(await page.textContent('#price')).toContain('€');
  await Promise.all([page.waitForURL(successUrl), page.getByRole('button', { name: 'Pay' }).click()]);
  await page.close();
  expect(await capabilitiesOf('hosted-user')).toEqual(['admin', 'edit', 'export']);
}, 60_000);

it("buys from the web component on a vendor's own site (another origin)", async () => {
  const successUrl = `${base}/healthz?embedded`;
  const link = await pricingPageLink('embedded-user', successUrl);
  vendorPage = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Vendor pricing</title>
    <script type="module" src="${base}/embed/pricing-table.js"></script></head>
    <body><h1>Vendor app</h1><tollgate-pricing-table src="${link}"></tollgate-pricing-table></body></html>`;
  const page = await csp.newPage();
  await page.goto(`${vendorBase}/pricing`);
  // Playwright's selectors reach into the component's shadow root.
  await page.getByRole('link', { name: 'Choose Team' }).waitFor();
  expect(await page.locator('tollgate-pricing-table .plan.featured h2').textContent()).toBe('Team');
  await page.getByRole('link', { name: 'EUR' }).click();
  await page.locator('tollgate-pricing-table a[data-currency="EUR"][aria-current="true"]').waitFor();
  expect(page.url()).toBe(`${vendorBase}/pricing`);
  await page.screenshot({ path: path.join(ARTIFACTS, 'embedded-pricing-table.png'), fullPage: true });
  await page.getByRole('link', { name: 'Choose Team' }).click();
  await page.waitForURL(/\/sandbox\/checkout\//);
  expect(await page.textContent('#plan')).toBe('Team');
  await Promise.all([page.waitForURL(successUrl), page.getByRole('button', { name: 'Pay' }).click()]);
  await page.close();
  expect(await capabilitiesOf('embedded-user')).toEqual(['edit', 'export']);
}, 60_000);

it('shows the home page and the API reference of the three generations', async () => {
  const page = await csp.newPage();
  await page.goto(`${base}/`);
  expect(await page.textContent('h1')).toBe('Tollgate');
  await page.screenshot({ path: path.join(ARTIFACTS, 'home.png'), fullPage: true });
  await page.getByRole('link', { name: 'API reference' }).click();
  await page.waitForURL(`${base}/docs`);
  await page.locator('.swagger-ui .info .title').waitFor();
  expect(await page.locator('.swagger-ui .info .title').textContent()).toMatch(/Tollgate/);
  expect(await page.locator('.opblock-summary-path').allTextContents()).toContain('/licenses/check');
  await page.screenshot({ path: path.join(ARTIFACTS, 'api-reference.png') });
  await page.close();
}, 60_000);
