import { subscriptionView, type PlanEntry } from '../src';
import { buyPlan, createTestCore, fakeFreeCheckout, sampleCatalog } from '../src/testing';

// The lifecycle review's follow-ups (twelfth session): paid plans on subscriptions no provider bills
// through the items route, and the expiry date of a subscription canceled after its period ended.

/** The sample catalog plus a second free plan (of the product `notes`). */
async function world() {
  const core = createTestCore({ freeCheckout: fakeFreeCheckout() });
  const org = await core.apiKeys.ensureOrganisation('acme');
  const tenant = { organisationId: org.id, isTest: false };
  const catalog = sampleCatalog('acme');
  const [product] = catalog.products ?? [];
  const extra: PlanEntry = {
    key: 'free-plus',
    displayName: 'Free plus',
    pricingType: 'free',
    licenseType: 'user',
    interval: 'month',
    length: 1,
    capabilities: ['edit'],
  };
  const { keys } = await core.importer.apply({ ...catalog, products: [{ ...product, plans: [...(product.plans ?? []), extra] }] });
  const plan = (key: string) => keys[`plans.notes.${key}`];
  return { core, tenant, plan };
}

describe('plans added to a subscription no provider bills', () => {
  it('refuses a paid plan added, moved to by remove and add, or replacing an added plan: 400 naming the field, nothing told or changed', async () => {
    const { core, tenant, plan } = await world();
    const { subscription: s } = await buyPlan(core, plan('free'), 1, 'frida', 'none');
    const calls = core.payments.calls.length;
    const refused = (steps: Parameters<typeof core.subscriptionItems.change>[2], property: string) =>
      expect(core.subscriptionItems.change(tenant, s.id, steps, 'none')).rejects.toMatchObject({
        code: 'VALIDATION_FAILED',
        details: [{ property, error: expect.stringMatching(/check out Business.*create it anew on Business/) }],
      });
    await refused([{ kind: 'add', planId: plan('business'), at: 'items[0]' }], 'items[0].planId');
    await refused(
      [
        { kind: 'remove', planId: plan('free'), at: 'items[0]' },
        { kind: 'add', planId: plan('business'), at: 'items[1]' },
      ],
      'items[1].planId',
    );
    // A free plan is added as before; its replace by a paid plan is refused naming the new plan's field.
    await core.subscriptionItems.change(tenant, s.id, [{ kind: 'add', planId: plan('free-plus'), at: 'items[0]' }], 'none');
    await refused(
      [
        { kind: 'add', planId: plan('business'), at: 'items[0]', field: 'items[0].newPlanId' },
        { kind: 'remove', planId: plan('free-plus'), at: 'items[0]' },
      ],
      'items[0].newPlanId',
    );
    const after = (await core.subscriptions.get(tenant, s.id)).subscription;
    expect([after.planId, ...after.addedPlans.map((a) => a.planId)]).toEqual([plan('free'), plan('free-plus')]);
    expect(core.payments.calls.length).toBe(calls);
    const licenses = await core.licenses.list(tenant, { subscriptionId: s.id });
    expect(licenses.some((l) => l.planId === plan('business'))).toBe(false);
  });

  it("tells a vendor's own paid subscription (made without payment) it may cancel it and create it anew", async () => {
    const { core, tenant, plan } = await world();
    const { subscription: s } = await buyPlan(core, plan('team'), 2, 'vera', 'none');
    await expect(core.subscriptions.changePlan(tenant, s.id, plan('business'), 'none')).rejects.toMatchObject({
      code: 'VALIDATION_FAILED',
      details: [{ property: 'planUuid', error: expect.stringContaining('cancel this subscription and create it anew on Business') }],
    });
  });
});

describe('the expiry date of a subscription canceled after its period ended (before the sweep renewed it)', () => {
  it('is the cancel instant, when its licenses ended', async () => {
    const { core, tenant, plan } = await world();
    const { subscription: s } = await buyPlan(core, plan('business'), 1);
    core.clock.advanceDays(40);
    const at = core.clock.now();
    expect(at.getTime()).toBeGreaterThan(s.currentPeriodEnd.getTime());
    const canceled = await core.subscriptions.cancel(tenant, s.id, 'now');
    expect(canceled.canceledAt?.toISOString()).toBe(at.toISOString());
    const read = (await core.subscriptions.get(tenant, s.id)).subscription;
    expect(subscriptionView(read).expiryDate).toBe(at.toISOString());
    const licenses = await core.licenses.list(tenant, { subscriptionId: s.id });
    expect(licenses.map((l) => l.endTime?.toISOString())).toEqual([at.toISOString()]);
  });
});
