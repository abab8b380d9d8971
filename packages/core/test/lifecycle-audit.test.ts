import {
  DomainError,
  ErrorCodes,
  subscriptionView,
  type PaymentProvider,
  type PlanChangeRequest,
  type PlanEntry,
  type Subscription,
} from '../src';
import { buyPlan, createTestCore, fakeFreeCheckout, sampleCatalog, type TestCore } from '../src/testing';

/** The sample catalog plus a second free plan, a private plan and a yearly plan (all of the product `notes`). */
async function world() {
  const core = createTestCore({ freeCheckout: fakeFreeCheckout() });
  const org = await core.apiKeys.ensureOrganisation('acme');
  const tenant = { organisationId: org.id, isTest: false };
  const catalog = sampleCatalog('acme');
  const [product] = catalog.products ?? [];
  const extra: PlanEntry[] = [
    {
      key: 'free-plus',
      displayName: 'Free plus',
      pricingType: 'free',
      licenseType: 'user',
      interval: 'month',
      length: 1,
      capabilities: ['edit'],
    },
    {
      key: 'free-yearly',
      displayName: 'Free yearly',
      pricingType: 'free',
      licenseType: 'user',
      interval: 'year',
      length: 1,
      capabilities: ['edit'],
    },
    {
      key: 'partner',
      displayName: 'Partner',
      pricingType: 'paid',
      licenseType: 'perSeat',
      perSeatAmount: 1,
      interval: 'month',
      length: 1,
      prices: { USD: 5, EUR: 5 },
      visibility: 'private',
      capabilities: ['edit', 'export'],
    },
    {
      key: 'business-yearly',
      displayName: 'Business yearly',
      pricingType: 'paid',
      licenseType: 'perSeat',
      perSeatAmount: 1,
      interval: 'year',
      length: 1,
      prices: { USD: 300, EUR: 280 },
      capabilities: ['edit'],
    },
    {
      key: 'business-quarterly',
      displayName: 'Business quarterly',
      pricingType: 'paid',
      licenseType: 'perSeat',
      perSeatAmount: 1,
      interval: 'month',
      length: 3,
      prices: { USD: 80, EUR: 75 },
      capabilities: ['edit'],
    },
  ];
  const { keys } = await core.importer.apply({ ...catalog, products: [{ ...product, plans: [...(product.plans ?? []), ...extra] }] });
  const plan = (key: string) => keys[`plans.notes.${key}`];
  return { core, tenant, keys, plan };
}

/** The payment provider behaving as Stripe does with a subscription it does not bill: refused. */
function refuseUnbilled(core: TestCore) {
  const p = core.payments as PaymentProvider;
  const changePlan = p.changePlan.bind(p);
  p.changePlan = async (req: PlanChangeRequest) => {
    if (req.subscription.paymentProvider !== p.name)
      throw new DomainError(ErrorCodes.PAYMENT_NOT_AVAILABLE, 'this subscription is not billed through this provider');
    return changePlan(req);
  };
}

const freeSubscription = (core: TestCore, planId: string) => buyPlan(core, planId, 1, 'frida', 'none');

describe('plan changes of a subscription no provider bills (the free checkout)', () => {
  it('refuses a move to a paid plan: 400 naming planUuid, nothing told or changed', async () => {
    const { core, tenant, plan } = await world();
    const { subscription: s } = await freeSubscription(core, plan('free'));
    const calls = core.payments.calls.length;
    for (const paid of ['team', 'business'])
      await expect(core.subscriptions.changePlan(tenant, s.id, plan(paid), 'create_prorations')).rejects.toMatchObject({
        code: 'VALIDATION_FAILED',
        details: [{ property: 'planUuid', error: expect.stringContaining('check out') }],
      });
    expect(core.payments.calls.length).toBe(calls);
    expect((await core.subscriptions.get(tenant, s.id)).subscription.planId).toBe(plan('free'));
    const licenses = await core.licenses.list(tenant, { subscriptionId: s.id });
    expect(licenses.every((l) => l.planId === plan('free'))).toBe(true);
  });

  it('moves to another free plan without calling the payment provider (which, as Stripe, refuses a subscription it does not bill)', async () => {
    const { core, tenant, plan } = await world();
    refuseUnbilled(core);
    const { subscription: s } = await freeSubscription(core, plan('free'));
    const out = await core.subscriptions.changePlan(tenant, s.id, plan('free-plus'), 'create_prorations');
    expect(out.kind).toBe('moved');
    expect((await core.subscriptions.get(tenant, s.id)).subscription.planId).toBe(plan('free-plus'));
    expect(core.payments.calls.filter((c) => c.op === 'changePlan' || c.op === 'cancel')).toEqual([]);
  });

  it('lists only free plans of its interval to switch to', async () => {
    const { core, tenant, plan } = await world();
    const { subscription: s } = await freeSubscription(core, plan('free'));
    const { plans } = await core.subscriptions.switchablePlans(tenant, s.id);
    expect(plans.map((p) => p.key)).toEqual(['free-plus']);
  });
});

describe('the switch list', () => {
  it('lists only public plans of the same product and interval that change-plan accepts, and each of them is accepted', async () => {
    const { core, tenant, plan } = await world();
    const { subscription: s } = await buyPlan(core, plan('team'), 3);
    const { plans } = await core.subscriptions.switchablePlans(tenant, s.id);
    // Not: Team (held), Partner (private), Business yearly/quarterly (another interval), Metered and
    // Metered Pro (flat paid plans: 3 seats would be billed 3 times), Free yearly (another interval).
    expect(plans.map((p) => p.key).sort()).toEqual(['business', 'free', 'free-plus']);
    for (const p of plans) {
      const { subscription: fresh } = await buyPlan(core, plan('team'), 3);
      await core.subscriptions.changePlan(tenant, fresh.id, p.id, 'none');
      expect((await core.subscriptions.get(tenant, fresh.id)).subscription.planId).toBe(p.id);
    }
  });

  it('leaves out plans below which the seats fall, and lists none for a canceled subscription', async () => {
    const { core, tenant, plan } = await world();
    const { subscription: one } = await buyPlan(core, plan('business'), 1);
    // One seat: a flat plan fits; Team needs 2 seats.
    const keys = (await core.subscriptions.switchablePlans(tenant, one.id)).plans.map((p) => p.key).sort();
    expect(keys).toEqual(['free', 'free-plus', 'metered', 'metered-pro']);
    await core.subscriptions.cancel(tenant, one.id, 'now');
    expect((await core.subscriptions.switchablePlans(tenant, one.id)).plans).toEqual([]);
  });
});

describe("a subscription's expiry date", () => {
  it('is the cancel instant once canceled now, and the period end for a cancellation at the period end', async () => {
    const { core, tenant, plan } = await world();
    const { subscription: now } = await buyPlan(core, plan('business'), 1);
    const { subscription: later } = await buyPlan(core, plan('business'), 1, 'bob');
    core.clock.advanceDays(3);
    const at = core.clock.now();
    const canceled = await core.subscriptions.cancel(tenant, now.id, 'now');
    expect(subscriptionView(canceled).expiryDate).toBe(at.toISOString());
    const read = (await core.subscriptions.get(tenant, now.id)).subscription;
    expect(subscriptionView(read).expiryDate).toBe(at.toISOString());
    const licenses = await core.licenses.list(tenant, { subscriptionId: now.id });
    expect(licenses.map((l) => l.endTime?.toISOString())).toEqual([at.toISOString()]);

    const scheduled: Subscription = await core.subscriptions.cancel(tenant, later.id, 'end');
    expect(subscriptionView(scheduled).expiryDate).toBe(later.currentPeriodEnd.toISOString());
    core.clock.advanceDays(40);
    await core.sweeps.cancellations();
    const ended = (await core.subscriptions.get(tenant, later.id)).subscription;
    expect(ended.status).toBe('CANCELED');
    expect(subscriptionView(ended).expiryDate).toBe(later.currentPeriodEnd.toISOString());
  });
});

describe('the member on what the provider is told', () => {
  it('names the customer (the member) on plan changes, seat changes, renewals and usage bills', async () => {
    const { core, tenant, plan } = await world();
    const p = core.payments as PaymentProvider;
    const members: unknown[] = [];
    const changeSeats = p.changeSeats.bind(p);
    p.changeSeats = async (...args: Parameters<PaymentProvider['changeSeats']>) => {
      members.push(['changeSeats', args[5]]);
      return changeSeats(...args);
    };
    p.renewedBySweep = (...args: Parameters<NonNullable<PaymentProvider['renewedBySweep']>>) => {
      members.push(['renewal', args[5]]);
      return {};
    };
    const { subscription: s } = await buyPlan(core, plan('team'), 2);
    await core.subscriptions.changePlan(tenant, s.id, plan('business'), 'none');
    const change = core.payments.calls.find((c) => c.op === 'changePlan');
    expect(change).toMatchObject({ request: { member: 'buyer@example.com' } });
    await core.seats.apply(s.id, { type: 'seats.increment', count: 1, proration: 'none' });
    core.clock.advanceDays(40);
    expect(await core.sweeps.renewals()).toBeGreaterThan(0);
    expect(members).toEqual([
      ['changeSeats', 'buyer@example.com'],
      ['renewal', 'buyer@example.com'],
    ]);
  });
});
