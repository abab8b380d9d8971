import fs from 'node:fs';
import path from 'node:path';
import request from 'supertest';
import { createRuntime } from '@tollgate/runtime';
import {
  createTestWorld,
  seedOrganisation,
  startWebhookReceiver,
  testConfig,
  type SeededOrg,
  type TestWorld,
  type WebhookReceiver,
  type ReceivedWebhook,
} from '@tollgate/runtime/testing';
import { FakePaymentProvider } from '@tollgate/core/testing';
import { createServerApp } from '../src';

// Outgoing webhooks end to end: a real receiver on 127.0.0.1, a real sandbox purchase over HTTP,
// deliveries by the use case the background worker runs (drained here, so the test controls time).
let world: TestWorld;
let org: SeededOrg;
let other: SeededOrg;
let app: ReturnType<typeof createServerApp>;
const receivers: WebhookReceiver[] = [];
const silent = { info: () => undefined, error: () => undefined };

beforeAll(async () => {
  world = await createTestWorld();
  org = await seedOrganisation(world, 'hooks-org');
  other = await seedOrganisation(world, 'hooks-other');
  app = createServerApp(world);
});
afterAll(async () => {
  await Promise.all(receivers.map((r) => r.close()));
  await world?.close();
});

const receiver = async (...args: Parameters<typeof startWebhookReceiver>) => {
  const r = await startWebhookReceiver(...args);
  receivers.push(r);
  return r;
};
const api = (key: string) => ({
  get: (path: string) => request(app).get(path).set('authorization', `Bearer ${key}`),
  post: (path: string, body?: object) => request(app).post(path).set('authorization', `Bearer ${key}`).send(body),
  patch: (path: string, body: object) => request(app).patch(path).set('authorization', `Bearer ${key}`).send(body),
  delete: (path: string) => request(app).delete(path).set('authorization', `Bearer ${key}`),
});
const v1 = (key: string) => ({
  get: (path: string) => request(app).get(path).set('x-api-key', key).set('version', 'v1'),
  post: (path: string, body: object) => request(app).post(path).set('x-api-key', key).set('version', 'v1').send(body),
});

/** docs/webhooks.md's receiver, run as written. */
type Receive = (secret: string, headers: object, rawBody: string, seen?: Set<string>, now?: number) => { type: string } | null;
const receive = ((): Receive => {
  const doc = fs.readFileSync(path.join(__dirname, '..', '..', '..', 'docs', 'webhooks.md'), 'utf8');
  const code = /```js receiver\n([\s\S]*?)```/.exec(doc)?.[1];
  if (!code) throw new Error('docs/webhooks.md has no receiver snippet');
  return new Function('require', `${code}\nreturn verifyWebhook;`)(require) as Receive;
})();
const verify = (secret: string, hook: ReceivedWebhook) =>
  receive(secret, hook.headers, hook.body, new Set(), world.clock.now().getTime()) !== null;

const endpointFor = async (key: string, url: string, events?: string[]) =>
  (
    await api(key)
      .post('/api/webhooks', { url, ...(events ? { events } : {}), description: 'test receiver' })
      .expect(201)
  ).body.data;
const clearEndpoints = async (key: string) => {
  for (const e of (await api(key).get('/api/webhooks?limit=100').expect(200)).body.data)
    await api(key).delete(`/api/webhooks/${e.id}`).expect(204);
};

describe('webhook endpoints over the catalog API', () => {
  it('creates (secret shown once), lists, reads, updates and deletes; refuses bad input with 400', async () => {
    const created = await endpointFor(org.liveKey, 'https://vendor.example.com/hooks', ['license.created']);
    expect(created).toMatchObject({ url: 'https://vendor.example.com/hooks', events: ['license.created'], isActive: true, isTest: false });
    expect(created.secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    const detail = (await api(org.liveKey).get(`/api/webhooks/${created.id}`).expect(200)).body;
    expect(detail.type).toBe('object');
    expect(detail.data.secret).toBeNull();
    const list = (await api(org.liveKey).get('/api/webhooks').expect(200)).body;
    expect(list).toMatchObject({ type: 'list', hasMore: false });
    expect(list.data.map((e: { id: string }) => e.id)).toContain(created.id);
    // PATCH answers 204 as published; the change shows in the detail.
    await api(org.liveKey).patch(`/api/webhooks/${created.id}`, { events: [], enabled: false }).expect(204);
    const patched = (await api(org.liveKey).get(`/api/webhooks/${created.id}`).expect(200)).body.data;
    expect(patched).toMatchObject({ events: [], isActive: false });
    expect(patched.disabledAt).not.toBeNull();
    await api(org.liveKey)
      .post('/api/webhooks', { url: 'https://x.example.com', events: ['nope'] })
      .expect(400);
    await api(org.liveKey).post('/api/webhooks', { url: 'ftp://x.example.com' }).expect(400);
    await api(org.liveKey).post('/api/webhooks', {}).expect(400);
    await api(org.liveKey).patch(`/api/webhooks/${created.id}`, {}).expect(400);
    await api(org.liveKey).delete(`/api/webhooks/${created.id}`).expect(204);
    await api(org.liveKey).get(`/api/webhooks/${created.id}`).expect(404);
  });

  it("another organisation's or mode's endpoints and events are invisible, and scopes are enforced", async () => {
    const hook = await endpointFor(org.liveKey, 'https://vendor.example.com/private');
    await api(other.liveKey).get(`/api/webhooks/${hook.id}`).expect(403);
    await api(other.liveKey).patch(`/api/webhooks/${hook.id}`, { enabled: false }).expect(403);
    await api(other.liveKey).delete(`/api/webhooks/${hook.id}`).expect(403);
    await api(other.liveKey).get(`/api/webhooks/${hook.id}/attempts`).expect(403);
    await api(org.testKey).get(`/api/webhooks/${hook.id}`).expect(404);
    expect((await api(other.liveKey).get('/api/webhooks').expect(200)).body.data).toEqual([]);
    await v1(org.liveKey)
      .post('/licenses', { planUuid: org.keys['plans.notes.free'], member: 'm@example.com', granteeId: 'iso' })
      .expect(200);
    const events = (await api(org.liveKey).get('/api/events?type=license.created').expect(200)).body.data;
    expect(events.length).toBeGreaterThan(0);
    await api(other.liveKey).get(`/api/events/${events[0].id}`).expect(403);
    await api(other.liveKey).post(`/api/events/${events[0].id}/resend`, {}).expect(403);
    expect((await api(other.liveKey).get('/api/events').expect(200)).body.data).toEqual([]);
    expect((await api(org.testKey).get('/api/events').expect(200)).body.data).toEqual([]);
    // The read-only key has neither webhooks nor events scopes.
    await api(org.readOnlyKey).get('/api/webhooks').expect(403);
    await api(org.readOnlyKey).get('/api/events').expect(403);
    await clearEndpoints(org.liveKey);
  });
});

describe('delivery to a real receiver', () => {
  it('a sandbox purchase delivers checkout.completed, subscription.created and license.created, each signed with the endpoint secret', async () => {
    const rx = await receiver();
    const hook = await endpointFor(org.liveKey, rx.url);
    const q = `successUrl=https://vendor.example.com/ok&cancelUrl=https://vendor.example.com/no&granteeId=rita&member=buyer@example.com`;
    const link = (await v1(org.liveKey).get(`/plans/${org.keys['plans.notes.business']}/checkoutlink?${q}`).expect(200)).body;
    await request(app)
      .post(`${new URL(link.checkoutUrl).pathname}/pay`)
      .type('form')
      .send({})
      .expect(303);
    await world.core.webhookDelivery.drain();
    const types = rx.received.map((h) => h.event.type);
    expect(types).toEqual(['subscription.created', 'license.created', 'checkout.completed']);
    for (const h of rx.received) {
      expect(verify(hook.secret, h)).toBe(true);
      expect(verify('whsec_' + Buffer.alloc(24).toString('base64'), h)).toBe(false);
      expect(Math.abs(Number(h.timestamp) - world.clock.now().getTime() / 1000)).toBeLessThan(2);
      expect(h.headers['content-type']).toBe('application/json');
    }
    // The documented receiver refuses a replayed id, a stale timestamp and a changed body.
    const first = rx.received[0];
    const seen = new Set<string>();
    const now = world.clock.now().getTime();
    expect(receive(hook.secret, first.headers, first.body, seen, now)).toMatchObject({ type: 'subscription.created' });
    expect(receive(hook.secret, first.headers, first.body, seen, now)).toBeNull();
    expect(receive(hook.secret, first.headers, first.body, new Set(), now + 600_000)).toBeNull();
    expect(receive(hook.secret, first.headers, first.body.replace('"quantity":1', '"quantity":9'), new Set(), now)).toBeNull();
    // The data is the record as the API shows it.
    const [sub, lic, done] = rx.received.map((h) => h.event.data);
    const license = (await v1(org.liveKey).get(`/licenses/${lic.uuid}`).expect(200)).body;
    expect(lic).toEqual(license);
    expect((await v1(org.liveKey).get(`/subscriptions/${sub.uuid}`).expect(200)).body).toMatchObject(sub);
    expect(done).toMatchObject({ subscriptionUuid: sub.uuid, granteeId: 'rita', status: 'completed' });
    // Each is listed with the payload it was sent with.
    const listed = (await api(org.liveKey).get('/api/events?type=checkout.completed').expect(200)).body.data;
    expect(listed.map((e: { payload: unknown }) => e.payload)).toContainEqual(JSON.parse(rx.received[2].body));
    await clearEndpoints(org.liveKey);
  });

  it('a receiver that answers 500 twice then 200 gets the event three times, and it is marked delivered', async () => {
    const rx = await receiver((_h, i) => (i < 2 ? 500 : 200));
    const hook = await endpointFor(org.liveKey, rx.url, ['license.created']);
    await v1(org.liveKey)
      .post('/licenses', { planUuid: org.keys['plans.notes.free'], member: 'm@example.com', granteeId: 'retry' })
      .expect(200);
    const step = async (ms: number) => {
      world.clock.set(new Date(world.clock.now().getTime() + ms));
      await world.core.webhookDelivery.drain();
    };
    await step(0);
    await step(5_000);
    await step(300_000);
    await step(3_600_000);
    expect(rx.received.map((h) => h.event.data.granteeId)).toEqual(['retry', 'retry', 'retry']);
    expect(new Set(rx.received.map((h) => h.id)).size).toBe(1);
    const attempts = (await api(org.liveKey).get(`/api/webhooks/${hook.id}/attempts`).expect(200)).body;
    expect(attempts.data.map((a: { responseStatus: number }) => a.responseStatus)).toEqual([500, 500, 200]);
    expect(attempts.data[2].responseBody).toBe('ok');
    expect(await world.core.webhookEvents.depth()).toBe(0);
    // Resend delivers it once more.
    const eventId = rx.received[0].id;
    expect((await api(org.liveKey).post(`/api/events/${eventId}/resend`, {}).expect(202)).body.data).toMatchObject({
      id: eventId,
      deliveries: 1,
    });
    await world.core.webhookDelivery.drain();
    expect(rx.received).toHaveLength(4);
    await clearEndpoints(org.liveKey);
  });

  it('does not follow redirects, and refuses private targets unless the deployment allows them', async () => {
    const rx = await receiver(() => ({ status: 302, body: '' }));
    const hook = await endpointFor(org.liveKey, rx.url, ['license.created']);
    await v1(org.liveKey)
      .post('/licenses', { planUuid: org.keys['plans.notes.free'], member: 'm@example.com', granteeId: 'redir' })
      .expect(200);
    await world.core.webhookDelivery.drain();
    const [attempt] = (await api(org.liveKey).get(`/api/webhooks/${hook.id}/attempts`).expect(200)).body.data;
    expect(attempt.responseStatus).toBe(302);
    expect(await world.core.webhookEvents.depth()).toBe(1);
    await clearEndpoints(org.liveKey);

    // A deployment that does not allow private targets refuses them at creation and at delivery.
    const strict = await createRuntime(testConfig({ webhookAllowPrivate: false }), {
      database: world.db,
      clock: world.clock,
      logger: silent,
    });
    const strictApp = createServerApp(strict);
    for (const url of [
      'http://127.0.0.1:9/hooks',
      'http://localhost/hooks',
      'http://10.1.2.3/hooks',
      'http://[::1]/hooks',
      'http://169.254.169.254/latest',
    ])
      await request(strictApp).post('/api/webhooks').set('authorization', `Bearer ${org.liveKey}`).send({ url }).expect(400);
    await strict.core.stopListening();
  });
});

describe('modes', () => {
  it('a test-mode endpoint receives only test-mode events, a live one only live events', async () => {
    const live = await receiver();
    const test = await receiver();
    await endpointFor(org.liveKey, live.url, ['license.created']);
    await endpointFor(org.testKey, test.url, ['license.created']);
    await v1(org.liveKey)
      .post('/licenses', { planUuid: org.keys['plans.notes.free'], member: 'm@example.com', granteeId: 'live-one' })
      .expect(200);
    await v1(org.testKey)
      .post('/licenses', { planUuid: org.testKeys['plans.notes.free'], member: 'm@example.com', granteeId: 'test-one' })
      .expect(200);
    await world.core.webhookDelivery.drain();
    expect(live.received.map((h) => [h.event.data.granteeId, h.event.data.isTest])).toEqual([['live-one', false]]);
    expect(test.received.map((h) => [h.event.data.granteeId, h.event.data.isTest])).toEqual([['test-one', true]]);
    await clearEndpoints(org.liveKey);
    await clearEndpoints(org.testKey);
  });
});

describe('at least once, exactly once in the normal case', () => {
  it('two instances draining at once deliver each event once', async () => {
    const rx = await receiver(() => ({ status: 200, delayMs: 5 }));
    await endpointFor(org.liveKey, rx.url, ['license.created']);
    const second = await createRuntime(testConfig(), { database: world.db, clock: world.clock, logger: silent });
    const n = 20;
    for (let i = 0; i < n; i++)
      await v1(org.liveKey)
        .post('/licenses', { planUuid: org.keys['plans.notes.free'], member: 'm@example.com', granteeId: `twice-${i}` })
        .expect(200);
    const [a, b] = await Promise.all([world.core.webhookDelivery.drain(), second.core.webhookDelivery.drain()]);
    expect(a + b).toBe(n);
    const ids = rx.received.map((h) => h.id);
    expect(ids).toHaveLength(n);
    expect(new Set(ids).size).toBe(n);
    await second.core.stopListening();
    await clearEndpoints(org.liveKey);
  });

  it('a change whose transaction rolls back sends nothing; committed events survive a restart and are delivered by it', async () => {
    const rx = await receiver();
    await endpointFor(org.liveKey, rx.url);
    const before = (await api(org.liveKey).get('/api/events?limit=100').expect(200)).body.data.length;
    // The payment provider fails inside the purchase's transaction, after its rows were written.
    const payments = new FakePaymentProvider();
    const broken = await createRuntime(testConfig(), { database: world.db, clock: world.clock, payments, logger: silent });
    const { url } = await broken.core.checkout.checkoutLink(org.tenant, org.keys['plans.notes.business'], {
      successUrl: 'https://vendor.example.com/ok',
      cancelUrl: 'https://vendor.example.com/no',
      granteeId: 'rolled-back',
      member: 'b@example.com',
    });
    payments.failNext = new Error('provider down');
    await expect(broken.core.checkout.completeCheckout(url.split('/').pop() as string)).rejects.toThrow('provider down');
    await broken.core.stopListening();
    expect((await api(org.liveKey).get('/api/events?limit=100').expect(200)).body.data.length).toBe(before);
    await world.core.webhookDelivery.drain();
    expect(rx.received).toEqual([]);

    // Committed, then the process is gone before delivering: a new one (a restart) delivers.
    await v1(org.liveKey)
      .post('/licenses', { planUuid: org.keys['plans.notes.free'], member: 'm@example.com', granteeId: 'survivor' })
      .expect(200);
    const restarted = await createRuntime(testConfig(), { database: world.db, clock: world.clock, logger: silent });
    expect(await restarted.core.webhookDelivery.drain()).toBe(1);
    expect(rx.received.map((h) => h.event.data.granteeId)).toEqual(['survivor']);
    await restarted.core.stopListening();
    await clearEndpoints(org.liveKey);
  });
});
