import { createPublicKey, createVerify } from 'node:crypto';
import request from 'supertest';
import { createTestWorld, seedOrganisation, startWebhookReceiver, type SeededOrg, type TestWorld } from '@tollgate/runtime/testing';
import { createCatalogApp } from '../src';
import { catalogApi } from './helpers';

// A vendor through `/api` only (issue #20's acceptance 3): a product and a plan saved with its
// pricing, a webhook endpoint, a quick checkout paid in the sandbox, the receipt, the subscription
// listed, a grantee added to its group and checked (signed), cancelled at period end, then the
// events and their attempts.
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

    // The subscription, listed by its owner; a teammate added to its group is entitled at once.
    const [subscription] = (await api().get('/api/subscriptions?owner=flow-owner@example.com').expect(200)).body.data;
    expect(subscription).toMatchObject({ id: receipt.subscriptionId, status: 'active' });
    const entitlementsOf = async (granteeId: string) =>
      (await api().get(`/api/entitlements/check?granteeId=${granteeId}`).expect(200)).body.data;
    expect((await entitlementsOf('flow-teammate')).entitlements).toEqual([]);
    const subscriptionPlan = (await api().get(`/api/subscription-plans/${subscription.id}`).expect(200)).body.data;
    await api()
      .post(`/api/groups/${subscriptionPlan.groupId}/grantees`, [{ type: 'add', granteeId: 'flow-teammate' }])
      .expect(204);
    const check = await entitlementsOf('flow-teammate');
    expect(check.entitlements).toEqual([expect.objectContaining({ type: 'entitlement', value: 'export' })]);
    // Signed with the organisation's key (ECDSA P-256): verifiable offline until expiresAt.
    const publicKey = createPublicKey({
      key: Buffer.concat([
        Buffer.from('3059301306072a8648ce3d020106082a8648ce3d030107034200', 'hex'),
        Buffer.from(check.publicHash, 'hex'),
      ]),
      format: 'der',
      type: 'spki',
    });
    expect(createVerify('SHA256').update(check.signed).verify(publicKey, Buffer.from(check.signature, 'hex'))).toBe(true);
    expect(JSON.parse(check.signed)).toMatchObject({ granteeId: 'flow-teammate', expiresAt: check.expiresAt });

    // Cancelled at the end of the period: still active until then.
    await api().put(`/api/subscriptions/${subscription.id}/auto-renew?id=${subscription.id}&status=disable`).expect(204);
    expect((await api().get(`/api/subscriptions/${subscription.id}`).expect(200)).body.data).toMatchObject({
      status: 'active',
      cancelAtPeriodEnd: true,
    });
    expect((await entitlementsOf('flow-teammate')).entitlements).not.toEqual([]);

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
