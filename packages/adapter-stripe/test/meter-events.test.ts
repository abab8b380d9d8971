import nock from 'nock';
import Stripe from 'stripe';
import { MeterEventRelay, UsageService } from '@tollgate/core';
import {
  aCustomer,
  anOrganisation,
  aPlan,
  aProduct,
  aSubscription,
  aTenant,
  FixedClock,
  InMemoryUnitOfWork,
  RandomIds,
} from '@tollgate/core/testing';
import { StripePaymentProvider } from '../src';

// Stripe meter events from the ledger (DESIGN section 14): the relay sums the used entries of each
// balance (customer, meter, period) of a Stripe-billed subscription into one planned send, sends it
// as one meter event whose identifier is the send's id, retries Stripe's failures with backoff, and
// never loses or double-counts a unit. Stripe under nock (no network).
const API = 'https://api.stripe.com';
const stripe = new Stripe('sk_test_tollgate', { maxNetworkRetries: 0 });
const provider = new StripePaymentProvider(stripe, { publicUrl: 'https://billing.example.com' });

beforeAll(() => nock.disableNetConnect());
afterAll(() => nock.enableNetConnect());

async function world(windowMs = 0) {
  const uow = new InMemoryUnitOfWork();
  const org = anOrganisation();
  const tenant = aTenant(org);
  const product = aProduct(tenant);
  const plan = aPlan(product);
  const customer = aCustomer(tenant, { paymentCustomerId: 'cus_meter' });
  const other = aCustomer(tenant, { paymentCustomerId: 'cus_other' });
  const billed = aSubscription(plan, customer, { paymentProvider: 'stripe', paymentSubscriptionId: 'sub_meter' });
  const billedToo = aSubscription(plan, other, { paymentProvider: 'stripe', paymentSubscriptionId: 'sub_other' });
  const sandboxed = aSubscription(plan, customer, { paymentProvider: 'sandbox' });
  await uow.run(async (r) => {
    await r.organisations.save(org);
    await r.customers.save(customer);
    await r.customers.save(other);
    await r.subscriptions.save(billed);
    await r.subscriptions.save(billedToo);
    await r.subscriptions.save(sandboxed);
  });
  const clock = new FixedClock(new Date('2026-11-24T00:00:00.000Z'));
  const logs: { message: string; fields: unknown }[] = [];
  const logger = {
    info: () => undefined,
    error: (message: string, fields?: unknown) => void logs.push({ message, fields }),
  };
  const ids = new RandomIds();
  const usage = new UsageService({ uow, clock, ids, logger });
  await usage.createMeter(tenant, { slug: 'api_calls', name: 'API calls' });
  const relay = (over: { concurrency?: number; uow?: InMemoryUnitOfWork | typeof uow } = {}) =>
    new MeterEventRelay({
      uow: over.uow ?? uow,
      clock,
      ids,
      payments: provider,
      logger,
      limits: { usageMeterWindowMs: windowMs },
      ...over,
    });
  const ledgerSum = async (owner: string) => {
    const page = await uow.read((r) => r.usage.pageRecords(tenant, { limit: 1000, owner }));
    return page.items.reduce((n, e) => n + Number(e.quantity), 0);
  };
  const planned = () => uow.read((r) => r.usage.plannedMeterSends('stripe', 1000));
  return { uow, tenant, billed, billedToo, sandboxed, clock, logs, logger, usage, relay, ledgerSum, planned };
}

/** What Stripe took: by identifier (Stripe counts an identifier once), with every request seen. */
function stripeMeter() {
  const requests: Record<string, string>[] = [];
  const taken = new Map<string, Record<string, string>>();
  return {
    requests,
    taken,
    take: (body: Record<string, string>) => {
      requests.push(body);
      if (!taken.has(body.identifier)) taken.set(body.identifier, body);
    },
    units: () => [...taken.values()].reduce((n, b) => n + Number(b['payload[value]']), 0),
  };
}

describe('Stripe meter events (the relay, aggregated)', () => {
  afterEach(() => nock.cleanAll());

  it('100 entries of one customer and meter: one pass plans, the next sends ONE event of value 100; other owners are passed over', async () => {
    const w = await world();
    const relay = w.relay();
    for (let i = 0; i < 99; i++) await w.usage.record(w.tenant, { owner: w.billed.id, meterSlug: 'api_calls', quantity: 1 });
    w.clock.set(new Date(w.clock.now().getTime() + 5_000));
    await w.usage.consume(w.tenant, { owner: w.billed.id, meterSlug: 'api_calls', quantity: 1 });
    await w.usage.record(w.tenant, { owner: w.sandboxed.id, meterSlug: 'api_calls', quantity: 5 });
    await w.usage.record(w.tenant, { owner: 'cus_external', meterSlug: 'api_calls', quantity: 5 });
    const bodies: Record<string, string>[] = [];
    nock(API)
      .post('/v1/billing/meter_events', (b: Record<string, string>) => {
        bodies.push(b);
        return (
          b.event_name === 'api_calls' &&
          b['payload[value]'] === '100' &&
          b['payload[stripe_customer_id]'] === 'cus_meter' &&
          // The latest entry's time.
          b.timestamp === String(Date.parse('2026-11-24T00:00:05.000Z') / 1000)
        );
      })
      .reply(200, { object: 'billing.meter_event' });

    expect(await relay.pass()).toMatchObject({ ran: true, sent: 0, planned: 100, passed: 2, more: true });
    const plan = await w.planned();
    expect(plan).toEqual([expect.objectContaining({ value: '100', entries: 100, customerId: 'cus_meter', meterSlug: 'api_calls' })]);
    expect(bodies).toHaveLength(0);
    expect(await relay.pass()).toMatchObject({ ran: true, sent: 1, refused: 0, failed: false });
    expect(bodies).toEqual([expect.objectContaining({ identifier: plan[0].id, 'payload[value]': '100' })]);
    expect(await w.planned()).toEqual([]);
    // Nothing new: the next passes send nothing (nock would refuse an unexpected call).
    expect(await relay.pass()).toMatchObject({ ran: true, sent: 0, planned: 0, passed: 0, more: false });
    expect(nock.isDone()).toBe(true);
    expect(relay.stats()).toMatchObject({ sent: 1, refused: 0, lagSeconds: 0 });
  });

  it('two customers: two events, each with its own sum', async () => {
    const w = await world();
    const relay = w.relay();
    for (const q of [3, 4]) await w.usage.record(w.tenant, { owner: w.billed.id, meterSlug: 'api_calls', quantity: q });
    for (const q of [10, 20, 30]) await w.usage.record(w.tenant, { owner: w.billedToo.id, meterSlug: 'api_calls', quantity: q });
    const meter = stripeMeter();
    nock(API)
      .post('/v1/billing/meter_events', (b: Record<string, string>) => (meter.take(b), true))
      .times(2)
      .reply(200, { object: 'billing.meter_event' });
    expect(await relay.pass()).toMatchObject({ planned: 5 });
    expect(await relay.pass()).toMatchObject({ sent: 2 });
    expect(meter.requests.map((b) => [b['payload[stripe_customer_id]'], b['payload[value]']]).sort()).toEqual([
      ['cus_meter', '7'],
      ['cus_other', '60'],
    ]);
    expect(nock.isDone()).toBe(true);
  });

  it('one customer across two periods (two balances): two events, never one sum across periods', async () => {
    const w = await world();
    const relay = w.relay();
    await w.usage.record(w.tenant, { owner: w.billed.id, meterSlug: 'api_calls', quantity: 8 });
    await w.usage.closePeriod(w.tenant, { owner: w.billed.id, meterSlug: 'api_calls' }, { periodEnd: null });
    await w.usage.record(w.tenant, { owner: w.billed.id, meterSlug: 'api_calls', quantity: 2 });
    await w.usage.record(w.tenant, { owner: w.billed.id, meterSlug: 'api_calls', quantity: 3 });
    const meter = stripeMeter();
    nock(API)
      .post('/v1/billing/meter_events', (b: Record<string, string>) => (meter.take(b), true))
      .times(2)
      .reply(200, { object: 'billing.meter_event' });
    expect(await relay.pass()).toMatchObject({ planned: 3 });
    expect(await relay.pass()).toMatchObject({ sent: 2 });
    expect(meter.requests.map((b) => b['payload[value]']).sort()).toEqual(['5', '8']);
    expect(nock.isDone()).toBe(true);
  });

  it('a meter with decimal places sums exactly: 0.1 x 3 is 0.3 (as text), 1.25 + 0.005 is 1.255', async () => {
    const w = await world();
    await w.usage.createMeter(w.tenant, { slug: 'gpu_hours', name: 'GPU hours', scale: 3 });
    await w.usage.createMeter(w.tenant, { slug: 'gb', name: 'GB', scale: 1 });
    const relay = w.relay();
    for (let i = 0; i < 3; i++) await w.usage.record(w.tenant, { owner: w.billed.id, meterSlug: 'gb', quantity: '0.1' });
    await w.usage.record(w.tenant, { owner: w.billed.id, meterSlug: 'gpu_hours', quantity: 1.25 });
    await w.usage.record(w.tenant, { owner: w.billed.id, meterSlug: 'gpu_hours', quantity: '0.005' });
    const meter = stripeMeter();
    nock(API)
      .post('/v1/billing/meter_events', (b: Record<string, string>) => (meter.take(b), true))
      .times(2)
      .reply(200, { object: 'billing.meter_event' });
    await relay.pass();
    expect(await relay.pass()).toMatchObject({ ran: true, sent: 2, refused: 0 });
    expect(meter.requests.map((b) => [b.event_name, b['payload[value]']]).sort()).toEqual([
      ['gb', '0.3'],
      ['gpu_hours', '1.255'],
    ]);
    expect(nock.isDone()).toBe(true);
  });

  it('at most a batch of planned sends a pass, earliest usage first; the rest go on the next pass', async () => {
    const w = await world();
    await w.usage.createMeter(w.tenant, { slug: 'storage', name: 'Storage' });
    const relay = new MeterEventRelay({
      uow: w.uow,
      clock: w.clock,
      ids: new RandomIds(),
      payments: provider,
      limits: { usageMeterWindowMs: 0 },
      batch: 3,
    });
    const order: [string, string][] = [
      [w.billed.id, 'api_calls'],
      [w.billedToo.id, 'api_calls'],
      [w.billed.id, 'storage'],
      [w.billedToo.id, 'storage'],
    ];
    for (const [owner, meterSlug] of order) {
      await w.usage.record(w.tenant, { owner, meterSlug, quantity: 2 });
      w.clock.set(new Date(w.clock.now().getTime() + 1000));
    }
    const meter = stripeMeter();
    nock(API)
      .post('/v1/billing/meter_events', (b: Record<string, string>) => (meter.take(b), true))
      .times(4)
      .reply(200, { object: 'billing.meter_event' });
    expect(await relay.pass()).toMatchObject({ planned: 4 });
    expect(await relay.pass()).toMatchObject({ sent: 3, more: true });
    // The one left is the latest usage: recorded 1 s before the clock's last move, 4 s after the first.
    expect(relay.stats().lagSeconds).toBe(1);
    expect((await w.planned()).map((s) => [s.customerId, s.meterSlug])).toEqual([['cus_other', 'storage']]);
    expect(await relay.pass()).toMatchObject({ sent: 1, more: true });
    expect(await relay.pass()).toMatchObject({ sent: 0, planned: 0, more: false });
    expect(meter.requests.map((b) => [b['payload[stripe_customer_id]'], b.event_name])).toEqual([
      ['cus_meter', 'api_calls'],
      ['cus_other', 'api_calls'],
      ['cus_meter', 'storage'],
      ['cus_other', 'storage'],
    ]);
    expect(nock.isDone()).toBe(true);
  });

  it('a window not yet reached plans nothing and sends nothing; once reached, one pass plans and the next sends', async () => {
    const w = await world(60_000);
    const relay = w.relay();
    await w.usage.record(w.tenant, { owner: w.billed.id, meterSlug: 'api_calls', quantity: 6 });
    w.clock.set(new Date(w.clock.now().getTime() + 30_000));
    await w.usage.record(w.tenant, { owner: w.billed.id, meterSlug: 'api_calls', quantity: 4 });
    w.clock.set(new Date(w.clock.now().getTime() + 29_999));
    // No nock interceptor: a request here would fail the pass's send, and the pass would show it.
    expect(await relay.pass()).toMatchObject({ ran: true, sent: 0, planned: 0, failed: false, more: false });
    expect(await w.planned()).toEqual([]);
    expect(relay.stats().lagSeconds).toBeCloseTo(59.999, 3);
    w.clock.set(new Date(w.clock.now().getTime() + 1));
    expect(await relay.pass()).toMatchObject({ ran: true, sent: 0, planned: 2, more: true });
    expect(await w.planned()).toEqual([expect.objectContaining({ value: '10', entries: 2 })]);
    expect(relay.stats().lagSeconds).toBe(60);
    const meter = stripeMeter();
    nock(API)
      .post('/v1/billing/meter_events', (b: Record<string, string>) => (meter.take(b), true))
      .reply(200, { object: 'billing.meter_event' });
    expect(await relay.pass()).toMatchObject({ ran: true, sent: 1 });
    expect(meter.units()).toBe(10);
    expect(relay.stats().lagSeconds).toBe(0);
    expect(nock.isDone()).toBe(true);
  });

  it('Stripe failing (500, 429, network) then succeeding: the SAME identifier and value each time, after backoff; once taken it is gone', async () => {
    const w = await world();
    // One at a time, so each failure is one try of the same send.
    const relay = w.relay({ concurrency: 1 });
    const quantities = [3, 5, 7, 11, 13];
    for (const quantity of quantities) await w.usage.record(w.tenant, { owner: w.billed.id, meterSlug: 'api_calls', quantity });
    expect(await relay.pass()).toMatchObject({ planned: 5 });
    const meter = stripeMeter();
    nock(API)
      .post('/v1/billing/meter_events', (b: Record<string, string>) => (meter.requests.push(b), true))
      .reply(500, { error: { message: 'Stripe is down' } })
      .post('/v1/billing/meter_events', (b: Record<string, string>) => (meter.requests.push(b), true))
      .reply(429, { error: { message: 'Too many requests' } })
      .post('/v1/billing/meter_events', (b: Record<string, string>) => (meter.requests.push(b), true))
      .replyWithError('socket hang up')
      .post('/v1/billing/meter_events', (b: Record<string, string>) => (meter.take(b), true))
      .reply(200, { object: 'billing.meter_event' });

    const waits: number[] = [];
    for (let failures = 1; failures <= 3; failures++) {
      expect(await relay.pass()).toMatchObject({ ran: true, sent: 0, failed: true, more: false });
      expect(relay.stats().failingFor).toBe(failures);
      // Before the backoff is over, a pass does nothing (no request: nock would have nothing to give).
      expect(await relay.pass()).toMatchObject({ ran: false });
      const cursor = await w.uow.read((r) => r.usage.claimMeterRelay('stripe'));
      waits.push((cursor?.nextAttemptAt as Date).getTime() - w.clock.now().getTime());
      expect(cursor?.lastError).toMatch(/Stripe meter event failed/);
      expect(await w.planned()).toHaveLength(1);
      w.clock.set(cursor?.nextAttemptAt as Date);
    }
    expect(waits).toEqual([1000, 2000, 4000]);
    expect(w.logs.filter((l) => l.message === 'usage meter event failed, will retry')).toHaveLength(3);

    expect(await relay.pass()).toMatchObject({ ran: true, sent: 1, failed: false });
    expect(meter.requests).toHaveLength(4);
    expect(new Set(meter.requests.map((b) => b.identifier)).size).toBe(1);
    expect(new Set(meter.requests.map((b) => b['payload[value]']))).toEqual(new Set(['39']));
    expect(meter.units()).toBe(await w.ledgerSum(w.billed.id));
    expect(await w.planned()).toEqual([]);
    // Taken: gone from the plan, never sent again (nock has nothing left to give).
    expect(await relay.pass()).toMatchObject({ ran: true, sent: 0, planned: 0 });
    expect(relay.stats()).toMatchObject({ sent: 1, retried: 3, refused: 0, failingFor: 0, lagSeconds: 0 });
    expect(nock.isDone()).toBe(true);
  });

  it('a refusal for good is logged, kept in the failures and taken off the plan: the other sends still go', async () => {
    const w = await world();
    const relay = w.relay({ concurrency: 1 });
    await w.usage.record(w.tenant, { owner: w.billed.id, meterSlug: 'api_calls', quantity: 4 });
    await w.usage.record(w.tenant, { owner: w.billed.id, meterSlug: 'api_calls', quantity: 2 });
    w.clock.set(new Date(w.clock.now().getTime() + 1000));
    await w.usage.record(w.tenant, { owner: w.billedToo.id, meterSlug: 'api_calls', quantity: 6 });
    expect(await relay.pass()).toMatchObject({ planned: 3 });
    const [refusedSend] = await w.planned();
    expect(refusedSend).toMatchObject({ customerId: 'cus_meter', value: '6' });
    const meter = stripeMeter();
    nock(API)
      .post('/v1/billing/meter_events', (b: Record<string, string>) => b['payload[stripe_customer_id]'] === 'cus_meter')
      .reply(400, { error: { type: 'invalid_request_error', message: 'No such customer: cus_meter' } })
      .post('/v1/billing/meter_events', (b: Record<string, string>) => (meter.take(b), true))
      .reply(200, { object: 'billing.meter_event' });
    expect(await relay.pass()).toMatchObject({ ran: true, sent: 1, refused: 1, failed: false });
    expect(meter.units()).toBe(6);
    expect(meter.requests[0]['payload[stripe_customer_id]']).toBe('cus_other');
    const failures = await w.uow.read((r) => r.usage.meterEventFailures(10));
    expect(failures).toEqual([
      expect.objectContaining({
        sendId: refusedSend.id,
        provider: 'stripe',
        customerId: 'cus_meter',
        meterSlug: 'api_calls',
        value: '6',
        entries: 2,
        error: expect.stringMatching(/400.*No such customer/),
      }),
    ]);
    expect(await w.planned()).toEqual([]);
    expect(w.logs.map((l) => l.message)).toContain('usage meter event refused');
    expect(relay.stats()).toMatchObject({ sent: 1, refused: 1, failingFor: 0 });
    expect(nock.isDone()).toBe(true);
  });

  it('a crash after the sends and before their commit sends the same identifiers and values again; Stripe counts each once', async () => {
    const w = await world();
    await w.usage.record(w.tenant, { owner: w.billed.id, meterSlug: 'api_calls', quantity: 9 });
    await w.usage.record(w.tenant, { owner: w.billedToo.id, meterSlug: 'api_calls', quantity: 1 });
    expect(await w.relay().pass()).toMatchObject({ planned: 2 });
    const meter = stripeMeter();
    nock(API)
      .post('/v1/billing/meter_events', (b: Record<string, string>) => (meter.take(b), true))
      .times(4)
      .reply(200, { object: 'billing.meter_event' });
    // The process dies after Stripe answered, before the transaction that deletes the sends commits.
    const dying = {
      read: w.uow.read.bind(w.uow),
      run: <T>(work: Parameters<InMemoryUnitOfWork['run']>[0]) =>
        w.uow.run(async (r) => {
          await work(r);
          throw new Error('killed before commit');
        }) as Promise<T>,
    } as unknown as InMemoryUnitOfWork;
    await expect(w.relay({ uow: dying }).pass()).rejects.toThrow('killed before commit');
    const first = meter.requests.map((b) => `${b.identifier}=${b['payload[value]']}`).sort();
    expect(first).toHaveLength(2);
    expect(await w.planned()).toHaveLength(2);
    // Restarted: the same two sends, the same identifiers and values; Stripe counts each once.
    expect(await w.relay().pass()).toMatchObject({ sent: 2 });
    expect(
      meter.requests
        .slice(2)
        .map((b) => `${b.identifier}=${b['payload[value]']}`)
        .sort(),
    ).toEqual(first);
    expect(meter.units()).toBe(10);
    expect(await w.planned()).toEqual([]);
    expect(nock.isDone()).toBe(true);
  });
});
