import type { CheckoutItem, Plan } from '../src';
import { createTestCore, fakeFreeCheckout, seedSample } from '@tollgate/core/testing';

// A cart goes to the provider its plans together pick: a free first plan (one with paid usage the
// provider cannot bill) with a paid extra plan goes to the payment provider, not the free checkout
// the first plan alone would. Every plan of the cart is asked of that provider (`unsellable`)
// before the session is written: a refused cart leaves no session open and the provider is never asked.

const req = {
  successUrl: 'https://app.example.com/ok',
  cancelUrl: 'https://app.example.com/no',
  granteeId: 'fay',
  member: 'fay@example.com',
  currency: 'USD',
};

async function world() {
  const core = createTestCore({ freeCheckout: fakeFreeCheckout() });
  const { tenant, keys } = await seedSample(core, 'acme');
  const free = keys['plans.notes.free'];
  const team = keys['plans.notes.team'];
  const extraItems: CheckoutItem[] = [{ planId: team, quantity: 2, granteeId: null, groupId: null }];
  const unsellable = new Set<string>();
  Object.assign(core.payments, {
    unsellable: (p: Plan) =>
      unsellable.has(p.id) ? `the plan ${p.displayName} cannot be billed through Stripe: no Stripe price` : undefined,
  });
  // Whether a session of the plan is open at any provider (none is left by a refusal).
  const open = (planId: string) => core.uow.read((r) => r.checkoutSessions.hasOpenForPlan(planId, new Date(0), ['fake', 'none']));
  const asked = () => core.payments.calls.filter((c) => c.op === 'checkoutLink');
  return { core, tenant, free, team, extraItems, unsellable, open, asked };
}

describe("a cart's plans are each asked of the provider the cart goes to", () => {
  it.each(['sessionLink', 'checkoutLink', 'followDeferredLink'] as const)(
    '%s: a free first plan the payment provider cannot sell, with a paid extra plan, is refused (400 naming planId)',
    async (how) => {
      const { core, tenant, free, extraItems, unsellable, open, asked } = await world();
      unsellable.add(free);
      const call =
        how === 'sessionLink'
          ? core.checkout.sessionLink(tenant, free, { ...req, extraItems })
          : how === 'checkoutLink'
            ? core.checkout.checkoutLink(tenant, free, { ...req, extraItems })
            : core.checkout.followDeferredLink(tenant, free, { ...req, extraItems }, 'cart-link');
      await expect(call).rejects.toMatchObject({
        code: 'VALIDATION_FAILED',
        details: [{ property: 'planId', error: expect.stringContaining('cannot be billed through Stripe') }],
      });
      expect(asked()).toEqual([]);
      expect(await open(free)).toBe(false);
      // Alone the free plan goes to the free checkout, which sells it.
      await core.checkout.sessionLink(tenant, free, req);
      expect(asked()).toEqual([]);
      expect(await open(free)).toBe(true);
    },
  );

  it('an extra plan the provider cannot sell is refused naming cartItems', async () => {
    const { core, tenant, free, team, extraItems, unsellable, asked } = await world();
    unsellable.add(team);
    await expect(core.checkout.sessionLink(tenant, free, { ...req, extraItems })).rejects.toMatchObject({
      code: 'VALIDATION_FAILED',
      details: [{ property: 'cartItems', error: expect.stringContaining('Team') }],
    });
    expect(asked()).toEqual([]);
    unsellable.clear();
    await core.checkout.sessionLink(tenant, free, { ...req, extraItems });
    expect(asked()).toHaveLength(1);
  });
});
