import type { CheckoutRequest, Plan, PlanItemRequest } from '../src';
import { createCore, type Subscription } from '../src';
import { buyPlan, createTestCore, sampleCatalog } from '../src/testing';
import { FakePaymentProvider } from '../src/testing/fakes';

// A plan the payment provider cannot sell as Tollgate prices it (the port's optional `unsellable`:
// Stripe, a metered line item that charges for usage and has no Stripe price) is refused before
// anything is written or told to the provider, and is not offered: the checkout, the plan change,
// the switch list and a removal of the first plan that would promote it all ask the provider.

const REASON = 'its metered line item api_calls has no Stripe price';

async function world() {
  const core = createTestCore();
  const org = await core.apiKeys.ensureOrganisation('acme');
  const tenant = { organisationId: org.id, isTest: false };
  const { keys } = await core.importer.apply(sampleCatalog('acme'));
  const plan = (key: string) => keys[`plans.notes.${key}`];
  // The provider cannot sell the plans named here (by id), and says why.
  const unsellable = new Set<string>();
  const asked: [string, string][] = [];
  Object.assign(core.payments, {
    unsellable: (p: Plan, currency: string) => {
      asked.push([p.id, currency]);
      return unsellable.has(p.id) ? `the plan ${p.displayName} cannot be billed: ${REASON}` : undefined;
    },
  });
  return { core, tenant, plan, unsellable, asked };
}

const link = {
  successUrl: 'https://app.example.com/ok',
  cancelUrl: 'https://app.example.com/no',
  granteeId: 'gina',
  member: 'g@example.com',
};

describe('a plan the payment provider cannot sell', () => {
  it('is refused at checkout (400 naming planId), the provider never asked', async () => {
    const { core, tenant, plan, unsellable, asked } = await world();
    unsellable.add(plan('business'));
    await expect(core.checkout.checkoutLink(tenant, plan('business'), link)).rejects.toMatchObject({
      code: 'VALIDATION_FAILED',
      details: [{ property: 'planId', error: expect.stringContaining(REASON) }],
    });
    expect(asked).toContainEqual([plan('business'), 'USD']);
    expect(core.payments.calls.filter((c) => c.op === 'checkoutLink')).toEqual([]);
    // Sellable again: sold.
    unsellable.clear();
    await core.checkout.checkoutLink(tenant, plan('business'), link);
    expect(core.payments.calls.filter((c) => c.op === 'checkoutLink')).toHaveLength(1);
  });

  it('is refused as a plan change target (400 naming the field, the provider never told) and left out of the switch list', async () => {
    const { core, tenant, plan, unsellable } = await world();
    const { subscription: s } = await buyPlan(core, plan('team'), 3);
    expect((await core.subscriptions.switchablePlans(tenant, s.id)).plans.map((p) => p.key)).toContain('business');
    unsellable.add(plan('business'));
    expect((await core.subscriptions.switchablePlans(tenant, s.id)).plans.map((p) => p.key).sort()).toEqual(['free']);
    await expect(core.subscriptions.changePlan(tenant, s.id, plan('business'), 'none', 'planUuid')).rejects.toMatchObject({
      code: 'VALIDATION_FAILED',
      details: [{ property: 'planUuid', error: expect.stringContaining(REASON) }],
    });
    expect(core.payments.calls.filter((c) => c.op === 'changePlan')).toEqual([]);
    expect((await core.subscriptions.get(tenant, s.id)).subscription.planId).toBe(plan('team'));
  });

  it('the first plan removed: the plan promoted is told to the provider, and refused (400, nothing told) when it cannot sell it', async () => {
    const { core, tenant, plan, unsellable } = await world();
    const { subscription: s } = await buyPlan(core, plan('team'), 2);
    await core.subscriptionItems.change(tenant, s.id, [{ kind: 'add', planId: plan('business'), at: 'items[0]' }], 'none');
    const removals = () => core.payments.calls.flatMap((c) => (c.op === 'removePlan' ? [(c as { request: PlanItemRequest }).request] : []));
    unsellable.add(plan('business'));
    await expect(
      core.subscriptionItems.change(tenant, s.id, [{ kind: 'remove', planId: plan('team'), at: 'items[0]' }], 'none'),
    ).rejects.toMatchObject({
      code: 'VALIDATION_FAILED',
      details: [{ property: 'items[0].planId', error: expect.stringMatching(/makes Business the subscription's first plan: .*api_calls/) }],
    });
    expect(removals()).toEqual([]);
    expect((await core.subscriptions.get(tenant, s.id)).subscription.planId).toBe(plan('team'));
    // Sellable: removed, and the provider is told which plan becomes the first.
    unsellable.clear();
    await core.subscriptionItems.change(tenant, s.id, [{ kind: 'remove', planId: plan('team'), at: 'items[0]' }], 'none');
    expect(removals().map((r) => [r.plan.id, r.promoted?.id])).toEqual([[plan('team'), plan('business')]]);
    expect((await core.subscriptions.get(tenant, s.id)).subscription.planId).toBe(plan('business'));
  });

  it('the first plan removed: asked of the provider that bills the subscription (the sandbox), not of the router live Stripe answers for', async () => {
    const { core, tenant, plan } = await world();
    const { subscription: s } = await buyPlan(core, plan('team'), 2);
    await core.subscriptionItems.change(tenant, s.id, [{ kind: 'add', planId: plan('business'), at: 'items[0]' }], 'none');
    // A deployment under a live Stripe key: `payments` is the router (named stripe) and refuses by
    // Stripe's rule; the subscription was billed by the sandbox (made before the key was set).
    const sandbox = Object.assign(new FakePaymentProvider(), { name: 'sandbox', unsellable: () => undefined });
    const router = Object.assign(new FakePaymentProvider(), {
      name: 'stripe',
      unsellable: (p: Plan) => `the plan ${p.displayName} cannot be billed: ${REASON}`,
    });
    await core.uow.run(async (r) => {
      const x = (await r.subscriptions.get(s.id)) as Subscription;
      await r.subscriptions.save({ ...x, paymentProvider: 'sandbox' });
    });
    const live = createCore({ ...core.deps, payments: router, testPayments: sandbox, otherPayments: [sandbox] });
    await live.subscriptionItems.change(tenant, s.id, [{ kind: 'remove', planId: plan('team'), at: 'items[0]' }], 'none');
    expect((await live.subscriptions.get(tenant, s.id)).subscription.planId).toBe(plan('business'));
  });

  it('an added plan removed promotes nothing', async () => {
    const { core, tenant, plan } = await world();
    const { subscription: s } = await buyPlan(core, plan('team'), 2);
    await core.subscriptionItems.change(tenant, s.id, [{ kind: 'add', planId: plan('business'), at: 'items[0]' }], 'none');
    await core.subscriptionItems.change(tenant, s.id, [{ kind: 'remove', planId: plan('business'), at: 'items[0]' }], 'none');
    const removal = core.payments.calls.find((c) => c.op === 'removePlan') as { request: PlanItemRequest };
    expect(removal.request.promoted).toBeUndefined();
  });
});

describe("a deferred link's reuse digests the metered line items' provider prices", () => {
  it('a metered Stripe price set since the session was made makes a new session; unchanged terms reuse it', async () => {
    const { core, tenant, plan } = await world();
    const made = () => core.payments.calls.flatMap((c) => (c.op === 'checkoutLink' ? [(c as { request: CheckoutRequest }).request] : []));
    // The sessions the provider was asked for (a reused one is asked again under its own id: the fake keeps none).
    const sessions = () => [...new Set(made().map((r) => r.sessionId))];
    const first = await core.checkout.followDeferredLink(tenant, plan('metered'), link, 'link-m');
    expect((await core.checkout.followDeferredLink(tenant, plan('metered'), link, 'link-m')).url).toBe(first.url);
    expect(sessions()).toHaveLength(1);
    // The vendor sets the metered line item's Stripe price: the old session would sell no usage.
    await core.uow.run(async (r) => {
      const p = (await r.plans.get(plan('metered'))) as Plan;
      const metered = p.lineItems.findIndex((li) => li.priceType === 'metered');
      expect(metered).toBeGreaterThanOrEqual(0);
      const lineItems = p.lineItems.map((li, i) =>
        i === metered ? { ...li, prices: li.prices.map((x) => ({ ...x, paymentPriceId: 'price_1RealMeteredPrice000000' })) } : li,
      );
      await r.plans.save({ ...p, lineItems });
    });
    const second = await core.checkout.followDeferredLink(tenant, plan('metered'), link, 'link-m');
    expect(second.url).not.toBe(first.url);
    expect(sessions()).toHaveLength(2);
    expect(
      made()[made().length - 1].plan.lineItems.some((li) => li.prices.some((x) => x.paymentPriceId === 'price_1RealMeteredPrice000000')),
    ).toBe(true);
  });
});
