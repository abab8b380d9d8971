import nock from 'nock';
import Stripe from 'stripe';
import { UsageService } from '@tollgate/core';
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

// Stripe meter events as usage is recorded (DESIGN section 14): one event per committed batch of a
// balance, for owners that are subscriptions billed through Stripe, under nock (no network).
const API = 'https://api.stripe.com';
const stripe = new Stripe('sk_test_tollgate', { maxNetworkRetries: 0 });
const provider = new StripePaymentProvider(stripe, { publicUrl: 'https://billing.example.com' });

const eventually = async (ok: () => boolean) => {
  for (let i = 0; i < 200 && !ok(); i++) await new Promise((r) => setTimeout(r, 10));
  expect(ok()).toBe(true);
};

describe('Stripe meter events', () => {
  it('sends the units each committed batch used, for a Stripe-billed subscription, and nothing for other owners', async () => {
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
    const errors: unknown[] = [];
    const usage = new UsageService({
      uow,
      clock: new FixedClock(new Date('2026-11-24T00:00:00.000Z')),
      ids: new RandomIds(),
      payments: provider,
      logger: { info: () => undefined, error: (_m, f) => errors.push(f) },
    });
    await usage.createMeter(tenant, { slug: 'api_calls', name: 'API calls' });

    const sent: Record<string, string>[] = [];
    nock(API)
      .post('/v1/billing/meter_events', (body: Record<string, string>) => {
        sent.push(body);
        return true;
      })
      .times(2)
      .reply(200, { object: 'billing.meter_event' });

    await usage.record(tenant, { owner: billed.id, meterSlug: 'api_calls', quantity: 40 });
    await eventually(() => sent.length === 1);
    await usage.consume(tenant, { owner: billed.id, meterSlug: 'api_calls', quantity: 2 });
    await eventually(() => sent.length === 2);
    expect(sent[0]).toMatchObject({
      event_name: 'api_calls',
      'payload[stripe_customer_id]': 'cus_meter',
      'payload[value]': '40',
      timestamp: String(Date.parse('2026-11-24T00:00:00.000Z') / 1000),
    });
    expect(sent[1]).toMatchObject({ 'payload[value]': '2' });
    expect(sent[0].identifier).not.toBe(sent[1].identifier);

    // A subscription of another provider, and an owner that is no subscription, send nothing.
    await usage.record(tenant, { owner: sandboxed.id, meterSlug: 'api_calls', quantity: 5 });
    await usage.record(tenant, { owner: 'cus_external', meterSlug: 'api_calls', quantity: 5 });
    await new Promise((r) => setTimeout(r, 50));
    expect(sent).toHaveLength(2);

    // Stripe failing is logged; the usage itself stands.
    nock(API)
      .post('/v1/billing/meter_events')
      .reply(500, { error: { message: 'down' } });
    const answer = await usage.record(tenant, { owner: billed.id, meterSlug: 'api_calls', quantity: 1 });
    expect(answer.used).toBe('43');
    await eventually(() => errors.length === 1);
    expect(nock.isDone()).toBe(true);
  });
});
