import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { CLIENT_SCOPES } from '@tollgate/core';
import { createTestWorld, purchase, seedOrganisation, type SeededOrg, type TestWorld } from '@tollgate/runtime/testing';
import { createServerApp, createServerHttp, type ServerApp } from '../src';

// Authorization within one organisation (the ninth session's audit): what a publishable key and a
// `subscriptions:read` key may do. docs/api/v1.md, "Scopes".
let world: TestWorld;
let org: SeededOrg;
let app: ServerApp;
let server: ReturnType<typeof createServerHttp>;
let base: string;
let subscription: string;
const keys: Record<'client' | 'checks' | 'licenses' | 'subscriptionsRead' | 'subscriptionsWrite', string> = {
  client: '',
  checks: '',
  licenses: '',
  subscriptionsRead: '',
  subscriptionsWrite: '',
};

beforeAll(async () => {
  world = await createTestWorld();
  org = await seedOrganisation(world, 'scopes-org');
  subscription = (await purchase(world, org.keys['plans.notes.team'], 'checked', 2)).subscription.id;
  const key = async (scopes: string[]) =>
    (await world.core.apiKeys.create({ organisation: 'scopes-org', scopes, isTest: false })).plaintext;
  keys.client = await key([...CLIENT_SCOPES]);
  keys.checks = await key(['checks:read']);
  keys.licenses = await key(['licenses:read']);
  keys.subscriptionsRead = await key(['subscriptions:read']);
  keys.subscriptionsWrite = await key(['subscriptions:write']);
  app = createServerApp(world);
  server = createServerHttp(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((resolve) => server?.close(resolve));
  await world?.close();
});

type Gen = 'legacy' | 'v1' | 'v2' | 'v3' | 'catalog';
const get = (gen: Gen, path: string, key: string) => {
  const r = request(app).get(path);
  if (gen === 'catalog') return r.set('authorization', `Bearer ${key}`);
  r.set('x-api-key', key);
  return gen === 'v2' || gen === 'v3' ? r.set('version', gen) : r;
};

describe('the checks scope', () => {
  const product = () => org.keys['products.notes'];
  const checks = (): [Gen, string][] => [
    ['legacy', `/licenses/check?productUuid=${product()}&granteeIds=checked`],
    ['v1', `/licenses/check?productUuid=${product()}&granteeIds=checked`],
    ['v2', `/licenses/check?productUuid=${product()}&granteeIds=checked`],
    ['v3', `/entitlements/check?productUuid=${product()}&granteeIds=checked`],
    ['catalog', '/api/entitlements/check?granteeId=checked'],
    ['v1', '/signing-key'],
    ['catalog', '/api/signing-keys'],
  ];
  const listings: [Gen, string][] = [
    ['v1', '/licenses'],
    ['v1', '/licenses/purchaser?purchaser=buyer%40example.com'],
    ['v1', '/licenses/granteeId/checked'],
    ['v1', '/licenses/count'],
    ['v2', '/licenses'],
    ['v2', '/licenses/purchaser?purchaser=buyer%40example.com'],
    ['v2', '/licenses/granteeId/checked'],
  ];

  it('is what a new publishable (client) key holds, instead of licenses:read', () => {
    expect(CLIENT_SCOPES).toContain('checks:read');
    expect(CLIENT_SCOPES).not.toContain('licenses:read');
  });

  it('lets a publishable key and a checks:read key check, and neither list licenses and their purchasers', async () => {
    for (const key of [keys.client, keys.checks]) {
      for (const [gen, path] of checks()) await get(gen, path, key).expect(200);
      for (const [gen, path] of listings) await get(gen, path, key).expect(403);
    }
  });

  it('still lets licenses:read (keys made before checks:read) and * check', async () => {
    for (const key of [keys.licenses, org.liveKey, org.readOnlyKey])
      for (const [gen, path] of checks()) await get(gen, path, key).expect(200);
    for (const [gen, path] of listings) await get(gen, path, keys.licenses).expect(200);
  });

  it('is honoured by the check fast path (a checks:read key is served there, a products:read key is not)', async () => {
    const ask = (key: string) =>
      new Promise<number>((resolve, reject) => {
        const req = httpRequest(
          `${base}/licenses/check?productUuid=${product()}&granteeIds=checked`,
          { method: 'GET', headers: { 'x-api-key': key } },
          (res) => {
            res.resume();
            res.on('end', () => resolve(res.statusCode ?? 0));
          },
        );
        req.on('error', reject);
        req.end();
      });
    for (const key of [keys.client, keys.checks, keys.licenses]) {
      const before = app.fastPathStats().served;
      expect(await ask(key)).toBe(200);
      expect(app.fastPathStats().served).toBe(before + 1);
    }
    const noChecks = (await world.core.apiKeys.create({ organisation: 'scopes-org', scopes: ['products:read'], isTest: false })).plaintext;
    expect(await ask(noChecks)).toBe(403);
  });
});

describe('payment links', () => {
  const links = (): [Gen, string][] => [
    ['v1', `/subscriptions/${subscription}/updatepaymentlink`],
    ['v1', `/subscriptions/${subscription}/customer-portal`],
    ['v1', `/subscriptions/${subscription}/cancelpaymentlink`],
    ['v2', `/subscriptions/${subscription}/updatepaymentlink`],
    ['v2', `/subscriptions/${subscription}/customer-portal`],
    ['v2', `/subscriptions/${subscription}/cancelpaymentlink`],
    ['v3', `/subscriptions/${subscription}/update-payment-link`],
    ['v3', `/subscriptions/${subscription}/customer-portal`],
    ['v3', `/subscriptions/${subscription}/cancel-payment-link`],
  ];

  it('are handed out to subscriptions:write only: their holder can cancel or change the subscription', async () => {
    for (const [gen, path] of links()) {
      await get(gen, path, keys.subscriptionsRead).expect(403);
      const { body } = await get(gen, path, keys.subscriptionsWrite).expect(200);
      expect(body).toEqual({ url: expect.any(String) });
    }
    // Reading the subscription itself, its invoices and payment method stays read.
    await get('v1', `/subscriptions/${subscription}`, keys.subscriptionsRead).expect(200);
    await get('v1', `/subscriptions/${subscription}/invoices`, keys.subscriptionsRead).expect(200);
  });
});
