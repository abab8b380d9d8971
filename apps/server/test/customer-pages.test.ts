import fs from 'node:fs';
import path from 'node:path';
import type { Server } from 'node:http';
import request from 'supertest';
import type { Browser, Page } from 'playwright-core';
import { startBrowserWorld, watchCsp } from './support/browser';
import type { SeededOrg, TestWorld } from '@tollgate/runtime/testing';

// The customer's pages agree with each other (#23): the hosted pricing page, the sandbox checkout,
// the thank-you page and the portal, in a real browser, with screenshots in test-artifacts/.
const ARTIFACTS = path.join(__dirname, '..', '..', '..', 'test-artifacts');

let world: TestWorld;
let org: SeededOrg;
let server: Server;
let base: string;
let browser: Browser;
let close: () => Promise<void>;

beforeAll(async () => {
  ({ world, org, server, base, browser, close } = await startBrowserWorld('pages-org'));
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  csp = watchCsp(browser);
}, 60_000);

// Every page works under its Content-Security-Policy: Chromium reports no refusal.
let csp: ReturnType<typeof watchCsp>;
afterEach(() => expect(csp.violations.splice(0)).toEqual([]));

afterAll(() => close?.());

const v1 = (p: string) => request(server).get(p).set('x-api-key', org.liveKey).set('version', 'v1');
const text = async (page: Page, selector: string) => ((await page.textContent(selector)) ?? '').replace(/\s+/g, ' ').trim();
const shot = (page: Page, name: string) => page.screenshot({ path: path.join(ARTIFACTS, name), fullPage: true });

it('the hosted pricing page and checkout show the same money, per-seat price, minimum and evaluation; paying lands on a thank-you page', async () => {
  const { body } = await v1(
    `/pricing-tables/${org.keys['pricingTables.notes.main']}/page-link?globalSuccessUrl=${encodeURIComponent(`${base}/sandbox/thank-you`)}` +
      `&globalCancelUrl=${encodeURIComponent(base)}&globalGranteeId=pages-user&member=pages-user@example.com`,
  ).expect(200);
  const page = await csp.newPage();
  await page.goto(body.url);
  const team = page.locator('.plan', { has: page.getByRole('heading', { name: 'Team' }) });
  expect((await team.locator('.price').textContent())?.replace(/\s+/g, ' ').trim()).toBe('$12.00 per seat per month');
  expect(await team.locator('.terms').textContent()).toBe('minimum 2 seats · 14-day free evaluation available');
  // Features by their display names, never their keys; the private one (Single sign-on) is not shown.
  expect(await team.locator('dt').allTextContents()).toEqual(['Projects', 'Theme']);
  await shot(page, 'customer-pricing-page.png');

  await page.getByRole('link', { name: 'Choose Team' }).click();
  await page.waitForURL(/\/sandbox\/checkout\//);
  expect(await text(page, '#price')).toBe('$12.00 per seat per month');
  expect(await text(page, '#terms')).toBe('minimum 2 seats · 14-day free evaluation available');
  expect(await text(page, '#seats')).toBe('2');
  expect(await text(page, '#total')).toBe('$24.00 per month, charged today');
  await shot(page, 'customer-checkout.png');
  await Promise.all([page.waitForURL(`${base}/sandbox/thank-you`), page.getByRole('button', { name: 'Pay', exact: true }).click()]);
  expect(await text(page, 'h1')).toBe('Thank you!');
  await shot(page, 'customer-thank-you.png');
  await page.close();
}, 60_000);

it('a hosted pricing table mixing free and per-seat plans lets the customer choose seats for the per-seat plan', async () => {
  const { body } = await v1(
    `/pricing-tables/${org.keys['pricingTables.notes.main']}/page-link?globalSuccessUrl=${encodeURIComponent(`${base}/sandbox/thank-you`)}` +
      `&globalCancelUrl=${encodeURIComponent(base)}&globalGranteeId=table-seats&member=table-seats@example.com&changeQuantity=true`,
  ).expect(200);
  const page = await csp.newPage();
  await page.goto(body.url);
  await page.getByRole('link', { name: 'Choose Team' }).click();
  await page.waitForURL(/\/sandbox\/checkout\//);
  expect(await page.getByLabel('Seats').getAttribute('min')).toBe('2');
  await shot(page, 'customer-checkout-seat-choice.png');
  await page.close();
}, 60_000);

it('the checkout offers a seat choice where the plan allows it, from the minimum up', async () => {
  const { body } = await v1(
    `/plans/${org.keys['plans.notes.team']}/checkoutlink?successUrl=${encodeURIComponent(`${base}/sandbox/thank-you`)}&cancelUrl=${encodeURIComponent(base)}&granteeId=seats-user&member=seats@example.com&changeQuantity=true&currency=EUR`,
  ).expect(200);
  const page = await csp.newPage();
  await page.goto(body.checkoutUrl);
  const seats = page.getByLabel('Seats');
  expect(await seats.getAttribute('min')).toBe('2');
  expect(await text(page, '#price')).toBe('€11.00 per seat per month');
  await seats.fill('3');
  await Promise.all([page.waitForURL(`${base}/sandbox/thank-you`), page.getByRole('button', { name: 'Pay', exact: true }).click()]);
  await page.close();
  const licenses = await v1('/licenses/granteeId/seats-user').expect(200);
  const count = await v1(`/licenses/count?subscriptionUuid=${licenses.body[0].subscriptionUuid}`).expect(200);
  expect(count.body.count).toBe(3);
}, 60_000);

it('the portal speaks plain words, changes seats and plan, lists invoices, and keeps cancel out of the way', async () => {
  const [license] = (await v1('/licenses/granteeId/pages-user').expect(200)).body as { subscriptionUuid: string }[];
  const id = license.subscriptionUuid;
  const { body } = await v1(`/subscriptions/${id}/customer-portal`).expect(200);
  const page = await csp.newPage();
  await page.goto(body.url);
  expect(await text(page, '#status')).not.toMatch(/[A-Z]{4,}/);
  expect(['Active', 'Free trial']).toContain(await text(page, '#status'));
  expect(await text(page, '#plan')).toBe('Team');
  await expect(page.getByRole('heading', { name: 'Invoices' }).count()).resolves.toBe(1);
  // Cancel is folded away, and not the main (filled) button.
  expect(await page.locator('#cancel-at-end').isVisible()).toBe(false);
  expect(await page.locator('#cancel-at-end').getAttribute('class')).toBe('secondary');
  await shot(page, 'customer-portal.png');

  await page.getByLabel(/Seats \(at least 2\)/).fill('4');
  await Promise.all([page.waitForURL(/\/sandbox\/portal\//), page.getByRole('button', { name: 'Change seats' }).click()]);
  await world.core.worker.drain();
  await page.reload();
  expect(await text(page, '#seats')).toBe('4');

  await Promise.all([page.waitForURL(/\/sandbox\/portal\//), page.getByRole('button', { name: 'Switch to Business' }).click()]);
  expect(await text(page, '#plan')).toBe('Business');
  await page.getByText('Cancel subscription').click();
  await Promise.all([page.waitForURL(/\/sandbox\/portal\//), page.locator('#cancel-at-end').click()]);
  expect(await text(page, '#status')).toMatch(/, ends at the end of this period$/);
  await shot(page, 'customer-portal-after.png');
  await page.close();
}, 60_000);
