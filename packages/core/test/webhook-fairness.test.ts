import type { Tenant, WebhookRequest, WebhookResponse } from '../src';
import { createTestCore, ScriptedWebhookSender, seedSample, type TestCore } from '../src/testing';

// Delivery is fair across tenants and endpoints, and concurrent: a crowded or stalled tenant
// cannot starve a quiet one (issue #24, point 10).

/** A receiver whose answers wait until released (a receiver that never answers, until the test says). */
function stalling(stalled: (req: WebhookRequest) => boolean) {
  const held: (() => void)[] = [];
  const sender = new ScriptedWebhookSender(
    (req) =>
      stalled(req)
        ? new Promise<WebhookResponse>((resolve) => held.push(() => resolve({ status: 200, body: 'late' })))
        : { status: 200, body: 'ok' },
    { timeoutMs: Infinity },
  );
  return { sender, held, release: () => held.splice(0).forEach((r) => r()) };
}

async function tenantWithEndpoints(core: TestCore, name: string, urls: string[]): Promise<Tenant> {
  const { tenant } = await seedSample(core, name);
  for (const url of urls) await core.webhooks.create(tenant, { url, events: ['product.updated'] });
  return tenant;
}

/** One product.updated event per call: delivered to every endpoint of the tenant. */
async function touch(core: TestCore, tenant: Tenant, n: number) {
  const [product] = await core.queries.listProducts(tenant);
  for (let i = 0; i < n; i++) await core.products.updateProduct(tenant, product.id, { name: `Edit ${i}` });
}

const settle = async (until: () => boolean) => {
  for (let i = 0; i < 10_000 && !until(); i++) await new Promise((r) => setImmediate(r));
};

it("delivers a quiet tenant's event among the first, beside a tenant with many endpoints", async () => {
  const sender = new ScriptedWebhookSender();
  const core = createTestCore({ webhooks: sender, limits: { webhookConcurrency: 1 } });
  const crowded = await tenantWithEndpoints(
    core,
    'crowded',
    Array.from({ length: 40 }, (_, i) => `https://crowded.example.com/${i}`),
  );
  const quiet = await tenantWithEndpoints(core, 'quiet', ['https://quiet.example.com/hooks']);
  await touch(core, crowded, 3); // 120 deliveries written first
  await touch(core, quiet, 1);
  expect(await core.webhookDelivery.drain()).toBe(121);
  const firstQuiet = sender.sent.findIndex((r) => r.url.startsWith('https://quiet.'));
  expect(firstQuiet).toBeLessThanOrEqual(1);
});

it('keeps delivering to others while an endpoint never answers: it holds at most its share of slots', async () => {
  const { sender, held, release } = stalling((req) => req.url.startsWith('https://stalled.'));
  const core = createTestCore({ webhooks: sender, limits: { webhookConcurrency: 16, webhookPerEndpoint: 4, webhookPerOrganisation: 8 } });
  const stalled = await tenantWithEndpoints(core, 'stalled', ['https://stalled.example.com/hooks']);
  const quiet = await tenantWithEndpoints(core, 'quiet', ['https://quiet.example.com/hooks']);
  await touch(core, stalled, 12);
  await touch(core, quiet, 5);
  const draining = core.webhookDelivery.drain();
  const quietSent = () => sender.sent.filter((r) => r.url.startsWith('https://quiet.')).length;
  await settle(() => quietSent() === 5);
  // Product events share one ordering key: the stalled endpoint holds one POST, the rest wait behind it in order.
  expect(quietSent()).toBe(5);
  expect(held.length).toBe(1);
  release();
  await settle(() => held.length > 0);
  while (held.length) {
    release();
    await settle(() => held.length > 0 || sender.sent.length === 17);
  }
  await draining;
  const stalledBodies = sender.sent.filter((r) => r.url.startsWith('https://stalled.')).map((r) => JSON.parse(r.body).data.name);
  expect(stalledBodies).toEqual(Array.from({ length: 12 }, (_, i) => `Edit ${i}`));
});

it('caps what one organisation holds in flight: a tenant whose endpoints all stall leaves slots to others', async () => {
  const { sender, held, release } = stalling((req) => req.url.startsWith('https://stalled.'));
  const core = createTestCore({ webhooks: sender, limits: { webhookConcurrency: 16, webhookPerEndpoint: 4, webhookPerOrganisation: 8 } });
  const stalled = await tenantWithEndpoints(
    core,
    'stalled',
    Array.from({ length: 20 }, (_, i) => `https://stalled.example.com/${i}`),
  );
  const quiet = await tenantWithEndpoints(core, 'quiet', ['https://quiet.example.com/hooks']);
  await touch(core, stalled, 1);
  await touch(core, quiet, 3);
  const draining = core.webhookDelivery.drain();
  await settle(() => sender.sent.filter((r) => r.url.startsWith('https://quiet.')).length === 3);
  expect(sender.sent.filter((r) => r.url.startsWith('https://quiet.')).length).toBe(3);
  expect(held.length).toBe(8);
  while (held.length) {
    release();
    await settle(() => held.length > 0 || sender.sent.length === 23);
  }
  expect(await draining).toBe(23);
});
