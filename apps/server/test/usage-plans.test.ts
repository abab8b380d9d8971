import fs from 'node:fs';
import path from 'node:path';
import request from 'supertest';
import {
  createTestWorld,
  purchase,
  seedOrganisation,
  startWebhookReceiver,
  type ReceivedWebhook,
  type SeededOrg,
  type TestWorld,
  type WebhookReceiver,
} from '@tollgate/runtime/testing';
import { sampleCatalog } from '@tollgate/core/testing';
import { createServerApp } from '../src';

// Acceptance 3 of #19, end to end over HTTP: a usage plan (catalog file through the API) bought
// through the sandbox checkout; usage recorded over the period; the renewal sweep (what the
// background worker runs) closes the period: invoice lines of units x price by tiers, signed usage
// webhooks at a real receiver, and the next period starting from the allowance plus rollover.
let world: TestWorld;
let org: SeededOrg;
let app: ReturnType<typeof createServerApp>;
let rx: WebhookReceiver;

beforeAll(async () => {
  world = await createTestWorld();
  org = await seedOrganisation(world, 'usage-acceptance');
  app = createServerApp(world);
  rx = await startWebhookReceiver();
});
afterAll(async () => {
  await rx?.close();
  await world?.close();
});

const bearer = (r: request.Test) => r.set('authorization', `Bearer ${org.liveKey}`);
const api = {
  get: (p: string) => bearer(request(app).get(p)),
  post: (p: string, body?: object, key?: string) => {
    const r = bearer(request(app).post(p));
    return (key ? r.set('idempotency-key', key) : r).send(body);
  },
};
const v1 = { get: (p: string) => request(app).get(p).set('x-api-key', org.liveKey).set('version', 'v1') };

/** docs/webhooks.md's receiver, run as written. */
type Receive = (secret: string, headers: object, rawBody: string, seen?: Set<string>, now?: number) => { type: string } | null;
const receive = ((): Receive => {
  const doc = fs.readFileSync(path.join(__dirname, '..', '..', '..', 'docs', 'webhooks.md'), 'utf8');
  const code = /```js receiver\n([\s\S]*?)```/.exec(doc)?.[1];
  if (!code) throw new Error('docs/webhooks.md has no receiver snippet');
  return new Function('require', `${code}\nreturn verifyWebhook;`)(require) as Receive;
})();

/**
 * The grantee buys the plan through the sandbox's hosted checkout (v1's checkout link, then its pay
 * page); with the subscription come its balances of the meter and a usage record call (204; a key
 * makes a retry count once).
 */
async function buyThroughSandbox(planId: string, grantee: string, meterSlug: string) {
  const q = `successUrl=https://vendor.example.com/ok&cancelUrl=https://vendor.example.com/no&granteeId=${grantee}&member=${grantee}@example.com`;
  const link = (await v1.get(`/plans/${planId}/checkoutlink?${q}`).expect(200)).body;
  await request(app)
    .post(`${new URL(link.checkoutUrl).pathname}/pay`)
    .type('form')
    .send({})
    .expect(303);
  const sub = (await world.db.uow.read((r) => r.subscriptions.listByPlan(planId)))[0];
  const balances = async () => (await api.get(`/api/balances?owner=${sub.id}&meterSlug=${meterSlug}`).expect(200)).body.data;
  const record = (increment: number, key: string) =>
    api.post('/api/usage/record', { owner: sub.id, meterSlug, increment }, key).expect(204);
  return { sub, balances, record };
}

/** The subscription's renewal invoice (v1's invoices of the subscription, `billing_reason` `subscription_cycle`). */
async function renewalInvoice(subscriptionId: string) {
  const invoices = (await v1.get(`/subscriptions/${subscriptionId}/invoices`).expect(200)).body.data as {
    billing_reason: string;
    lines: { data: { description: string; quantity: number; amount: number }[] };
  }[];
  return invoices.find((i) => i.billing_reason === 'subscription_cycle');
}

describe('a usage plan bought through the sandbox, over two periods', () => {
  it('bills the period’s usage as invoice lines by tiers, sends signed usage webhooks, and starts the next from allowance plus rollover', async () => {
    // The vendor adds a usage plan to its catalog file: 1000 calls included a month, then tiered.
    const file = sampleCatalog('usage-acceptance');
    file.products?.[0].plans?.push({
      key: 'api',
      displayName: 'API',
      pricingType: 'paid',
      prices: { USD: 20 },
      capabilities: ['edit'],
      usage: [
        {
          meter: 'api_calls',
          unitLabel: 'call',
          allowance: 1000,
          rollover: { upTo: 300 },
          tiers: {
            USD: [
              { upTo: 500, unitAmount: 0.01 },
              { upTo: 'inf', unitAmount: 0.005 },
            ],
          },
        },
      ],
    });
    const imported = (await api.post('/api/products/import', file).expect(201)).body.data;
    const planId = imported.keys['plans.notes.api'];
    const hook = (
      await api.post('/api/webhooks', { url: rx.url, events: ['usage.recorded', 'usage.threshold', 'usage.finalised'] }).expect(201)
    ).body.data;

    // The customer buys it through the sandbox's hosted checkout.
    const { sub, balances, record } = await buyThroughSandbox(planId, 'umi', 'api_calls');
    expect(sub).toBeDefined();
    expect(await balances()).toEqual([expect.objectContaining({ granted: 1000, used: 0, remaining: 1000 })]);

    // Usage over the period, with a retried request (same key) that counts once.
    await record(700, 'u-1');
    await record(700, 'u-1');
    await record(200, 'u-2');
    await record(900, 'u-3');
    expect(await balances()).toEqual([expect.objectContaining({ granted: 1000, used: 1800, remaining: 0 })]);

    // The period ends; the background worker's renewal sweep closes it.
    world.clock.set(new Date(sub.currentPeriodEnd.getTime() + 60_000));
    expect(await world.core.sweeps.renewals()).toBe(1);
    expect(await world.core.sweeps.renewals()).toBe(0);
    const cycle = await renewalInvoice(sub.id);
    // 1800 used, 1000 included: 800 billed; 500 at 1 cent, then 300 at half a cent.
    expect(cycle?.lines.data.map((l) => [l.quantity, l.amount])).toEqual([
      [1, 2000],
      [500, 500],
      [300, 150],
    ]);
    expect(cycle?.lines.data[1].description).toContain('call');
    expect(await balances()).toEqual([expect.objectContaining({ granted: 1000, used: 0, remaining: 1000 })]);

    // Second period: 400 of 1000 used, nothing billed, 300 roll over.
    await record(400, 'u-4');
    const renewed = await world.db.uow.read((r) => r.subscriptions.get(sub.id));
    world.clock.set(new Date((renewed?.currentPeriodEnd.getTime() ?? 0) + 60_000));
    expect(await world.core.sweeps.renewals()).toBe(1);
    expect(await balances()).toEqual([expect.objectContaining({ granted: 1300, used: 0, remaining: 1300 })]);
    const latest = (await v1.get(`/subscriptions/${sub.id}/invoices`).expect(200)).body.data[0];
    expect(latest.lines.data.map((l: { amount: number }) => l.amount)).toEqual([2000]);

    // The webhooks arrived, each signed with the endpoint's secret.
    await world.core.webhookDelivery.drain();
    const got = rx.received;
    const verified = (h: ReceivedWebhook) => receive(hook.secret, h.headers, h.body, new Set(), world.clock.now().getTime());
    expect(got.length).toBeGreaterThan(0);
    for (const h of got) expect(verified(h)).toMatchObject({ type: h.event.type });
    const of = (type: string) => got.filter((h) => h.event.type === type).map((h) => h.event.data);
    expect(of('usage.recorded').map((d) => d.quantity)).toEqual([700, 200, 900, 400]);
    expect(of('usage.threshold').map((d) => d.threshold)).toEqual([80, 90, 100]);
    expect(of('usage.finalised').map((d) => [d.finalUsage, d.billedUnits, d.amount])).toEqual([
      [1800, 800, 650],
      [400, 0, 0],
    ]);
  });

  it('a usage plan on a meter with three decimal places bills the decimal quantity recorded exactly', async () => {
    // The meter is made with its scale first; the catalog file's plan then prices it per unit at 0.40.
    await api.post('/api/meters', { slug: 'gpu_hours', name: 'GPU hours', unitLabel: 'hour', scale: 3 }).expect(201);
    const file = sampleCatalog('usage-acceptance');
    file.products?.[0].plans?.push({
      key: 'gpu',
      displayName: 'GPU',
      pricingType: 'paid',
      prices: { USD: 10 },
      capabilities: ['edit'],
      usage: [{ meter: 'gpu_hours', unitLabel: 'hour', maxUsage: 50.5, unitPrices: { USD: 0.4 } }],
    });
    const planId = (await api.post('/api/products/import', file).expect(201)).body.data.keys['plans.notes.gpu'];
    const { sub, balances, record } = await buyThroughSandbox(planId, 'gus', 'gpu_hours');
    expect(await balances()).toEqual([expect.objectContaining({ granted: 0, used: 0, remaining: 50.5 })]);

    // 1.25 + 0.5 hours; a retry of the first counts once.
    await record(1.25, 'g-1');
    await record(1.25, 'g-1');
    await record(0.5, 'g-2');
    expect(await balances()).toEqual([expect.objectContaining({ used: 1.75, remaining: 48.75 })]);

    world.clock.set(new Date(sub.currentPeriodEnd.getTime() + 60_000));
    // (the other tests' subscriptions may renew in the same sweep)
    expect(await world.core.sweeps.renewals()).toBeGreaterThanOrEqual(1);
    const cycle = await renewalInvoice(sub.id);
    // The plan's price, then 1.75 hours x 40 cents = 70 cents.
    expect(cycle?.lines.data.map((l) => [l.quantity, l.amount])).toEqual([
      [1, 1000],
      [1.75, 70],
    ]);
    expect(cycle?.lines.data[1].description).toBe('1.75 hour × GPU hours');
    expect(await balances()).toEqual([expect.objectContaining({ used: 0, remaining: 50.5 })]);
    // The period's final usage record shows the decimal count.
    const finals = (await api.get(`/api/usage-records?owner=${sub.id}&status=final`).expect(200)).body.data;
    expect(finals).toEqual([expect.objectContaining({ status: 'final', count: 1.75 })]);
  });

  it('a v1 plan feature with isUsage meters like a metered line item: maxUsage caps, pricePerUnit bills, minUsage is the least billed', async () => {
    // The plan's `projects` feature is a usage feature: 0.50 a project, at least 10 billed, at most 100 a period.
    const planId = org.keys['plans.notes.metered'];
    await world.db.uow.run(async (r) => {
      const plan = await r.plans.get(planId);
      const product = plan && (await r.products.get(plan.productId));
      const feature = product?.features.find((f) => f.variableName === 'projects');
      if (!plan || !feature) throw new Error('sample catalog changed');
      const value = {
        featureId: feature.id,
        value: '0',
        enumOptionId: null,
        isUnlimited: false,
        isUsage: true,
        pricePerUnit: 0.5,
        minUsage: 10,
        maxUsage: 100,
        updatedAt: world.clock.now(),
      };
      await r.plans.save({ ...plan, features: [...plan.features.filter((v) => v.featureId !== feature.id), value] });
    });
    const { subscription } = await purchase(world, planId, 'feature-user');
    const put = (increment: number) =>
      request(app)
        .put('/usage')
        .set('x-api-key', org.liveKey)
        .set('version', 'v1')
        .send({ licenseUuid: license, featureVariableName: 'projects', countOptions: { increment } });
    const license = (await v1.get(`/licenses?subscriptionUuid=${subscription.id}`).expect(200)).body[0].uuid as string;
    const balances = async () => (await api.get(`/api/balances?owner=${subscription.id}&meterSlug=projects`).expect(200)).body.data;
    // The purchase opened the period capped at maxUsage.
    expect(await balances()).toEqual([expect.objectContaining({ used: 0, remaining: 100 })]);
    expect((await put(30).expect(200)).body.unitCount).toBe(30);
    // Usage recorded past the cap still counts (overage is billed); taking more than is left is denied.
    expect((await put(80).expect(200)).body.unitCount).toBe(110);
    const denied = await api.post('/api/usage/consume', { owner: subscription.id, meterSlug: 'projects', quantity: 1 }).expect(200);
    expect(denied.body.data).toMatchObject({ allowed: false, remaining: 0 });

    // Period close bills 110 x 0.50 = 55.00 on the renewal invoice.
    const usageLines = async () => {
      const invoices = (await v1.get(`/subscriptions/${subscription.id}/invoices`).expect(200)).body.data as {
        lines: { data: { description: string; quantity: number; amount: number }[] };
      }[];
      return invoices[0].lines.data.filter((l) => l.description.includes('Projects'));
    };
    world.clock.set(new Date(subscription.currentPeriodEnd.getTime() + 60_000));
    // (the first test's subscription may renew in the same sweep)
    expect(await world.core.sweeps.renewals()).toBeGreaterThanOrEqual(1);
    expect((await usageLines()).map((l) => [l.quantity, l.amount])).toEqual([[110, 5500]]);
    expect(await balances()).toEqual([expect.objectContaining({ used: 0, remaining: 100 })]);

    // A quiet period still bills minUsage: 3 used, 10 billed.
    expect((await put(3).expect(200)).body.unitCount).toBe(3);
    const renewed = await world.db.uow.read((r) => r.subscriptions.get(subscription.id));
    world.clock.set(new Date((renewed?.currentPeriodEnd.getTime() ?? 0) + 60_000));
    // (the first test's subscription may renew in the same sweep)
    expect(await world.core.sweeps.renewals()).toBeGreaterThanOrEqual(1);
    expect((await usageLines()).map((l) => [l.quantity, l.amount])).toEqual([[10, 500]]);
  });
});
