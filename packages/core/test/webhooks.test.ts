import {
  nextWebhookAttempt,
  WEBHOOK_RETRY_WINDOW_MS,
  WEBHOOK_TIMEOUT_MS,
  type OutboxEvent,
  type Repositories,
  type Tenant,
  type UnitOfWork,
  type WebhookResponse,
} from '../src';
import {
  buyPlan,
  createTestCore,
  FakeWebhookSigner,
  FaultInjectingUnitOfWork,
  InMemoryUnitOfWork,
  ScriptedWebhookSender,
  seedSample,
  type TestCore,
} from '../src/testing';

const buy = buyPlan;

const allEvents = async (core: TestCore, tenant: Tenant): Promise<OutboxEvent[]> =>
  (await core.webhookEvents.list(tenant, { limit: 100 })).items;
const advance = (core: TestCore, ms: number) => core.clock.set(new Date(core.clock.now().getTime() + ms));

/** A unit of work that counts the webhook repository's calls and can run something just before its next transaction. */
class WatchedUnitOfWork implements UnitOfWork {
  readonly calls: string[] = [];
  beforeNextRun?: () => Promise<void>;
  constructor(readonly inner: UnitOfWork = new InMemoryUnitOfWork()) {}
  private watch(r: Repositories): Repositories {
    const calls = this.calls;
    const webhooks = new Proxy(r.webhooks, {
      get: (target, key, receiver) => {
        const value: unknown = Reflect.get(target, key, receiver);
        return typeof value === 'function'
          ? (...args: unknown[]) => {
              calls.push(String(key));
              return (value as (...a: unknown[]) => unknown).apply(target, args);
            }
          : value;
      },
    });
    return { ...r, webhooks };
  }
  read<T>(work: (repos: Repositories) => Promise<T>): Promise<T> {
    return this.inner.read((r) => work(this.watch(r)));
  }
  async run<T>(work: (repos: Repositories) => Promise<T>): Promise<T> {
    const before = this.beforeNextRun;
    this.beforeNextRun = undefined;
    await before?.();
    return this.inner.run((r) => work(this.watch(r)));
  }
}

describe('retries', () => {
  it('retries after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, then daily, and gives up after 3 days', () => {
    const t0 = new Date('2026-01-01T00:00:00Z');
    let at = t0;
    const delays: number[] = [];
    for (let attempt = 1; ; attempt++) {
      const next = nextWebhookAttempt(t0, attempt, at);
      if (!next) break;
      delays.push(next.getTime() - at.getTime());
      at = next;
    }
    expect(delays.slice(0, 7)).toEqual([5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 86_400_000]);
    expect(at.getTime() - t0.getTime()).toBeLessThanOrEqual(WEBHOOK_RETRY_WINDOW_MS);
    expect(at.getTime() + 86_400_000 - t0.getTime()).toBeGreaterThan(WEBHOOK_RETRY_WINDOW_MS);
  });
});

describe('the outbox: events written with the change they describe', () => {
  it('a purchase writes subscription.created then one license.created per seat, in that order', async () => {
    const core = createTestCore();
    const { tenant, keys } = await seedSample(core, 'acme');
    const { subscription } = await buy(core, keys['plans.notes.team'], 3);
    const events = await allEvents(core, tenant);
    // Listed in the order they were written.
    expect(events.map((e) => e.type)).toEqual(['subscription.created', 'license.created', 'license.created', 'license.created']);
    const created = events.find((e) => e.type === 'subscription.created') as OutboxEvent;
    expect(created.payload).toMatchObject({ type: 'subscription.created', data: { uuid: subscription.id, quantity: 3, status: 'ACTIVE' } });
    expect(events.every((e) => e.orderingKey === subscription.id)).toBe(true);
    const license = events.find((e) => e.type === 'license.created') as OutboxEvent;
    expect((license.payload.data as { capabilities: { name: string }[] }).capabilities.map((c) => c.name)).toEqual(['edit', 'export']);
    // The other mode sees none of them.
    expect(await allEvents(core, { ...tenant, isTest: true })).toEqual([]);
  });

  it('cancel, seats, product and plan changes each write their event; a save that changes nothing writes none', async () => {
    const core = createTestCore();
    const { tenant, keys } = await seedSample(core, 'acme');
    const { subscription } = await buy(core, keys['plans.notes.team'], 2);
    const before = new Set((await allEvents(core, tenant)).map((e) => e.id));
    await core.seats.apply(subscription.id, { type: 'seats.increment', count: 1, proration: 'none' });
    await core.subscriptions.cancel(tenant, subscription.id, 'end');
    await core.products.updateProduct(tenant, keys['products.notes'], { name: 'Notes Pro' });
    await core.products.updateProduct(tenant, keys['products.notes'], { name: 'Notes Pro' });
    await core.subscriptions.cancel(tenant, subscription.id, 'now');
    // Events of one transaction share their instant; the list orders them by (createdAt, id).
    const types = (await allEvents(core, tenant)).filter((e) => !before.has(e.id)).map((e) => e.type);
    expect(types).toContain('seats.changed');
    expect(types).toContain('subscription.updated');
    expect(types.filter((t) => t === 'product.updated')).toHaveLength(1);
    expect(types).toContain('subscription.cancelled');
    expect(types.filter((t) => t === 'license.cancelled')).toHaveLength(3);
    const seats = (await allEvents(core, tenant)).find((e) => e.type === 'seats.changed') as OutboxEvent;
    expect(seats.payload.data).toMatchObject({ quantity: 3, previousQuantity: 2 });
  });

  it('a transaction that fails after any of its writes leaves no event behind (fault injection at every write)', async () => {
    const uow = new FaultInjectingUnitOfWork(new InMemoryUnitOfWork());
    const core = createTestCore({ uow });
    const sender = new ScriptedWebhookSender();
    const { tenant, keys } = await seedSample(core, 'acme');
    const withSender = createTestCore({ uow, webhooks: sender });
    await withSender.webhooks.create(tenant, { url: 'https://vendor.example.com/hooks' });
    let failures = 0;
    for (let n = 1; ; n++) {
      uow.failAfterWrites = n;
      try {
        await buy(core, keys['plans.notes.team'], 2, `grantee-${n}`);
        break;
      } catch (e) {
        expect(String(e)).toMatch(/injected fault/);
        failures++;
      } finally {
        uow.failAfterWrites = undefined;
      }
      expect(await allEvents(core, tenant)).toEqual([]);
      expect(await core.licenses.count(tenant, {})).toMatchObject({ count: 0 });
      expect(await withSender.webhookDelivery.drain()).toBe(0);
    }
    expect(failures).toBeGreaterThan(2);
    expect((await allEvents(core, tenant)).length).toBe(3);
    expect(await withSender.webhookDelivery.drain()).toBe(3);
    expect(sender.sent).toHaveLength(3);
  });
});

describe('delivery', () => {
  async function setUp(answer?: (i: number) => WebhookResponse) {
    const sender = new ScriptedWebhookSender(answer ? (_r, i) => answer(i) : undefined);
    const core = createTestCore({ webhooks: sender });
    const { tenant, keys } = await seedSample(core, 'acme');
    const { endpoint, secret } = await core.webhooks.create(tenant, { url: 'https://vendor.example.com/hooks' });
    return { core, sender, tenant, keys, endpoint, secret };
  }

  it('signs each POST with the endpoint secret and sends the same webhook-id on every attempt', async () => {
    const { core, sender, keys, secret, tenant, endpoint } = await setUp((i) =>
      i < 2 ? { status: 500, body: 'x'.repeat(5000) } : { status: 200, body: 'ok' },
    );
    await core.licenses.createAdHoc(tenant, [{ planUuid: keys['plans.notes.free'], member: 'm@example.com', granteeId: 'g' }]);
    expect(await core.webhookDelivery.drain()).toBe(1);
    expect(await core.webhookDelivery.drain()).toBe(0); // not due for 5 s
    advance(core, 5_000);
    expect(await core.webhookDelivery.drain()).toBe(1);
    advance(core, 299_000);
    expect(await core.webhookDelivery.drain()).toBe(0);
    advance(core, 1_000);
    expect(await core.webhookDelivery.drain()).toBe(1);
    expect(sender.sent).toHaveLength(3);
    for (const req of sender.sent) {
      const h = req.headers;
      expect(h['webhook-signature']).toBe(FakeWebhookSigner.signature(secret, h['webhook-id'], Number(h['webhook-timestamp']), req.body));
    }
    expect(new Set(sender.sent.map((r) => r.headers['webhook-id'])).size).toBe(1);
    const attempts = (await core.webhooks.attempts(tenant, endpoint.id, { limit: 10 })).items;
    expect(attempts.map((a) => a.responseStatus)).toEqual([500, 500, 200]);
    expect(attempts[0].responseBody).toHaveLength(1024);
    expect(await core.webhookEvents.depth()).toBe(0);
  });

  it('keeps the order of one subscription: a later event waits while an earlier one is retried', async () => {
    const { core, sender, keys, tenant } = await setUp((i) => (i === 0 ? { status: 503, body: '' } : { status: 200, body: 'ok' }));
    const { subscription } = await buy(core, keys['plans.notes.team'], 2);
    await core.subscriptions.cancel(tenant, subscription.id, 'end');
    expect(await core.webhookDelivery.drain()).toBe(1); // subscription.created failed; the rest wait behind it
    advance(core, 5_000);
    expect(await core.webhookDelivery.drain()).toBe(6);
    expect(sender.sent.map((r) => JSON.parse(r.body).type)).toEqual([
      'subscription.created',
      'subscription.created',
      'license.created',
      'license.created',
      'subscription.updated',
      'license.updated',
      'license.updated',
    ]);
  });

  it('fails a delivery after 3 days of failures and disables the endpoint; a disabled endpoint gets nothing new', async () => {
    const { core, sender, keys, tenant, endpoint } = await setUp(() => ({ status: null, error: 'could not be reached: ECONNREFUSED' }));
    await core.licenses.createAdHoc(tenant, [{ planUuid: keys['plans.notes.free'], member: 'm@example.com', granteeId: 'g' }]);
    for (let i = 0; i < 100; i++) {
      await core.webhookDelivery.drain();
      advance(core, 3_600_000);
    }
    expect(sender.sent.length).toBe(9);
    expect((await core.webhooks.get(tenant, endpoint.id)).disabledAt).not.toBeNull();
    await core.licenses.createAdHoc(tenant, [{ planUuid: keys['plans.notes.free'], member: 'm@example.com', granteeId: 'h' }]);
    expect(await core.webhookDelivery.drain()).toBe(0);
    // A disabled endpoint is not resent to; enabled again, it gets a resent event.
    const [first] = await allEvents(core, tenant).then((es) => es.filter((e) => e.type === 'license.created'));
    await expect(core.webhookEvents.resend(tenant, first.id, endpoint.id)).rejects.toMatchObject({ code: 'CONFLICT' });
    await core.webhooks.update(tenant, endpoint.id, { enabled: true });
    expect((await core.webhookEvents.resend(tenant, first.id)).deliveries).toBe(1);
    expect(await core.webhookDelivery.drain()).toBe(1);
  });

  it("keeps an endpoint enabled that answers everything but one subscription's events: only that delivery fails", async () => {
    // The receiver refuses the events of one ad hoc license (one ordering key) and takes the rest.
    const { core, sender, keys, tenant, endpoint } = await setUp();
    const refusing = new ScriptedWebhookSender((req) =>
      (JSON.parse(req.body) as { data: { granteeId?: string } }).data.granteeId === 'refused'
        ? { status: 422, body: 'no' }
        : { status: 200, body: 'ok' },
    );
    const withRefusing = createTestCore({ uow: core.uow, webhooks: refusing });
    const license = (granteeId: string) =>
      core.licenses.createAdHoc(tenant, [{ planUuid: keys['plans.notes.free'], member: 'm@example.com', granteeId }]);
    await license('refused');
    for (let hour = 0; hour < 100; hour++) {
      if (hour % 6 === 0) await license(`taken-${hour}`);
      withRefusing.clock.set(core.clock.now());
      await withRefusing.webhookDelivery.drain();
      advance(core, 3_600_000);
    }
    // Created after the refused delivery gave up: still sent, and taken.
    await license('after');
    withRefusing.clock.set(core.clock.now());
    expect(await withRefusing.webhookDelivery.drain()).toBe(1);
    expect(sender.sent).toHaveLength(0);
    expect((await core.webhooks.get(tenant, endpoint.id)).disabledAt).toBeNull();
    const destinations = (await core.webhookDestinations.list(tenant, { limit: 100 })).items;
    const events = new Map((await allEvents(core, tenant)).map((e) => [e.id, e]));
    const granteeOf = (eventId: string) => (events.get(eventId)?.payload.data as { granteeId: string }).granteeId;
    expect(destinations.filter((d) => d.status === 'failed').map((d) => granteeOf(d.eventId))).toEqual(['refused']);
    expect(destinations.filter((d) => d.status === 'delivered')).toHaveLength(destinations.length - 1);
    expect(destinations.filter((d) => d.status === 'delivered').map((d) => granteeOf(d.eventId))).toContain('after');
  });

  it('disables an endpoint that took a delivery before the failing one was written, and none since', async () => {
    let down = false;
    const { core, keys, tenant, endpoint } = await setUp(() =>
      down ? { status: null, error: 'could not be reached: ECONNREFUSED' } : { status: 200, body: 'ok' },
    );
    const license = (granteeId: string) =>
      core.licenses.createAdHoc(tenant, [{ planUuid: keys['plans.notes.free'], member: 'm@example.com', granteeId }]);
    await license('before');
    expect(await core.webhookDelivery.drain()).toBe(1); // taken
    advance(core, 1_000);
    down = true;
    await license('failing');
    for (let hour = 0; hour < 100; hour++) {
      await core.webhookDelivery.drain();
      advance(core, 3_600_000);
    }
    expect((await core.webhooks.get(tenant, endpoint.id)).disabledAt).not.toBeNull();
  });

  it('decides to disable an endpoint in one read of its attempts, however many failed in the window (never a walk that outlasts the lease)', async () => {
    const uow = new WatchedUnitOfWork();
    const sender = new ScriptedWebhookSender(() => ({ status: null, error: 'could not be reached: ECONNREFUSED' }));
    const core = createTestCore({ uow, webhooks: sender });
    const { tenant, keys } = await seedSample(core, 'acme');
    const { endpoint } = await core.webhooks.create(tenant, { url: 'https://vendor.example.com/hooks' });
    await core.licenses.createAdHoc(tenant, [{ planUuid: keys['plans.notes.free'], member: 'm@example.com', granteeId: 'g' }]);
    const [event] = await allEvents(core, tenant);
    const [destination] = (await core.webhookDestinations.list(tenant, { limit: 1 })).items;
    // 5 000 failed attempts to the endpoint within the delivery's window (other deliveries' retries).
    await uow.inner.run(async (r) => {
      for (let i = 0; i < 5000; i++)
        await r.webhooks.addAttempt({
          id: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
          deliveryId: destination.id,
          endpointId: endpoint.id,
          eventId: event.id,
          responseStatus: 503,
          responseBody: '',
          durationMs: 1,
          createdAt: new Date(core.clock.now().getTime() + 1 + i),
        });
    });
    uow.calls.length = 0;
    for (let hour = 0; hour < 100; hour++) {
      await core.webhookDelivery.drain();
      advance(core, 3_600_000);
    }
    expect(sender.sent).toHaveLength(9);
    expect((await core.webhooks.get(tenant, endpoint.id)).disabledAt).not.toBeNull();
    const attemptReads = uow.calls.filter((c) => ['pageAttempts', 'pageTenantAttempts', 'succeededSince'].includes(c));
    expect(attemptReads.length).toBeLessThanOrEqual(1);
  });

  it('keeps an endpoint enabled when another worker records a success just before the exhausted delivery is recorded', async () => {
    const uow = new WatchedUnitOfWork();
    let endpointId = '';
    const sender = new ScriptedWebhookSender((_r, i) => {
      if (i === 8)
        // The last attempt's POST: as it returns, another worker's delivery to the endpoint succeeds and commits.
        uow.beforeNextRun = () =>
          uow.inner.run((r) =>
            r.webhooks.addAttempt({
              id: '00000000-0000-4000-8000-000000000001',
              deliveryId: '00000000-0000-4000-8000-000000000002',
              endpointId,
              eventId: '00000000-0000-4000-8000-000000000003',
              responseStatus: 200,
              responseBody: 'ok',
              durationMs: 1,
              createdAt: core.clock.now(),
            }),
          );
      return { status: null, error: 'could not be reached: ECONNREFUSED' };
    });
    const core = createTestCore({ uow, webhooks: sender });
    const { tenant, keys } = await seedSample(core, 'acme');
    const { endpoint } = await core.webhooks.create(tenant, { url: 'https://vendor.example.com/hooks' });
    endpointId = endpoint.id;
    await core.licenses.createAdHoc(tenant, [{ planUuid: keys['plans.notes.free'], member: 'm@example.com', granteeId: 'g' }]);
    for (let hour = 0; hour < 100; hour++) {
      await core.webhookDelivery.drain();
      advance(core, 3_600_000);
    }
    expect(sender.sent).toHaveLength(9);
    expect((await core.webhookDestinations.list(tenant, { limit: 10 })).items.map((d) => d.status)).toEqual(['failed']);
    expect((await core.webhooks.get(tenant, endpoint.id)).disabledAt).toBeNull();
  });

  it("never leases a delivery for less than a POST and its recording take, whatever the configured lease: a slow receiver's delivery is not sent twice", async () => {
    let answer: (r: WebhookResponse) => void = () => undefined;
    const sender = new ScriptedWebhookSender(
      (_r, i) => (i === 0 ? new Promise<WebhookResponse>((resolve) => (answer = resolve)) : { status: 200, body: 'ok' }),
      { timeoutMs: Infinity },
    );
    // EVENT_LEASE_SECONDS=1: far below the 10 s a receiver has to answer.
    const core = createTestCore({ webhooks: sender, limits: { eventLeaseMs: 1_000 } });
    const { tenant, keys } = await seedSample(core, 'acme');
    await core.webhooks.create(tenant, { url: 'https://vendor.example.com/hooks' });
    await core.licenses.createAdHoc(tenant, [{ planUuid: keys['plans.notes.free'], member: 'm@example.com', granteeId: 'g' }]);
    const first = core.webhookDelivery.deliverNext(); // the receiver takes its time
    await new Promise((r) => setImmediate(r));
    const other = createTestCore({ uow: core.uow, webhooks: sender, limits: { eventLeaseMs: 1_000 } });
    other.clock.set(new Date(core.clock.now().getTime() + WEBHOOK_TIMEOUT_MS - 1)); // still within the POST's timeout
    expect(await other.webhookDelivery.deliverNext()).toBe(false);
    expect(sender.sent).toHaveLength(1);
    advance(core, WEBHOOK_TIMEOUT_MS - 1);
    answer({ status: 200, body: 'ok' });
    await first;
    expect((await core.webhookDestinations.list(tenant, { limit: 10 })).items.map((d) => d.status)).toEqual(['delivered']);
    expect(
      (await core.webhooks.attempts(tenant, (await core.webhooks.list(tenant, { limit: 1 })).items[0].id, { limit: 10 })).items,
    ).toHaveLength(1);
  });

  it('takes over a delivery whose worker died mid-POST once its lease runs out, and delivers it once', async () => {
    let hang = true;
    const sender = new ScriptedWebhookSender(() => (hang ? new Promise<WebhookResponse>(() => undefined) : { status: 200, body: 'ok' }), {
      timeoutMs: Infinity,
    });
    const core = createTestCore({ webhooks: sender });
    const { tenant, keys } = await seedSample(core, 'acme');
    await core.webhooks.create(tenant, { url: 'https://vendor.example.com/hooks' });
    await core.licenses.createAdHoc(tenant, [{ planUuid: keys['plans.notes.free'], member: 'm@example.com', granteeId: 'g' }]);
    void core.webhookDelivery.deliverNext(); // this worker never comes back
    await new Promise((r) => setImmediate(r));
    hang = false;
    const restarted = createTestCore({ uow: core.uow, webhooks: sender });
    restarted.clock.set(core.clock.now());
    expect(await restarted.webhookDelivery.drain()).toBe(0);
    restarted.clock.set(new Date(core.clock.now().getTime() + 121_000));
    expect(await restarted.webhookDelivery.drain()).toBe(1);
    expect(await restarted.webhookDelivery.drain()).toBe(0);
    expect(sender.sent).toHaveLength(2);
  });

  it('sends test-mode events to test-mode endpoints only, and filters by event type', async () => {
    const sender = new ScriptedWebhookSender();
    const core = createTestCore({ webhooks: sender });
    const live = await seedSample(core, 'acme');
    const test = await seedSample(core, 'acme', true);
    const testHook = await core.webhooks.create(test.tenant, { url: 'https://vendor.example.com/test' });
    await core.webhooks.create(live.tenant, { url: 'https://vendor.example.com/subs', events: ['subscription.created'] });
    await buy(core, live.keys['plans.notes.team'], 2);
    await buy(core, test.keys['plans.notes.business'], 1, 'tess');
    await core.webhookDelivery.drain();
    const byUrl = (u: string) => sender.sent.filter((r) => r.url === u).map((r) => JSON.parse(r.body));
    expect(byUrl('https://vendor.example.com/subs').map((e) => e.type)).toEqual(['subscription.created']);
    expect(byUrl('https://vendor.example.com/subs')[0].data.isTest).toBe(false);
    const testEvents = byUrl('https://vendor.example.com/test');
    expect(testEvents.map((e) => e.type)).toEqual(['subscription.created', 'license.created']);
    expect(testEvents.every((e) => e.data.isTest === true)).toBe(true);
    // The other mode cannot see or touch the endpoint: for its key the endpoint does not exist.
    await expect(core.webhooks.get(live.tenant, testHook.endpoint.id)).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(core.webhooks.delete(live.tenant, testHook.endpoint.id)).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });

  it('forgets events older than the retention once no delivery waits for them', async () => {
    const { core, sender, keys, tenant } = await setUp((i) => (i === 0 ? { status: 200, body: 'ok' } : { status: 500, body: '' }));
    await core.licenses.createAdHoc(tenant, [{ planUuid: keys['plans.notes.free'], member: 'm@example.com', granteeId: 'old' }]);
    await core.webhookDelivery.drain(); // delivered
    await core.licenses.createAdHoc(tenant, [{ planUuid: keys['plans.notes.free'], member: 'm@example.com', granteeId: 'stuck' }]);
    await core.webhookDelivery.drain(); // failed once: a retry is pending
    expect(sender.sent).toHaveLength(2);
    expect(await core.webhookEvents.purge()).toBe(0); // nothing is old yet
    advance(core, 29 * 86_400_000);
    expect(await core.webhookEvents.purge()).toBe(0);
    advance(core, 2 * 86_400_000);
    // The delivered one goes; the one a delivery still waits for stays.
    expect(await core.webhookEvents.purge()).toBe(1);
    const left = await allEvents(core, tenant);
    expect(left.map((e) => (e.payload.data as { granteeId: string }).granteeId)).toEqual(['stuck']);
  });
});
