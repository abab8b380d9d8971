import { createTestCore, fakeFreeCheckout, seedSample, type TestCore } from '../src/testing';
import type { Tenant } from '../src';

// A checkout the provider reports paid is recorded even when the vendor changed the catalog
// between the link and the payment: the sale's rules held when the session was made.

const req = {
  successUrl: 'https://app.example.com/ok',
  cancelUrl: 'https://app.example.com/no',
  granteeId: 'paula',
  member: 'paula@example.com',
};
const paid = { paymentSubscriptionId: 'sub_paid', paymentCustomerId: 'cus_paid', email: 'paula@example.com' };

async function setup(): Promise<{ core: TestCore; tenant: Tenant; keys: Record<string, string> }> {
  const core = createTestCore({ freeCheckout: fakeFreeCheckout() });
  return { core, ...(await seedSample(core, 'acme')) };
}

async function expectRecorded(core: TestCore, tenant: Tenant, sessionId: string, planId: string, seats: number) {
  const done = await core.checkout.completeCheckout(sessionId, paid);
  expect(done.status).toBe('completed');
  expect(done.subscription).toMatchObject({
    planId,
    paymentProvider: core.payments.name,
    paymentSubscriptionId: 'sub_paid',
    quantity: seats,
  });
  const licenses = await core.licenses.list(tenant, {});
  expect(licenses.filter((l) => l.subscriptionId === done.subscription.id)).toHaveLength(seats);
  expect((await core.uow.read((r) => r.checkoutSessions.get(sessionId)))?.status).toBe('completed');
  return done;
}

describe('checkout completion records what the provider was paid for', () => {
  it('after the plan was archived (a new link is refused)', async () => {
    const { core, tenant, keys } = await setup();
    const planId = keys['plans.notes.team'];
    const { sessionId } = await core.checkout.sessionLink(tenant, planId, { ...req, quantity: 3 });
    await core.plans.archivePlan(tenant, planId);
    await expectRecorded(core, tenant, sessionId, planId, 3);
    await expect(core.checkout.sessionLink(tenant, planId, req)).rejects.toMatchObject({ code: 'PLAN_ARCHIVED' });
  });

  it("after the plan's product was archived", async () => {
    const { core, tenant, keys } = await setup();
    const planId = keys['plans.notes.business'];
    const { sessionId } = await core.checkout.sessionLink(tenant, planId, req);
    await core.products.archiveProduct(tenant, keys['products.notes']);
    await expectRecorded(core, tenant, sessionId, planId, 1);
  });

  it('after the currency was removed from the product: recorded in the currency paid', async () => {
    const { core, tenant, keys } = await setup();
    const planId = keys['plans.notes.business'];
    const { sessionId } = await core.checkout.sessionLink(tenant, planId, { ...req, currency: 'EUR' });
    await core.uow.run(async (r) => {
      const eur = (await r.currencies.list()).find((c) => c.shortName === 'EUR')!;
      const product = (await r.products.get(keys['products.notes']))!;
      await r.products.save({ ...product, currencies: product.currencies.filter((c) => c.currencyId !== eur.id) });
    });
    const done = await expectRecorded(core, tenant, sessionId, planId, 1);
    expect(done.subscription.currency).toBe('EUR');
    await expect(core.checkout.sessionLink(tenant, planId, { ...req, currency: 'EUR' })).rejects.toMatchObject({
      code: 'CHECKOUT_CURRENCY_NOT_SUPPORTED',
    });
  });

  it("after the plan's seat minimum was raised: the seats paid for", async () => {
    const { core, tenant, keys } = await setup();
    const planId = keys['plans.notes.team'];
    const { sessionId } = await core.checkout.sessionLink(tenant, planId, { ...req, quantity: 2 });
    await core.uow.run(async (r) => r.plans.save({ ...(await r.plans.get(planId))!, perSeatAmount: 5 }));
    await expectRecorded(core, tenant, sessionId, planId, 2);
  });

  it("after a cart's other plan was archived: one subscription holds both", async () => {
    const { core, tenant, keys } = await setup();
    const extraItems = [{ planId: keys['plans.notes.team'], quantity: 2, granteeId: null, groupId: null }];
    const { sessionId } = await core.checkout.sessionLink(tenant, keys['plans.notes.business'], { ...req, extraItems });
    await core.plans.archivePlan(tenant, keys['plans.notes.team']);
    const done = await core.checkout.completeCheckout(sessionId, paid);
    expect(done.subscription.addedPlans).toEqual([expect.objectContaining({ planId: keys['plans.notes.team'], quantity: 2 })]);
    expect((await core.licenses.list(tenant, {})).filter((l) => l.subscriptionId === done.subscription.id)).toHaveLength(3);
  });

  it('a plan made free after its link is recorded with the provider that took the payment, never the free checkout', async () => {
    const { core, tenant, keys } = await setup();
    const planId = keys['plans.notes.business'];
    const { sessionId } = await core.checkout.sessionLink(tenant, planId, req);
    await core.uow.run(async (r) => r.plans.save({ ...(await r.plans.get(planId))!, pricingType: 'free' }));
    const done = await expectRecorded(core, tenant, sessionId, planId, 1);
    expect(done.subscription.paymentProvider).not.toBe('none');
    // So a cancellation reaches the provider that bills it.
    await core.subscriptions.cancel(tenant, done.subscription.id, 'now');
    expect(core.payments.calls.some((c) => c.op === 'cancel')).toBe(true);
  });

  it("asks the sale's rules again where nobody paid a provider (Tollgate's own pages: no provider subscription)", async () => {
    const { core, tenant, keys } = await setup();
    const planId = keys['plans.notes.team'];
    const { sessionId } = await core.checkout.sessionLink(tenant, planId, { ...req, quantity: 2, changeQuantity: true });
    // Below the plan's minimum (2), chosen on the page: refused, as the page's own bound is only the browser's.
    await expect(core.checkout.completeCheckout(sessionId, { quantity: 1 })).rejects.toMatchObject({
      code: 'CHECKOUT_QUANTITY_BELOW_MINIMUM',
    });
    // The plan archived since the link: an old session claims nothing.
    await core.plans.archivePlan(tenant, planId);
    await expect(core.checkout.completeCheckout(sessionId, {})).rejects.toMatchObject({ code: 'PLAN_ARCHIVED' });
    expect((await core.uow.read((r) => r.checkoutSessions.get(sessionId)))?.status).toBe('open');
  });

  it('keeps the integrity checks: the session completes once, and only on its own terms', async () => {
    const { core, tenant, keys } = await setup();
    const planId = keys['plans.notes.team'];
    const { sessionId } = await core.checkout.sessionLink(tenant, planId, { ...req, quantity: 2 });
    await core.plans.archivePlan(tenant, planId);
    // The session did not let the customer choose the seat count.
    await expect(core.checkout.completeCheckout(sessionId, { ...paid, quantity: 7 })).rejects.toMatchObject({
      code: 'CHECKOUT_QUANTITY_INVALID',
    });
    await core.checkout.completeCheckout(sessionId, paid);
    await expect(core.checkout.completeCheckout(sessionId, paid)).rejects.toMatchObject({ code: 'CHECKOUT_ALREADY_COMPLETED' });
    const canceled = await core.checkout.sessionLink(tenant, keys['plans.notes.business'], req);
    await core.checkout.cancelCheckout(canceled.sessionId);
    await expect(core.checkout.completeCheckout(canceled.sessionId, paid)).rejects.toMatchObject({ code: 'CHECKOUT_CANCELED' });
  });
});
