import type { CheckoutItem, CheckoutRequest, CheckoutSession, PaymentProvider } from '../src';
import { createTestCore, fakeFreeCheckout, seedSample, T0 } from '@tollgate/core/testing';

// The payment clean-ups' review follow-ups (paycleanup2): a cart's links, the deferred one and
// `linkFor`'s, as `sessionLink` makes them. A cart with one paid plan goes to the payment provider
// even when its first plan is free, and its session records that provider (the test core has no
// free checkout: these build one with it). A refused cart leaves no session open.

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
  const sessionOf = async (id: string) => (await core.uow.read((r) => r.checkoutSessions.get(id))) as CheckoutSession;
  const sent = () => core.payments.calls.flatMap((c) => (c.op === 'checkoutLink' ? [c.request] : []));
  return { core, tenant, free, team, extraItems, sessionOf, sent };
}

describe('a deferred link of a cart whose first plan is free and another paid', () => {
  it('records the payment provider it is sent to, and is reused at it', async () => {
    const { core, tenant, free, extraItems, sessionOf, sent } = await world();
    const first = await core.checkout.followDeferredLink(tenant, free, { ...req, extraItems }, 'link-1');
    expect(sent()).toHaveLength(1);
    const [request] = sent();
    expect(first.url).toBe(`https://pay.example.test/checkout/${request.sessionId}`);
    expect((await sessionOf(request.sessionId)).provider).toBe(core.payments.name);
    // Followed again: the same session (at the provider it went to), sent the same request.
    const again = await core.checkout.followDeferredLink(tenant, free, { ...req, extraItems }, 'link-1');
    expect(again.url).toBe(first.url);
    expect(sent()).toEqual([request, request]);
  });

  it('makes the session that replaces one whose provider page closed at that provider too', async () => {
    const { core, tenant, free, extraItems, sessionOf, sent } = await world();
    // A provider that keeps its own sessions (Stripe): the page of one paid or expired is gone.
    const provider = core.payments as unknown as Pick<PaymentProvider, 'checkoutLink' | 'checkoutUrl'>;
    const open = new Set<string>();
    const made: CheckoutRequest[] = [];
    provider.checkoutLink = async (request) => {
      made.push(request);
      open.add(`cs_${request.sessionId}`);
      return { url: `https://pay.example.test/checkout/${request.sessionId}`, providerSessionId: `cs_${request.sessionId}` };
    };
    provider.checkoutUrl = async (providerSessionId) =>
      open.has(providerSessionId) ? `https://pay.example.test/${providerSessionId}` : null;
    await core.checkout.followDeferredLink(tenant, free, { ...req, extraItems }, 'link-1');
    const firstId = made[0].sessionId;
    expect(await core.checkout.followDeferredLink(tenant, free, { ...req, extraItems }, 'link-1')).toEqual({
      url: `https://pay.example.test/cs_${firstId}`,
    });
    open.clear();
    await core.checkout.followDeferredLink(tenant, free, { ...req, extraItems }, 'link-1');
    expect(made).toHaveLength(2);
    const next = await sessionOf(made[1].sessionId);
    expect(next.id).not.toBe(firstId);
    expect(next.provider).toBe(core.payments.name);
    expect(sent()).toEqual([]);
  });

  it('of the free plan alone, still goes to the free checkout', async () => {
    const { core, tenant, free } = await world();
    expect(await core.checkout.followDeferredLink(tenant, free, req, 'link-1')).toEqual({ url: 'http://localhost/free' });
    expect(core.payments.calls).toEqual([]);
  });
});

describe('a checkout link of a cart (linkFor)', () => {
  it('refused for its cart leaves no session open', async () => {
    const { core, tenant, team, sessionOf } = await world();
    const ids: string[] = [];
    const newId = core.deps.ids.newId.bind(core.deps.ids);
    core.deps.ids.newId = () => (ids.push(newId()), ids[ids.length - 1]);
    // The first plan in the cart again: one subscription holds a plan once.
    const twice: CheckoutItem[] = [{ planId: team, quantity: 2, granteeId: null, groupId: null }];
    await expect(core.checkout.checkoutLink(tenant, team, { ...req, extraItems: twice })).rejects.toMatchObject({
      code: 'VALIDATION_FAILED',
      details: [{ property: 'cartItems' }],
    });
    expect(ids).toHaveLength(1);
    expect(await sessionOf(ids[0])).toBeUndefined();
    expect(await core.uow.read((r) => r.checkoutSessions.hasOpenForPlan(team, T0, [core.payments.name, 'none']))).toBe(false);
    expect(core.payments.calls).toEqual([]);
  });

  it('accepted, saves the session and sends the provider the cart', async () => {
    const { core, tenant, free, extraItems, sessionOf, sent } = await world();
    const { url } = await core.checkout.checkoutLink(tenant, free, { ...req, extraItems });
    const [request] = sent();
    expect(url).toBe(`https://pay.example.test/checkout/${request.sessionId}`);
    expect(request.extraItems).toEqual([expect.objectContaining({ quantity: 2, unitAmount: 1200 })]);
    // Recorded at the provider it is sent to (the cart's paid plan), not its free first plan's.
    expect(await sessionOf(request.sessionId)).toMatchObject({ status: 'open', extraItems, provider: core.payments.name });
  });
});
