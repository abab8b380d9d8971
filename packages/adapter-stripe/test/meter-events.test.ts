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

// Stripe meter events from the ledger (DESIGN section 14): the meter-event relay sends each ledger
// entry that used units of a Stripe-billed subscription as one meter event whose identifier is the
// entry's id, retries Stripe's failures with backoff, and never loses or double-sends a unit.
// Stripe under nock (no network).
const API = 'https://api.stripe.com';
const stripe = new Stripe('sk_test_tollgate', { maxNetworkRetries: 0 });
const provider = new StripePaymentProvider(stripe, { publicUrl: 'https://billing.example.com' });

async function world() {
  const uow = new InMemoryUnitOfWork();
  const org = anOrganisation();
  const tenant = aTenant(org);
  const product = aProduct(tenant);
  const plan = aPlan(product);
  const customer = aCustomer(tenant, { paymentCustomerId: 'cus_meter' });
  const billed = aSubscription(plan, customer, { paymentProvider: 'stripe', paymentSubscriptionId: 'sub_meter' });
  const sandboxed = aSubscription(plan, customer, { paymentProvider: 'sandbox' });
  await uow.run(async (r) => {
    await r.organisations.save(org);
    await r.customers.save(customer);
    await r.subscriptions.save(billed);
    await r.subscriptions.save(sandboxed);
  });
  const clock = new FixedClock(new Date('2026-11-24T00:00:00.000Z'));
  const logs: { message: string; fields: unknown }[] = [];
  const logger = {
    info: () => undefined,
    error: (message: string, fields?: unknown) => void logs.push({ message, fields }),
  };
  const usage = new UsageService({ uow, clock, ids: new RandomIds(), logger });
  await usage.createMeter(tenant, { slug: 'api_calls', name: 'API calls' });
  return { uow, tenant, billed, sandboxed, clock, logs, logger, usage };
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

describe('Stripe meter events (the relay)', () => {
  afterEach(() => nock.cleanAll());

  it('sends each entry of a Stripe-billed subscription once with its ledger id, and nothing for other owners', async () => {
    const w = await world();
    const relay = new MeterEventRelay({ uow: w.uow, clock: w.clock, payments: provider, logger: w.logger });
    await w.usage.record(w.tenant, { owner: w.billed.id, meterSlug: 'api_calls', quantity: 40 });
    await w.usage.consume(w.tenant, { owner: w.billed.id, meterSlug: 'api_calls', quantity: 2 });
    await w.usage.record(w.tenant, { owner: w.sandboxed.id, meterSlug: 'api_calls', quantity: 5 });
    await w.usage.record(w.tenant, { owner: 'cus_external', meterSlug: 'api_calls', quantity: 5 });
    const meter = stripeMeter();
    nock(API)
      .post('/v1/billing/meter_events', (b: Record<string, string>) => (meter.take(b), true))
      .times(2)
      .reply(200, { object: 'billing.meter_event' });

    const pass = await relay.pass();
    expect(pass).toMatchObject({ ran: true, sent: 2, passed: 2, refused: 0, failed: false, more: false });
    const ledger = await w.uow.read((r) => r.usage.pageRecords(w.tenant, { limit: 10, owner: w.billed.id }));
    expect([...meter.taken.keys()].sort()).toEqual(ledger.items.map((e) => e.id).sort());
    expect(meter.requests.find((b) => b['payload[value]'] === '40')).toMatchObject({
      event_name: 'api_calls',
      'payload[stripe_customer_id]': 'cus_meter',
      timestamp: String(Date.parse('2026-11-24T00:00:00.000Z') / 1000),
    });
    expect(meter.units()).toBe(42);
    // Nothing new: the next pass sends nothing (nock would refuse an unexpected call).
    expect(await relay.pass()).toMatchObject({ ran: true, sent: 0, passed: 0 });
    expect(nock.isDone()).toBe(true);
  });

  it("a meter with decimal places sends each entry's exact decimal text as the event's value", async () => {
    const w = await world();
    await w.usage.createMeter(w.tenant, { slug: 'gpu_hours', name: 'GPU hours', scale: 3 });
    const relay = new MeterEventRelay({ uow: w.uow, clock: w.clock, payments: provider, logger: w.logger });
    await w.usage.record(w.tenant, { owner: w.billed.id, meterSlug: 'gpu_hours', quantity: 1.25 });
    await w.usage.record(w.tenant, { owner: w.billed.id, meterSlug: 'gpu_hours', quantity: '0.005' });
    const meter = stripeMeter();
    nock(API)
      .post('/v1/billing/meter_events', (b: Record<string, string>) => (meter.take(b), true))
      .times(2)
      .reply(200, { object: 'billing.meter_event' });
    expect(await relay.pass()).toMatchObject({ ran: true, sent: 2, refused: 0 });
    expect(meter.requests.map((b) => [b.event_name, b['payload[value]']]).sort()).toEqual([
      ['gpu_hours', '0.005'],
      ['gpu_hours', '1.25'],
    ]);
    expect(nock.isDone()).toBe(true);
  });

  it('Stripe failing three times then succeeding: every unit arrives exactly once, with its identifier, after backoff', async () => {
    const w = await world();
    // One at a time, so each failure is one try of the same first entry.
    const relay = new MeterEventRelay({ uow: w.uow, clock: w.clock, payments: provider, logger: w.logger, concurrency: 1 });
    const quantities = [3, 5, 7, 11, 13];
    for (const quantity of quantities) await w.usage.record(w.tenant, { owner: w.billed.id, meterSlug: 'api_calls', quantity });
    const meter = stripeMeter();
    nock(API)
      .post('/v1/billing/meter_events', (b: Record<string, string>) => (meter.requests.push(b), true))
      .reply(500, { error: { message: 'Stripe is down' } })
      .post('/v1/billing/meter_events', (b: Record<string, string>) => (meter.requests.push(b), true))
      .reply(429, { error: { message: 'Too many requests' } })
      .post('/v1/billing/meter_events', (b: Record<string, string>) => (meter.requests.push(b), true))
      .replyWithError('socket hang up')
      .post('/v1/billing/meter_events', (b: Record<string, string>) => (meter.take(b), true))
      .times(quantities.length)
      .reply(200, { object: 'billing.meter_event' });

    const waits: number[] = [];
    for (let failures = 1; failures <= 3; failures++) {
      expect(await relay.pass()).toMatchObject({ ran: true, sent: 0, failed: true });
      expect(relay.stats().failingFor).toBe(failures);
      // Before the backoff is over, a pass does nothing (no request: nock would have nothing to give).
      expect(await relay.pass()).toMatchObject({ ran: false });
      const cursor = await w.uow.read((r) => r.usage.claimMeterRelay('stripe'));
      waits.push((cursor?.nextAttemptAt as Date).getTime() - w.clock.now().getTime());
      expect(cursor?.lastError).toMatch(/Stripe meter event failed/);
      w.clock.set(cursor?.nextAttemptAt as Date);
    }
    expect(waits).toEqual([1000, 2000, 4000]);
    expect(w.logs.filter((l) => l.message === 'usage meter event failed, will retry')).toHaveLength(3);
    // The three failed tries were all of the first entry, with the same identifier.
    expect(new Set(meter.requests.slice(0, 3).map((b) => b.identifier)).size).toBe(1);

    expect(await relay.pass()).toMatchObject({ ran: true, sent: quantities.length, failed: false });
    const ledger = await w.uow.read((r) => r.usage.pageRecords(w.tenant, { limit: 10, owner: w.billed.id }));
    expect([...meter.taken.keys()].sort()).toEqual(ledger.items.map((e) => e.id).sort());
    expect(meter.units()).toBe(39);
    expect(meter.taken.size).toBe(quantities.length);
    expect(meter.requests).toHaveLength(3 + quantities.length);
    expect(relay.stats()).toMatchObject({ sent: quantities.length, retried: 3, refused: 0, failingFor: 0, lagSeconds: 0 });
    expect(nock.isDone()).toBe(true);
  });

  it('a refusal for good is logged, kept and passed over: the entries behind it still go', async () => {
    const w = await world();
    const relay = new MeterEventRelay({ uow: w.uow, clock: w.clock, payments: provider, logger: w.logger, concurrency: 1 });
    await w.usage.record(w.tenant, { owner: w.billed.id, meterSlug: 'api_calls', quantity: 4 });
    await w.usage.record(w.tenant, { owner: w.billed.id, meterSlug: 'api_calls', quantity: 6 });
    const meter = stripeMeter();
    nock(API)
      .post('/v1/billing/meter_events')
      .reply(400, { error: { type: 'invalid_request_error', message: 'No such customer: cus_meter' } })
      .post('/v1/billing/meter_events', (b: Record<string, string>) => (meter.take(b), true))
      .reply(200, { object: 'billing.meter_event' });
    expect(await relay.pass()).toMatchObject({ ran: true, sent: 1, refused: 1, failed: false });
    expect(meter.units()).toBe(6);
    const failures = await w.uow.read((r) => r.usage.meterEventFailures(10));
    expect(failures).toEqual([
      expect.objectContaining({
        provider: 'stripe',
        customerId: 'cus_meter',
        meterSlug: 'api_calls',
        value: '4',
        error: expect.stringMatching(/400.*No such customer/),
      }),
    ]);
    expect(w.logs.map((l) => l.message)).toContain('usage meter event refused');
    expect(relay.stats()).toMatchObject({ sent: 1, refused: 1, failingFor: 0 });
    expect(nock.isDone()).toBe(true);
  });

  it('a crash after the sends and before the cursor moved sends the same entries again with the same identifiers', async () => {
    const w = await world();
    await w.usage.record(w.tenant, { owner: w.billed.id, meterSlug: 'api_calls', quantity: 9 });
    await w.usage.record(w.tenant, { owner: w.billed.id, meterSlug: 'api_calls', quantity: 1 });
    const meter = stripeMeter();
    nock(API)
      .post('/v1/billing/meter_events', (b: Record<string, string>) => (meter.take(b), true))
      .times(4)
      .reply(200, { object: 'billing.meter_event' });
    // The process dies after Stripe answered, before the transaction that moves the cursor commits.
    const dying = {
      read: w.uow.read.bind(w.uow),
      run: <T>(work: Parameters<InMemoryUnitOfWork['run']>[0]) =>
        w.uow.run(async (r) => {
          await work(r);
          throw new Error('killed before commit');
        }) as Promise<T>,
    };
    await expect(new MeterEventRelay({ uow: dying, clock: w.clock, payments: provider }).pass()).rejects.toThrow('killed before commit');
    const first = meter.requests.map((b) => b.identifier).sort();
    expect(first).toHaveLength(2);
    // Restarted: the same two entries, the same identifiers; Stripe counts each once.
    expect(await new MeterEventRelay({ uow: w.uow, clock: w.clock, payments: provider }).pass()).toMatchObject({ sent: 2 });
    expect(
      meter.requests
        .slice(2)
        .map((b) => b.identifier)
        .sort(),
    ).toEqual(first);
    expect(meter.units()).toBe(10);
    expect(nock.isDone()).toBe(true);
  });
});
