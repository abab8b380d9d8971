import request from 'supertest';
import { createTestWorld, seedOrganisation, startWebhookReceiver, type SeededOrg, type TestWorld } from '@tollgate/runtime/testing';
import { createCatalogApp } from '../src';
import { catalogApi } from './helpers';

// A vendor through `/api` only (the commerce part of issue #20's acceptance 3): a product and a
// plan saved with its pricing, a webhook endpoint, a quick checkout paid in the sandbox, then the
// receipt, the events and their attempts.
let world: TestWorld;
let org: SeededOrg;
let app: ReturnType<typeof createCatalogApp>;

beforeAll(async () => {
  world = await createTestWorld();
  org = await seedOrganisation(world, 'vendor-flow');
  app = createCatalogApp(world);
});
afterAll(() => world?.close());

const api = () => catalogApi(app, org.liveKey);

it('saves a product and plan, sells it by quick checkout in the sandbox, and sees the receipt, events and attempts', async () => {
  const rx = await startWebhookReceiver();
  try {
    await api()
      .post('/api/webhooks', { url: rx.url, events: ['subscription_created'] })
      .expect(201);
    const product = (await api().post('/api/products', { name: 'Flow' }).expect(201)).body.data;
    const plan = (
      await api()
        .post('/api/plans/save', {
          productId: product.id,
          name: 'Flow Pro',
          entitlements: ['export'],
          lineItems: [
            {
              name: 'Seats',
              slug: 'seats',
              priceType: 'per_seat',
              intervalType: 'recurring',
              billingScheme: 'per_unit',
              tiersMode: null,
              minQuantity: 1,
              maxQuantity: 20,
              prices: [
                { defaultCurrency: 'USD', interval: 'month', intervalCount: 1, currencyOptions: [{ currency: 'USD', unitAmount: 1500 }] },
              ],
            },
          ],
        })
        .expect(201)
    ).body.data;
    const link = (
      await api()
        .post('/api/checkout', {
          planId: plan.id,
          owner: 'flow-owner@example.com',
          grantee: 'flow-user',
          interval: 'month',
          intervalCount: 1,
          currency: 'USD',
          metadata: { seats: { quantity: 2 } },
          successUrl: 'https://vendor.example.com/ok',
          cancelUrl: 'https://vendor.example.com/no',
        })
        .expect(200)
    ).body.data.url;
    await request(app)
      .post(`${new URL(link).pathname}/pay`)
      .type('form')
      .send({})
      .expect(303);
    await world.core.webhookDelivery.drain();

    const [receipt] = (await api().get('/api/receipts?search=flow-owner&expand=owner').expect(200)).body.data;
    expect(receipt.owner.value).toBe('flow-owner@example.com');
    const items = (await api().get(`/api/receipts/${receipt.id}?expand=receiptItems`).expect(200)).body.data.receiptItems.data;
    expect(items).toEqual([expect.objectContaining({ quantity: 2, lineItem: expect.objectContaining({ slug: 'seats' }) })]);
    const events = (await api().get('/api/events?types=subscription_created').expect(200)).body.data;
    const created = events.find((e: { payload: { data: { uuid?: string } } }) => e.payload.data.uuid === receipt.subscriptionId);
    expect(created).toBeDefined();
    const [destination] = (await api().get(`/api/destinations?eventId=${created.id}`).expect(200)).body.data;
    expect(destination.status).toBe('delivered');
    const attempts = (await api().get(`/api/event-attempts?destinationId=${destination.id}`).expect(200)).body.data;
    expect(attempts).toEqual([expect.objectContaining({ attempt: 1, status: 'success', responseStatus: 200 })]);
    expect(rx.received.map((h) => h.event.type)).toEqual(['subscription.created']);
  } finally {
    await rx.close();
  }
});
