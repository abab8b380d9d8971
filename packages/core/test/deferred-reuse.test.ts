import type { CheckoutRequest, CheckoutSession } from '../src';
import { createTestCore, seedSample } from '@tollgate/core/testing';

// The pages review (twelfth session): a deferred link's session whose provider page is no longer
// open (paid or expired at Stripe) is not asked of the provider again under the same request key:
// the link makes a new session.

it("makes a new session when the reused session's provider page is no longer open", async () => {
  const core = createTestCore();
  const { tenant, keys } = await seedSample(core, 'acme');
  const open = new Set<string>();
  const made: string[] = [];
  Object.assign(core.payments, {
    checkoutLink: async (request: CheckoutRequest) => {
      made.push(request.sessionId);
      open.add(`cs_${request.sessionId}`);
      return { url: `https://pay.example.test/${request.sessionId}`, providerSessionId: `cs_${request.sessionId}` };
    },
    checkoutUrl: async (id: string, _s: CheckoutSession) => (open.has(id) ? `https://pay.example.test/${id.slice(3)}` : null),
  });
  const req = {
    successUrl: 'https://app.example.com/ok',
    cancelUrl: 'https://app.example.com/no',
    granteeId: 'gina',
    member: 'g@example.com',
  };
  const first = await core.checkout.followDeferredLink(tenant, keys['plans.notes.team'], req, 'link-1');
  expect(await core.checkout.followDeferredLink(tenant, keys['plans.notes.team'], req, 'link-1')).toEqual(first);
  expect(made).toHaveLength(1);
  open.clear(); // Paid at the provider, its webhook not here yet (or expired).
  const again = await core.checkout.followDeferredLink(tenant, keys['plans.notes.team'], req, 'link-1');
  expect(made).toHaveLength(2);
  expect(again.url).toBe(`https://pay.example.test/${made[1]}`);
  expect(await core.checkout.followDeferredLink(tenant, keys['plans.notes.team'], req, 'link-1')).toEqual(again);
});
