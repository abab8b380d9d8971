import request from 'supertest';
import {
  createTestWorld,
  purchase,
  seedOrganisation,
  startWebhookReceiver,
  type SeededOrg,
  type TestWorld,
} from '@tollgate/runtime/testing';
import { createCatalogApp } from '../src';
import { catalogApi } from './helpers';

// Webhooks, events, destinations and event attempts under the published catalog API's names and
// shapes. Every answer is checked against its route's response schema by the response audit.
let world: TestWorld;
let org: SeededOrg;
let other: SeededOrg;
let app: ReturnType<typeof createCatalogApp>;

beforeAll(async () => {
  world = await createTestWorld();
  org = await seedOrganisation(world, 'events-org');
  other = await seedOrganisation(world, 'events-other');
  app = createCatalogApp(world);
});
afterAll(() => world?.close());

const api = (key = org.liveKey) => catalogApi(app, key);
const patch = (path: string, body: object, key = org.liveKey) => request(app).patch(path).set('authorization', `Bearer ${key}`).send(body);

describe('webhook destinations as published (#106-110)', () => {
  it('accepts event types in both spellings (create and update), answers PATCH 204, and expands eventTypes', async () => {
    const created = (
      await api()
        .post('/api/webhooks', { url: 'https://hooks.vendor.example.com/a', events: ['subscription_created', 'subscription.cancelled'] })
        .expect(201)
    ).body.data;
    expect(created.events).toEqual(['subscription.created', 'subscription.cancelled']);
    expect(created.secret).toMatch(/^whsec_/);
    // The published update sends url and events, in the published spelling.
    await patch(`/api/webhooks/${created.id}`, {
      url: 'https://hooks.vendor.example.com/b',
      events: ['subscription_updated', 'usage_recorded', 'owner_updated'],
    }).expect(204);
    const detail = (await api().get(`/api/webhooks/${created.id}?expand=eventTypes`).expect(200)).body.data;
    expect(detail).toMatchObject({ url: 'https://hooks.vendor.example.com/b', secret: null });
    expect(detail.eventTypes.data.map((t: { event: string }) => t.event)).toEqual([
      'subscription_updated',
      'usage_recorded',
      'owner_updated',
    ]);
    const listed = (await api().get('/api/webhooks?expand=eventTypes').expect(200)).body.data;
    expect(listed.find((w: { id: string }) => w.id === created.id).eventTypes.type).toBe('list');
    const bad = await api()
      .post('/api/webhooks', { url: 'https://hooks.vendor.example.com/c', events: ['subscription_exploded'] })
      .expect(400);
    expect(bad.body.errors[0].property).toContain('events');
    await api().del(`/api/webhooks/${created.id}`).expect(204);
  });
});

describe('events, destinations and event attempts (#20-22, #29-32)', () => {
  it('lists events by type in either spelling, with updatedAt; follows an event to its destinations and their attempts; resends', async () => {
    const rx = await startWebhookReceiver((_h, i) => (i === 0 ? 500 : 200));
    try {
      const hook = (
        await api()
          .post('/api/webhooks', { url: rx.url, events: ['subscription_created'] })
          .expect(201)
      ).body.data;
      await purchase(world, org.keys['plans.notes.team'], 'dest-grantee', 2);
      await world.core.webhookDelivery.drain();
      expect(rx.received).toHaveLength(1);

      const events = (await api().get('/api/events?types=subscription_created').expect(200)).body;
      expect(events.data.length).toBeGreaterThan(0);
      for (const e of events.data) expect(e).toMatchObject({ type: 'subscription.created', updatedAt: e.createdAt });
      const same = (await api().get('/api/events?types=subscription.created').expect(200)).body;
      expect(same.data.map((e: { id: string }) => e.id)).toEqual(events.data.map((e: { id: string }) => e.id));
      expect((await api().get('/api/events?types=nope').expect(400)).body.errors[0].property).toBe('types');
      const eventId = rx.received[0].id;

      const event = (await api().get(`/api/events/${eventId}?expand=destinations`).expect(200)).body.data;
      expect(event.destinations).toMatchObject({ type: 'list', hasMore: false, path: `/api/destinations?eventId=${eventId}` });
      expect(event.destinations.data).toHaveLength(1);
      const dest = event.destinations.data[0];
      expect(dest).toMatchObject({ eventId, webhookId: hook.id, status: 'pending', webhook: { id: hook.id, url: rx.url } });

      // The webhook's own view of it (published GetWebhookDetailSchema): its destinations with their events.
      const viaHook = (await api().get(`/api/webhooks/${hook.id}?expand=destinations,eventTypes`).expect(200)).body.data;
      expect(viaHook.destinations.data).toEqual([
        expect.objectContaining({ id: dest.id, event: expect.objectContaining({ id: eventId }) }),
      ]);
      expect(viaHook.eventTypes.data.map((t: { event: string }) => t.event)).toEqual(['subscription_created']);
      const listed = (await api().get(`/api/destinations?eventId=${eventId}`).expect(200)).body;
      expect(listed.data.map((d: { id: string }) => d.id)).toEqual([dest.id]);
      const detail = (await api().get(`/api/destinations/${dest.id}?expand=attempts`).expect(200)).body.data;
      expect(detail.attempts.data).toEqual([
        expect.objectContaining({ destinationId: dest.id, attempt: 1, sentCount: 1, status: 'error', responseStatus: 500 }),
      ]);

      // Resend: the pending delivery (waiting 5 s for its retry) is tried at once.
      world.clock.set(new Date(world.clock.now().getTime() + 1000));
      await api().post(`/api/destinations/${dest.id}`).expect(204);
      await world.core.webhookDelivery.drain();
      expect(rx.received).toHaveLength(2);
      const attempts = (await api().get(`/api/event-attempts?destinationId=${dest.id}`).expect(200)).body.data;
      expect(attempts.map((a: { attempt: number; status: string }) => [a.attempt, a.status])).toEqual([
        [1, 'error'],
        [2, 'success'],
      ]);
      expect((await api().get(`/api/destinations/${dest.id}`).expect(200)).body.data.status).toBe('delivered');

      // The published resend of an attempt: the destination named in the body; a finished one is sent again.
      world.clock.set(new Date(world.clock.now().getTime() + 1000));
      await api().post('/api/event-attempts', { destinationId: dest.id }).expect(204);
      await world.core.webhookDelivery.drain();
      expect(rx.received).toHaveLength(3);
      expect((await api().post('/api/event-attempts', {}).expect(400)).body.errors[0].property).toBe('id');
      expect((await api().get('/api/event-attempts').expect(200)).body.data.length).toBeGreaterThanOrEqual(3);

      // Another organisation sees none of it.
      expect((await api(other.liveKey).get('/api/destinations').expect(200)).body.data).toEqual([]);
      expect((await api(other.liveKey).get('/api/event-attempts').expect(200)).body.data).toEqual([]);
      expect([403, 404]).toContain((await api(other.liveKey).get(`/api/destinations/${dest.id}`)).status);
      expect([403, 404]).toContain((await api(other.liveKey).post(`/api/destinations/${dest.id}`)).status);
      await api(org.readOnlyKey).get('/api/destinations').expect(403);
      await api().del(`/api/webhooks/${hook.id}`).expect(204);
    } finally {
      await rx.close();
    }
  });

  it('refuses a resend to a disabled endpoint with 409, through a destination as through its event, and queues nothing', async () => {
    const rx = await startWebhookReceiver(() => 200);
    try {
      const hook = (
        await api()
          .post('/api/webhooks', { url: rx.url, events: ['subscription_created'] })
          .expect(201)
      ).body.data;
      await purchase(world, org.keys['plans.notes.team'], 'disabled-grantee', 2);
      await world.core.webhookDelivery.drain();
      expect(rx.received).toHaveLength(1);
      const eventId = rx.received[0].id;
      const [dest] = (await api().get(`/api/destinations?eventId=${eventId}`).expect(200)).body.data;
      expect(dest).toMatchObject({ webhookId: hook.id, status: 'delivered' });
      await patch(`/api/webhooks/${hook.id}`, { enabled: false }).expect(204);

      const viaEvent = (await api().post(`/api/events/${eventId}/resend`, { endpointId: hook.id }).expect(409)).body;
      const viaDestination = (await api().post(`/api/destinations/${dest.id}`).expect(409)).body;
      const viaAttempt = (await api().post('/api/event-attempts', { destinationId: dest.id }).expect(409)).body;
      expect(viaDestination).toEqual(viaEvent);
      expect(viaAttempt).toEqual(viaEvent);
      expect(JSON.stringify(viaEvent)).toContain('the endpoint is disabled');
      // Nothing was queued to fail unsent.
      expect((await api().get(`/api/destinations?eventId=${eventId}`).expect(200)).body.data.map((d: { id: string }) => d.id)).toEqual([
        dest.id,
      ]);
      // Enabled again, the destination is sent again.
      await patch(`/api/webhooks/${hook.id}`, { enabled: true }).expect(204);
      await api().post(`/api/destinations/${dest.id}`).expect(204);
      await world.core.webhookDelivery.drain();
      expect(rx.received).toHaveLength(2);
      await api().del(`/api/webhooks/${hook.id}`).expect(204);
    } finally {
      await rx.close();
    }
  });
});
