import { randomUUID } from 'node:crypto';
import type { CheckoutLinkRequest, CheckoutRequest, CheckoutSession, Currency, Plan, PlanCurrency } from '../src';
import { aPlan, aProduct, createTestCore } from '@tollgate/core/testing';

// The payment clean-up (paycleanup): a deferred link's reuse key digests the terms the provider is
// sent. The key is stored with the link's open session (`deferred_checkouts`), so a deployment that
// changes how the terms are built must digest them byte for byte as before: a session stored by
// the code before it is reused after it. The digests below were computed by that code (before the
// request was built once for both the digest and the provider) on this catalog and these ids.
//
// The catalog is written through the repositories, each record with its id fixed (the product's
// and the plans' ids are part of the terms), so the digests do not depend on how many ids an
// importer draws. The ids are those the digests were first computed on (a catalog file's, imported
// with counted ids); the other ids (organisation, currencies, capabilities) are not in the terms.

const ids = {
  product: '00000000-0000-4000-8000-000000000004',
  team: '00000000-0000-4000-8000-000000000009',
  business: '00000000-0000-4000-8000-000000000014',
};

const usd: Currency = { id: randomUUID(), shortName: 'USD', longName: 'US Dollar', symbol: '$' };
const eur: Currency = { id: randomUUID(), shortName: 'EUR', longName: 'Euro', symbol: '€' };

/** Notes (USD by default, EUR), its per-seat monthly plans Team (2 seats at least) and Business. */
async function world() {
  const core = createTestCore();
  const org = await core.apiKeys.ensureOrganisation('digest');
  const tenant = { organisationId: org.id, isTest: false };
  const product = aProduct(tenant, {
    id: ids.product,
    key: 'notes',
    name: 'notes-app',
    displayName: 'Notes',
    paid: true,
    currencies: [
      { currencyId: usd.id, isDefault: true },
      { currencyId: eur.id, isDefault: false },
    ],
  });
  const prices = (key: string, inUsd: number, inEur: number): PlanCurrency[] => [
    { currencyId: usd.id, amountMinor: inUsd, paymentPlanId: `${key}_usd` },
    { currencyId: eur.id, amountMinor: inEur, paymentPlanId: `${key}_eur` },
  ];
  const perSeat = (id: string, key: string, displayName: string, perSeatAmount: number, currencies: PlanCurrency[]): Plan =>
    aPlan(product, {
      id,
      key,
      name: displayName,
      displayName,
      pricingType: 'paid',
      licenseType: 'perSeat',
      perSeatAmount,
      interval: 'month',
      length: 1,
      currencies,
      capabilityIds: product.capabilities.map((c) => c.id),
    });
  await core.uow.run(async (r) => {
    for (const c of [usd, eur]) await r.currencies.save(c);
    await r.products.save(product);
    await r.plans.save(perSeat(ids.team, 'team', 'Team', 2, prices('team', 1200, 1100)));
    await r.plans.save(perSeat(ids.business, 'business', 'Business', 1, prices('business', 3000, 2800)));
  });
  const made: CheckoutRequest[] = [];
  const provider = core.payments as unknown as { checkoutLink: (r: CheckoutRequest) => Promise<{ url: string }> };
  provider.checkoutLink = async (request) => {
    made.push(request);
    return { url: `https://pay.example.test/checkout/${request.sessionId}` };
  };
  return { core, tenant, made };
}

const base = {
  successUrl: 'https://app.example.com/ok',
  cancelUrl: 'https://app.example.com/no',
  granteeId: 'gina',
  member: 'g@example.com',
};

const cases: { name: string; plan: string; digest: string; req: CheckoutLinkRequest }[] = [
  {
    name: 'one plan, with options',
    plan: ids.team,
    digest: 'gzrUMIKGkCVYk3ff5CIoeLxhlNqTPXWG7Gjp-Tpj5h8',
    req: { ...base, currency: 'EUR', customerEmail: 'g@example.com', quantity: 3 },
  },
  {
    name: 'a cart (its extra charges are part of the terms)',
    plan: ids.business,
    digest: 'mlB1BqaE0dMmrgWj_n5P8hiIMu7dCfSdJ8IS729dGTw',
    req: { ...base, extraItems: [{ planId: ids.team, quantity: 2, granteeId: null, groupId: null }] },
  },
];

describe.each(cases)('a deferred link of $name', ({ plan, digest, req }) => {
  it('stores a new session under the digest the code before the clean-up computed', async () => {
    const { core, tenant, made } = await world();
    await core.checkout.followDeferredLink(tenant, plan, req, 'link-1');
    expect(made).toHaveLength(1);
    const held = await core.uow.read((r) => r.checkoutSessions.lockDeferredLink(digest, core.clock.now()));
    expect(held.sessionId).toBe(made[0].sessionId);
  });

  it('reuses the open session the code before the clean-up stored under that digest', async () => {
    const { core, tenant, made } = await world();
    // What the code before stored: the session (as the first follow made it) and the link's key.
    await core.checkout.followDeferredLink(tenant, plan, req, 'other-link');
    const first = (await core.uow.read((r) => r.checkoutSessions.get(made[0].sessionId))) as CheckoutSession;
    const stored: CheckoutSession = { ...first, id: '11111111-1111-4111-8111-111111111111' };
    await core.uow.run(async (r) => {
      await r.checkoutSessions.save(stored);
      await r.checkoutSessions.lockDeferredLink(digest, core.clock.now());
      await r.checkoutSessions.setDeferredLink(digest, stored.id);
    });
    const { url } = await core.checkout.followDeferredLink(tenant, plan, req, 'link-1');
    expect(url).toBe(`https://pay.example.test/checkout/${stored.id}`);
    // The provider is sent the stored session's terms, as the first follow sent them but for its id.
    expect(made[1]).toEqual({ ...made[0], sessionId: stored.id });
    expect((await core.uow.read((r) => r.checkoutSessions.lockDeferredLink(digest, core.clock.now()))).sessionId).toBe(stored.id);
  });
});
