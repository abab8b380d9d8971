import { createCore, type CatalogFile, type PaymentProvider, type UsageInvoiceLine } from '@tollgate/core';
import {
  aCustomer,
  aPlan,
  aProduct,
  aSubscription,
  buyPlan,
  createTestCore,
  FakePaymentProvider,
  sampleCatalog,
} from '@tollgate/core/testing';
import { ModePaymentRouter } from '../src/payments';

// The lifecycle review (twelfth session): under a live Stripe key the payment provider is the mode
// router (named `stripe`); a test-mode subscription the sandbox bills still has its usage billed
// by the sandbox when its plan changes or it is canceled, and the member reaches its seat changes.

const named = (name: string) => {
  const p = new FakePaymentProvider();
  Object.defineProperty(p, 'name', { value: name });
  return p;
};

/**
 * The sample catalog with plans metering API calls (1000 or 5000 included, then 0.01 USD each):
 * two flat ones (a change moves the subscription) and two usage-based ones (a change replaces it).
 */
function usageCatalog(organisation: string): CatalogFile {
  const file = sampleCatalog(organisation, true);
  const [product] = file.products ?? [];
  const flat = (key: string, fee: number, allowance: number, usageBased = false) => ({
    key,
    usageBased,
    displayName: key,
    pricingType: 'paid' as const,
    interval: 'month' as const,
    length: 1,
    prices: { USD: fee },
    capabilities: ['edit'],
    usage: [{ meter: 'api_calls', allowance, unitPrices: { USD: 0.01 } }],
  });
  product.plans = [
    ...(product.plans ?? []),
    flat('flat_api', 20, 1000),
    flat('flat_api_plus', 40, 5000),
    flat('usage_api', 20, 1000, true),
    flat('usage_api_plus', 40, 5000, true),
  ];
  return file;
}

async function world() {
  const base = createTestCore();
  const live = named('stripe');
  const sandbox = named('sandbox');
  const billed: UsageInvoiceLine[][] = [];
  (sandbox as PaymentProvider).usageBilled = (_s, _p, lines) => (billed.push(lines), {});
  (sandbox as PaymentProvider).renewedBySweep = () => ({});
  const payments = new ModePaymentRouter({ live, others: [sandbox] });
  const core = { ...createCore({ ...base.deps, payments, testPayments: sandbox }), clock: base.clock };
  const org = await core.apiKeys.ensureOrganisation('acme');
  const tenant = { organisationId: org.id, isTest: true };
  const { keys } = await core.importer.apply(usageCatalog('acme'));
  const plan = (key: string) => keys[`plans.notes.${key}`];
  return { core, tenant, plan, sandbox, live, billed };
}

describe("a test-mode sandbox subscription's usage under a live Stripe key", () => {
  it('is billed through the sandbox when the subscription is canceled', async () => {
    const { core, tenant, plan, billed, live } = await world();
    const { subscription: s } = await buyPlan(core, plan('flat_api'), 1, 'alice', 'sandbox');
    await core.usage.record(tenant, { owner: s.id, meterSlug: 'api_calls', quantity: 1200 });
    await core.subscriptions.cancel(tenant, s.id, 'now');
    expect(billed.map((lines) => lines.map((l) => l.quantity))).toEqual([[200]]);
    expect(live.calls).toEqual([]);
  });

  it.each([
    ['moved', 'flat_api', 'flat_api_plus', 'changePlan'],
    ['replaced', 'usage_api', 'usage_api_plus', 'cancel'],
  ] as const)('is billed through the sandbox when its plan changes (%s)', async (kind, from, to, op) => {
    const { core, tenant, plan, billed, sandbox, live } = await world();
    const { subscription: s } = await buyPlan(core, plan(from), 1, 'alice', 'sandbox');
    await core.usage.record(tenant, { owner: s.id, meterSlug: 'api_calls', quantity: 1200 });
    const change = await core.subscriptions.changePlan(tenant, s.id, plan(to), 'none');
    expect(change.kind).toBe(kind);
    expect(sandbox.calls.some((c) => c.op === op)).toBe(true);
    expect(billed.map((lines) => lines.map((l) => l.quantity))).toEqual([[200]]);
    expect(live.calls).toEqual([]);
  });
});

describe('ModePaymentRouter.changeSeats', () => {
  it('passes the member on to the provider of the subscription', async () => {
    const sandbox = named('sandbox');
    const router = new ModePaymentRouter({ live: named('stripe'), others: [sandbox] });
    const tenant = { organisationId: 'org-1', isTest: true };
    const plan = aPlan(aProduct(tenant), { licenseType: 'perSeat' });
    const s = aSubscription(plan, aCustomer(tenant), { paymentProvider: 'sandbox' });
    const spy = jest.spyOn(sandbox, 'changeSeats');
    await router.changeSeats(s, plan, 3, 'none', 1200, 'member@example.com');
    expect(spy).toHaveBeenCalledWith(s, plan, 3, 'none', 1200, 'member@example.com');
  });
});
