import type { CatalogFile, CheckoutLinkRequest, CheckoutRequest, CheckoutSession } from '../src';
import { createTestCore } from '@tollgate/core/testing';

// The payment clean-up (paycleanup): a deferred link's reuse key digests the terms the provider is
// sent. The key is stored with the link's open session (`deferred_checkouts`), so a deployment that
// changes how the terms are built must digest them byte for byte as before: a session stored by
// the code before it is reused after it. The digests below were computed by that code (before the
// request was built once for both the digest and the provider) on this catalog and these ids.

const catalog: CatalogFile = {
  organisation: 'digest',
  test: false,
  products: [
    {
      key: 'notes',
      name: 'notes-app',
      displayName: 'Notes',
      currencies: ['USD', 'EUR'],
      capabilities: ['edit', 'export'],
      plans: [
        {
          key: 'team',
          displayName: 'Team',
          pricingType: 'paid',
          licenseType: 'perSeat',
          perSeatAmount: 2,
          interval: 'month',
          length: 1,
          prices: { USD: 12, EUR: 11 },
          capabilities: ['edit', 'export'],
        },
        {
          key: 'business',
          displayName: 'Business',
          pricingType: 'paid',
          licenseType: 'perSeat',
          perSeatAmount: 1,
          interval: 'month',
          length: 1,
          prices: { USD: 30, EUR: 28 },
          capabilities: ['edit', 'export'],
        },
      ],
    },
  ],
};

/** A core whose ids are counted (so the plans' ids, part of the terms, are those of the fixtures). */
async function world() {
  const core = createTestCore();
  let n = 0;
  Object.assign(core.deps.ids, { newId: () => `00000000-0000-4000-8000-${String(++n).padStart(12, '0')}` });
  const org = await core.apiKeys.ensureOrganisation(catalog.organisation);
  const { keys } = await core.importer.apply(catalog);
  const made: CheckoutRequest[] = [];
  const provider = core.payments as unknown as { checkoutLink: (r: CheckoutRequest) => Promise<{ url: string }> };
  provider.checkoutLink = async (request) => {
    made.push(request);
    return { url: `https://pay.example.test/checkout/${request.sessionId}` };
  };
  return { core, tenant: { organisationId: org.id, isTest: false }, keys, made };
}

const base = {
  successUrl: 'https://app.example.com/ok',
  cancelUrl: 'https://app.example.com/no',
  granteeId: 'gina',
  member: 'g@example.com',
};

const cases: { name: string; plan: string; digest: string; req: (keys: Record<string, string>) => CheckoutLinkRequest }[] = [
  {
    name: 'one plan, with options',
    plan: 'plans.notes.team',
    digest: 'gzrUMIKGkCVYk3ff5CIoeLxhlNqTPXWG7Gjp-Tpj5h8',
    req: () => ({ ...base, currency: 'EUR', customerEmail: 'g@example.com', quantity: 3 }),
  },
  {
    name: 'a cart (its extra charges are part of the terms)',
    plan: 'plans.notes.business',
    digest: 'mlB1BqaE0dMmrgWj_n5P8hiIMu7dCfSdJ8IS729dGTw',
    req: (keys) => ({ ...base, extraItems: [{ planId: keys['plans.notes.team'], quantity: 2, granteeId: null, groupId: null }] }),
  },
];

describe.each(cases)('a deferred link of $name', ({ plan, digest, req }) => {
  it('stores a new session under the digest the code before the clean-up computed', async () => {
    const { core, tenant, keys, made } = await world();
    await core.checkout.followDeferredLink(tenant, keys[plan], req(keys), 'link-1');
    expect(made).toHaveLength(1);
    const held = await core.uow.read((r) => r.checkoutSessions.lockDeferredLink(digest, core.clock.now()));
    expect(held.sessionId).toBe(made[0].sessionId);
  });

  it('reuses the open session the code before the clean-up stored under that digest', async () => {
    const { core, tenant, keys, made } = await world();
    // What the code before stored: the session (as the first follow made it) and the link's key.
    await core.checkout.followDeferredLink(tenant, keys[plan], req(keys), 'other-link');
    const first = (await core.uow.read((r) => r.checkoutSessions.get(made[0].sessionId))) as CheckoutSession;
    const stored: CheckoutSession = { ...first, id: '11111111-1111-4111-8111-111111111111' };
    await core.uow.run(async (r) => {
      await r.checkoutSessions.save(stored);
      await r.checkoutSessions.lockDeferredLink(digest, core.clock.now());
      await r.checkoutSessions.setDeferredLink(digest, stored.id);
    });
    const { url } = await core.checkout.followDeferredLink(tenant, keys[plan], req(keys), 'link-1');
    expect(url).toBe(`https://pay.example.test/checkout/${stored.id}`);
    // The provider is sent the stored session's terms, as the first follow sent them but for its id.
    expect(made[1]).toEqual({ ...made[0], sessionId: stored.id });
    expect((await core.uow.read((r) => r.checkoutSessions.lockDeferredLink(digest, core.clock.now()))).sessionId).toBe(stored.id);
  });
});
