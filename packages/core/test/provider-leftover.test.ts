import { createCore, type PlanItemRequest, type ProviderOutcome } from '../src';
import { buyPlan, createTestCore, sampleCatalog } from '../src/testing';

// A provider that made a change but left items over (Stripe: the old first plan's metered items it
// did not delete after the update moved the plan, `ProviderOutcome.leftover`) does not fail it:
// the change is made at the provider, so Tollgate writes it, undoes nothing there, and logs the
// items as an error for an operator to delete.

/** A core whose error log lines are kept, with a team subscription of two seats. */
async function world() {
  const base = createTestCore();
  const org = await base.apiKeys.ensureOrganisation('acme');
  const tenant = { organisationId: org.id, isTest: false };
  const { keys } = await base.importer.apply(sampleCatalog('acme'));
  const plan = (key: string) => keys[`plans.notes.${key}`];
  const errors: [string, Record<string, unknown> | undefined][] = [];
  const core = createCore({ ...base.deps, logger: { error: (m, f) => errors.push([m, f]), info: () => undefined } });
  const { subscription: s } = await buyPlan(base, plan('team'), 2);
  return { base, core, tenant, plan, errors, s };
}

it('add B, remove A (the first): a removal with items left over is written, B is not taken back, and the items are logged', async () => {
  const { base, core, tenant, plan, errors, s } = await world();
  const removePlan = base.payments.removePlan.bind(base.payments);
  Object.assign(base.payments, {
    addPlan: async (request: PlanItemRequest): Promise<ProviderOutcome> => {
      base.payments.calls.push({ op: 'addPlan', request });
      return { paymentItemId: 'si_business' };
    },
    removePlan: async (request: PlanItemRequest): Promise<ProviderOutcome> => {
      await removePlan(request);
      return request.promoted ? { leftover: { items: ['si_gpu'], reason: 'the old metered items si_gpu were not deleted' } } : {};
    },
  });
  const after = await core.subscriptionItems.change(
    tenant,
    s.id,
    [
      { kind: 'add', planId: plan('business'), at: 'items[0]' },
      { kind: 'remove', planId: plan('team'), at: 'items[1]' },
    ],
    'none',
  );
  expect(after.planId).toBe(plan('business'));
  expect((await core.subscriptions.get(tenant, s.id)).subscription.planId).toBe(plan('business'));
  // Only the first plan's removal was told: B's item was not taken back.
  const removed = base.payments.calls.flatMap((c) => (c.op === 'removePlan' ? [(c as { request: PlanItemRequest }).request.plan.id] : []));
  expect(removed).toEqual([plan('team')]);
  expect(errors).toEqual([
    [
      expect.stringContaining('left items to delete by hand'),
      expect.objectContaining({ subscriptionId: s.id, planId: plan('team'), items: ['si_gpu'], reason: expect.stringContaining('si_gpu') }),
    ],
  ]);
});

it('a plan change the provider made with items left over is written and the items are logged', async () => {
  const { base, core, tenant, plan, errors, s } = await world();
  const changePlan = base.payments.changePlan.bind(base.payments);
  Object.assign(base.payments, {
    changePlan: async (request: Parameters<typeof changePlan>[0]): Promise<ProviderOutcome> => ({
      ...((await changePlan(request)) || {}),
      leftover: { items: ['si_old_meter'], reason: 'the old metered items si_old_meter were not deleted' },
    }),
  });
  await core.subscriptions.changePlan(tenant, s.id, plan('business'), 'none');
  expect((await core.subscriptions.get(tenant, s.id)).subscription.planId).toBe(plan('business'));
  expect(errors).toEqual([
    [
      expect.stringContaining('left items to delete by hand'),
      expect.objectContaining({ subscriptionId: s.id, planId: plan('business'), items: ['si_old_meter'] }),
    ],
  ]);
});
