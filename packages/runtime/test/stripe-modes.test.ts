import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import type { PaymentProvider, PlanItemRequest } from '@tollgate/core';
import { aCustomer, aPlan, aProduct, aSubscription, FakePaymentProvider } from '@tollgate/core/testing';
import { loadConfig } from '../src';
import { ModePaymentRouter } from '../src/payments';

// Stripe's keys by mode (payments audit, 2026-11-25): the configuration, and the router that sends
// each call to the provider of what it is about.

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'tollgate-stripe-modes-'));
const tmp = () => fs.mkdtempSync(path.join(root, 'case-'));
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

describe('Stripe keys in the configuration', () => {
  const stripe = { STRIPE_SECRET_KEY: 'sk_live_1', STRIPE_WEBHOOK_SECRET: 'whsec_1' };
  it("takes a live key with test mode's own keys, and refuses keys whose mode is unknown or wrong", () => {
    expect(
      loadConfig({ DATA_DIR: tmp(), ...stripe, STRIPE_TEST_SECRET_KEY: 'rk_test_2', STRIPE_TEST_WEBHOOK_SECRET: 'whsec_2' }),
    ).toMatchObject({ stripeSecretKey: 'sk_live_1', stripeTestSecretKey: 'rk_test_2', stripeTestWebhookSecret: 'whsec_2' });
    expect(() => loadConfig({ DATA_DIR: tmp(), STRIPE_SECRET_KEY: 'live_1', STRIPE_WEBHOOK_SECRET: 'whsec_1' })).toThrow(
      /STRIPE_SECRET_KEY must be a Stripe secret or restricted key/,
    );
    expect(() => loadConfig({ DATA_DIR: tmp(), ...stripe, STRIPE_TEST_SECRET_KEY: 'sk_test_2' })).toThrow(
      /both STRIPE_TEST_SECRET_KEY and STRIPE_TEST_WEBHOOK_SECRET/,
    );
    expect(() =>
      loadConfig({ DATA_DIR: tmp(), ...stripe, STRIPE_TEST_SECRET_KEY: 'sk_live_2', STRIPE_TEST_WEBHOOK_SECRET: 'whsec_2' }),
    ).toThrow(/STRIPE_TEST_SECRET_KEY must be a test-mode key/);
    expect(() =>
      loadConfig({
        DATA_DIR: tmp(),
        STRIPE_SECRET_KEY: 'sk_test_1',
        STRIPE_WEBHOOK_SECRET: 'whsec_1',
        STRIPE_TEST_SECRET_KEY: 'sk_test_2',
        STRIPE_TEST_WEBHOOK_SECRET: 'whsec_2',
      }),
    ).toThrow(/goes beside a live STRIPE_SECRET_KEY/);
  });
});

class Named extends FakePaymentProvider {
  sendMeterEvent?: PaymentProvider['sendMeterEvent'];
  constructor(readonly label: string) {
    super();
  }
}
const named = (name: string, label: string, omit: (keyof PaymentProvider)[] = []) => {
  const p = new Named(label);
  Object.defineProperty(p, 'name', { value: name });
  for (const k of omit) (p as unknown as Record<string, unknown>)[k] = undefined;
  return p;
};

describe('ModePaymentRouter', () => {
  const live = named('stripe', 'live');
  const test = named('stripe', 'test');
  const sandbox = named('sandbox', 'sandbox', ['setPlanSeats', 'syncPrice']);
  const router = new ModePaymentRouter({ live, test, others: [sandbox] });
  const of = (isTest: boolean, paymentProvider: string) => {
    const tenant = { organisationId: randomUUID(), isTest };
    const plan = aPlan(aProduct(tenant), { licenseType: 'perSeat' });
    return { plan, s: aSubscription(plan, aCustomer(tenant), { paymentProvider }) };
  };
  const last = (p: FakePaymentProvider) => p.calls[p.calls.length - 1];

  it('sends a subscription to the provider it records, then to its mode; meter events by mode', async () => {
    for (const [isTest, name, to] of [
      [false, 'stripe', live],
      [true, 'stripe', test],
      [true, 'sandbox', sandbox],
      [false, 'sandbox', sandbox],
    ] as const) {
      const { s } = of(isTest, name);
      await router.portalLink(s, aCustomer({ organisationId: s.organisationId, isTest }));
      expect(last(to)).toMatchObject({ op: 'link', kind: 'portal', subscriptionId: s.id });
    }
    expect(router.name).toBe('stripe');
    const sent: string[] = [];
    live.sendMeterEvent = async () => (sent.push('live'), { ok: true });
    test.sendMeterEvent = async () => (sent.push('test'), { ok: true });
    const e = { eventName: 'tokens', customerId: 'cus_1', value: '1', identifier: 'x', timestamp: new Date() };
    await router.sendMeterEvent({ ...e, isTest: true });
    await router.sendMeterEvent({ ...e, isTest: false });
    await router.sendMeterEvent(e);
    expect(sent).toEqual(['test', 'live', 'live']);
  });

  it("asks the plan's mode's provider what it cannot sell (Stripe: usage without a Stripe price); nothing when it cannot say", () => {
    const { plan: livePlan } = of(false, 'stripe');
    const { plan: testPlan } = of(true, 'stripe');
    const asked: string[] = [];
    const reasons = (label: string) => (p: { id: string }, currency: string) => (asked.push(`${label} ${currency}`), `${label} ${p.id}`);
    Object.assign(live, { unsellable: reasons('live') });
    Object.assign(test, { unsellable: reasons('test') });
    try {
      expect(router.unsellable(livePlan, 'USD')).toBe(`live ${livePlan.id}`);
      expect(router.unsellable(testPlan, 'EUR')).toBe(`test ${testPlan.id}`);
      expect(asked).toEqual(['live USD', 'test EUR']);
      Object.assign(live, { unsellable: undefined });
      expect(router.unsellable(livePlan, 'USD')).toBeUndefined();
    } finally {
      Object.assign(live, { unsellable: undefined });
      Object.assign(test, { unsellable: undefined });
    }
  });

  it("a sandbox subscription's added seats go as the difference; its price sync is nothing", async () => {
    const { s, plan } = of(true, 'sandbox');
    const held = { ...s, addedPlans: [{ ...(s.addedPlans[0] ?? {}), planId: plan.id, quantity: 2 }] } as typeof s;
    const req: PlanItemRequest = { subscription: held, plan, quantity: 5, unitAmount: 100, proration: 'none' };
    await router.setPlanSeats(req);
    expect(last(sandbox)).toMatchObject({ op: 'addPlan', request: { quantity: 3 } });
    await router.setPlanSeats({ ...req, quantity: 1 });
    expect(last(sandbox)).toMatchObject({ op: 'removePlan', request: { quantity: 1 } });
    const before = sandbox.calls.length;
    expect(await router.syncPrice(held, plan, 100)).toEqual({});
    expect(sandbox.calls.length).toBe(before);
  });
});
