import type { WebhookResponse } from '../src';
import { buyPlan, createTestCore, ScriptedWebhookSender, seedSample } from '../src/testing';

// A process shutting down stops claiming work: the drains ask `stopped` before each claim, finish
// what they hold, and leave the rest queued for the next pass (of this instance or another).

const settle = async (until: () => boolean) => {
  for (let i = 0; i < 10_000 && !until(); i++) await new Promise((r) => setImmediate(r));
};

describe('the webhook drain', () => {
  it('claims nothing more once stopped; the POSTs in flight are recorded, the rest stay queued, none lost or doubled', async () => {
    const held: (() => void)[] = [];
    let stop = false;
    // The receiver holds its answers until the test releases them; after the stop it answers at once.
    const sender = new ScriptedWebhookSender(
      () =>
        stop
          ? { status: 200, body: 'ok' }
          : new Promise<WebhookResponse>((resolve) => held.push(() => resolve({ status: 200, body: 'ok' }))),
      { timeoutMs: Infinity },
    );
    const core = createTestCore({ webhooks: sender, limits: { webhookConcurrency: 2 } });
    const { tenant } = await seedSample(core, 'stopping');
    // Twelve endpoints: one product edit is twelve deliveries, each of its own key (none waits for another).
    for (let i = 0; i < 12; i++)
      await core.webhooks.create(tenant, { url: `https://receiver.example.com/${i}`, events: ['product.updated'] });
    const [product] = await core.queries.listProducts(tenant);
    await core.products.updateProduct(tenant, product.id, { name: 'Edited' });

    const draining = core.webhookDelivery.drain(1000, () => stop);
    await settle(() => held.length === 2);
    stop = true; // the signal comes while two POSTs are in flight
    held.splice(0).forEach((answer) => answer());
    expect(await draining).toBe(2);
    expect(sender.sent).toHaveLength(2);

    // The other ten are still due, and the next drain (another instance, the next start) delivers each once.
    expect(await core.webhookDelivery.drain()).toBe(10);
    expect(sender.sent).toHaveLength(12);
    expect(new Set(sender.sent.map((r) => r.url)).size).toBe(12);
    expect(await core.webhookDelivery.drain()).toBe(0);
  });
});

describe('the event drain', () => {
  it('claims nothing more once stopped; the event in hand is finished, the rest stay queued', async () => {
    const core = createTestCore();
    const { tenant, keys } = await seedSample(core, 'stopping-events');
    const { subscription } = await buyPlan(core, keys['plans.notes.team'], 3, 'alice');
    const events: { id: string }[] = [];
    for (let i = 0; i < 3; i++)
      events.push(await core.seats.request(tenant, subscription.id, { type: 'seats.increment', count: 1, proration: 'none' }));
    let asked = 0;
    // Stop is asked before each claim: the first says go on, then it says stop.
    expect(await core.worker.drain(1000, () => asked++ > 0)).toBe(1);
    const statuses = async () => Promise.all(events.map(async (e) => (await core.worker.get(tenant, e.id)).status));
    expect(await statuses()).toEqual(['success', 'queued', 'queued']);
    expect(await core.worker.drain()).toBe(2);
    expect(await statuses()).toEqual(['success', 'success', 'success']);
    expect((await core.subscriptions.get(tenant, subscription.id)).subscription.quantity).toBe(6);
  });
});
