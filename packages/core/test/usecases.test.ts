import { createHash, randomUUID } from 'node:crypto';
import fc from 'fast-check';
import {
  CatalogFileExport,
  ErrorCodes,
  canGrant,
  CLIENT_SCOPES,
  hashApiKey,
  hasScope,
  parseScopes,
  type DomainError,
  type PaymentProvider,
  type PlanEntry,
  type Tenant,
  type UnitOfWork,
} from '../src';
import {
  buyPlan,
  createTestCore,
  fakeFreeCheckout,
  seedSample,
  sampleCatalog,
  FaultInjectingUnitOfWork,
  InMemoryUnitOfWork,
  type TestCore,
} from '../src/testing';

const DAY = 86_400_000;

async function expectCode(p: Promise<unknown>, code: string) {
  await expect(p).rejects.toMatchObject({ code });
}

async function buy(core: TestCore, _tenant: Tenant, planId: string, quantity = 1, granteeId = 'alice') {
  return buyPlan(core, planId, quantity, granteeId);
}

describe('API keys', () => {
  it('creates a key shown once, stores only its hash, authenticates it and refuses it once revoked', async () => {
    const core = createTestCore();
    await core.apiKeys.ensureOrganisation('acme');
    const { plaintext, record } = await core.apiKeys.create({ organisation: 'acme', scopes: ['products:read'], isTest: true });
    expect(plaintext.startsWith('test_')).toBe(true);
    expect(JSON.stringify(record)).not.toContain(plaintext);
    expect((await core.apiKeys.authenticate(plaintext)).id).toBe(record.id);
    await expectCode(core.apiKeys.authenticate('test_wrong'), 'UNAUTHENTICATED');
    await expectCode(core.apiKeys.authenticate(undefined), 'UNAUTHENTICATED');
    await core.apiKeys.revoke(record.id);
    await expectCode(core.apiKeys.authenticate(plaintext), 'UNAUTHENTICATED');
    await expectCode(core.apiKeys.create({ organisation: 'acme', scopes: ['bogus:read'], isTest: false }), 'VALIDATION_FAILED');
    await expectCode(core.apiKeys.create({ organisation: 'nobody', scopes: [], isTest: false }), 'ORGANISATION_NOT_FOUND');
  });

  it('caches authenticated keys per instance while it hears the change feed: a revocation elsewhere takes effect at once', async () => {
    const uow = new InMemoryUnitOfWork();
    const core = createTestCore({ uow });
    const other = createTestCore({ uow });
    await other.listen();
    await core.apiKeys.ensureOrganisation('acme');
    const { plaintext, record } = await core.apiKeys.create({ organisation: 'acme', scopes: ['*'], isTest: false });
    await other.apiKeys.authenticate(plaintext);
    await core.apiKeys.revoke(record.id);
    await expectCode(core.apiKeys.authenticate(plaintext), 'UNAUTHENTICATED');
    await expectCode(other.apiKeys.authenticate(plaintext), 'UNAUTHENTICATED');
  });

  it('authenticates by a digest made once (hashApiKey) exactly as by the key itself', async () => {
    const core = createTestCore();
    await core.apiKeys.ensureOrganisation('acme');
    const { plaintext, record } = await core.apiKeys.create({ organisation: 'acme', scopes: ['*'], isTest: false });
    expect(hashApiKey(plaintext)).toBe(record.keyHash);
    expect((await core.apiKeys.authenticateHash(hashApiKey(plaintext))).id).toBe(record.id);
    await expectCode(core.apiKeys.authenticateHash(hashApiKey(`${plaintext}x`)), 'UNAUTHENTICATED');
    await core.apiKeys.revoke(record.id);
    await expectCode(core.apiKeys.authenticateHash(hashApiKey(plaintext)), 'UNAUTHENTICATED');
  });

  it('holds an authenticated key for lookups without waiting only while the feed is heard, and never once revoked elsewhere', async () => {
    const uow = new InMemoryUnitOfWork();
    const core = createTestCore({ uow });
    const other = createTestCore({ uow });
    await core.apiKeys.ensureOrganisation('acme');
    const { plaintext, record } = await core.apiKeys.create({ organisation: 'acme', scopes: ['*'], isTest: false });
    const digest = hashApiKey(plaintext);
    // Not hearing the feed: authenticated, but not held.
    await other.apiKeys.authenticateHash(digest);
    expect(other.apiKeys.heldKey(digest)).toBeUndefined();
    await other.listen();
    expect(other.apiKeys.heldKey(digest)).toBeUndefined();
    await other.apiKeys.authenticateHash(digest);
    expect(other.apiKeys.heldKey(digest)?.id).toBe(record.id);
    await core.apiKeys.revoke(record.id);
    expect(other.apiKeys.heldKey(digest)).toBeUndefined();
    await expectCode(other.apiKeys.authenticateHash(digest), 'UNAUTHENTICATED');
  });

  it('digests a key as it was always stored: the SHA-256 (hex) of its UTF-8 bytes, for any text presented', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (key) => {
        expect(hashApiKey(key)).toBe(createHash('sha256').update(key, 'utf8').digest('hex'));
      }),
      { numRuns: 500 },
    );
    expect(hashApiKey('\ud800')).toBe(createHash('sha256').update('\ud800', 'utf8').digest('hex'));
  });

  it('checks scopes: write implies read, * allows all', () => {
    expect(hasScope({ scopes: ['products:read'] }, 'products', 'read')).toBe(true);
    expect(hasScope({ scopes: ['products:read'] }, 'products', 'write')).toBe(false);
    expect(hasScope({ scopes: ['licenses:write'] }, 'licenses', 'read')).toBe(true);
    expect(hasScope({ scopes: ['*'] }, 'plans', 'write')).toBe(true);
    expect(hasScope({ scopes: ['plans:write'] }, 'products', 'read')).toBe(false);
  });

  it('checks the checks scope: held by checks:read, licenses:read|write and *; checks:read lists no licenses', () => {
    for (const scopes of [['checks:read'], ['licenses:read'], ['licenses:write'], ['*']] as const)
      expect(hasScope({ scopes: [...scopes] }, 'checks', 'read')).toBe(true);
    expect(hasScope({ scopes: ['products:read'] }, 'checks', 'read')).toBe(false);
    expect(hasScope({ scopes: ['checks:read'] }, 'licenses', 'read')).toBe(false);
    expect(CLIENT_SCOPES).toEqual(['products:read', 'plans:read', 'pricing-tables:read', 'checks:read']);
    expect(canGrant({ scopes: ['licenses:read'] }, 'checks:read')).toBe(true);
    expect(canGrant({ scopes: ['checks:read'] }, 'licenses:read')).toBe(false);
    expect(parseScopes(['checks:read'])).toEqual(['checks:read']);
    expect(() => parseScopes(['checks:write'])).toThrow(/unknown scope checks:write/);
  });
});

describe('catalog file import', () => {
  it('creates everything by key and changes nothing when applied again', async () => {
    const core = createTestCore();
    await core.apiKeys.ensureOrganisation('acme');
    const first = await core.importer.apply(sampleCatalog('acme'));
    expect(first.created).toBeGreaterThan(0);
    const team = (
      await core.queries.getPlan(
        { organisationId: (await core.apiKeys.ensureOrganisation('acme')).id, isTest: false },
        first.keys['plans.notes.team'],
      )
    ).plan;
    expect(team.lineItems).toHaveLength(1);
    const again = await core.importer.apply(sampleCatalog('acme'));
    expect(again).toMatchObject({ created: 0, updated: 0 });
    const teamAgain = (
      await core.queries.getPlan(
        { organisationId: (await core.apiKeys.ensureOrganisation('acme')).id, isTest: false },
        first.keys['plans.notes.team'],
      )
    ).plan;
    expect(teamAgain.lineItems).toEqual(team.lineItems);
    expect(again.keys).toEqual(first.keys);
    const changed = sampleCatalog('acme');
    (changed.products as NonNullable<typeof changed.products>)[0].displayName = 'Notes 2';
    expect((await core.importer.apply(changed)).updated).toBe(1);
  });

  it('exports the same file back: re-importing the export changes nothing, and it rebuilds the catalog elsewhere', async () => {
    const core = createTestCore();
    await core.apiKeys.ensureOrganisation('acme');
    await core.importer.apply(sampleCatalog('acme'));
    const exporter = new CatalogFileExport(core.deps);
    const file = await exporter.export('acme');
    expect(file.products?.[0].plans?.map((p) => p.key)).toEqual(['free', 'team', 'business', 'metered', 'metered-pro']);
    expect(file.products?.[0].plans?.[1]).toMatchObject({
      prices: { USD: 12, EUR: 11 },
      features: { projects: 'unlimited', theme: 'dark', sso: 'true' },
      perSeatAmount: 2,
    });
    expect(await core.importer.apply(file)).toMatchObject({ created: 0, updated: 0 });
    await core.apiKeys.ensureOrganisation('copy');
    await core.importer.apply({ ...file, organisation: 'copy' });
    expect({ ...(await exporter.export('copy')), organisation: 'acme' }).toEqual(file);
  });

  it('refuses unknown references in one transaction, leaving nothing behind', async () => {
    const core = createTestCore();
    await core.apiKeys.ensureOrganisation('acme');
    const bad = sampleCatalog('acme');
    (bad.products as NonNullable<typeof bad.products>)[0].plans?.push({ key: 'broken', pricingType: 'free', capabilities: ['nope'] });
    await expectCode(core.importer.apply(bad), 'VALIDATION_FAILED');
    const org = await core.apiKeys.ensureOrganisation('acme');
    expect(await core.queries.listProducts({ organisationId: org.id, isTest: false })).toEqual([]);
  });

  it('refuses a license type that does not exist and a price in a currency the product does not declare', async () => {
    const core = createTestCore();
    await core.apiKeys.ensureOrganisation('acme');
    const seat = sampleCatalog('acme');
    const plans = () => (seat.products as NonNullable<typeof seat.products>)[0].plans as NonNullable<PlanEntry[]>;
    plans()[1].licenseType = 'seat' as PlanEntry['licenseType'];
    await expect(core.importer.apply(seat)).rejects.toMatchObject({
      code: 'VALIDATION_FAILED',
      details: [{ property: 'plans.team.licenseType', error: 'must be one of user, perSeat, board, customId, got seat' }],
    });
    const yen = sampleCatalog('acme');
    const team = (yen.products as NonNullable<typeof yen.products>)[0].plans?.[1] as PlanEntry;
    team.prices = { ...team.prices, JPY: 1500 };
    await expect(core.importer.apply(yen)).rejects.toMatchObject({
      details: [
        {
          property: 'plans.team.prices.JPY',
          error: "JPY is not one of the product's currencies (USD, EUR); add it to the product's currencies",
        },
      ],
    });
    const org = await core.apiKeys.organisation('acme');
    expect(await core.queries.listProducts({ organisationId: org.id, isTest: false })).toEqual([]);
  });

  it('dry run: says what would change, record by record, and writes nothing', async () => {
    const core = createTestCore();
    const org = await core.apiKeys.ensureOrganisation('acme');
    const dry = await core.importer.apply(sampleCatalog('acme'), { dryRun: true });
    expect(dry.created).toBeGreaterThan(0);
    expect(dry.changes[0]).toEqual({ key: 'products.notes', change: 'created' });
    expect(dry.changes).toContainEqual({ key: 'plans.notes.team', change: 'created' });
    expect(dry.changes).toHaveLength(dry.created);
    expect(await core.queries.listProducts({ organisationId: org.id, isTest: false })).toEqual([]);
    await core.importer.apply(sampleCatalog('acme'));
    const changed = sampleCatalog('acme');
    (changed.products as NonNullable<typeof changed.products>)[0].displayName = 'Notes 2';
    expect((await core.importer.apply(changed, { dryRun: true })).changes).toEqual([{ key: 'products.notes', change: 'updated' }]);
    expect((await core.queries.listProducts({ organisationId: org.id, isTest: false }))[0].displayName).not.toBe('Notes 2');
  });
});

describe('catalog queries and tenancy', () => {
  it('serves products, plans, features, currencies, capabilities and pricing tables', async () => {
    const core = createTestCore();
    const { tenant, keys } = await seedSample(core, 'acme');
    const productId = keys['products.notes'];
    expect((await core.queries.listProducts(tenant)).map((p) => p.name)).toEqual(['notes-app']);
    expect((await core.queries.listPlans(tenant, productId)).map((p) => p.key)).toEqual([
      'free',
      'team',
      'business',
      'metered',
      'metered-pro',
    ]);
    expect((await core.queries.productFeatures(tenant, productId)).map((f) => f.key)).toEqual(['projects', 'theme', 'sso']);
    const currencies = await core.queries.productCurrencies(tenant, productId);
    expect(currencies.map((c) => [c.currency.shortName, c.link.isDefault])).toEqual([
      ['USD', true],
      ['EUR', false],
    ]);
    const planFeatures = await core.queries.planFeatures(tenant, keys['plans.notes.team']);
    expect(planFeatures.map((f) => [f.feature.key, f.value.value, f.value.isUnlimited, f.enumOption?.name ?? null])).toEqual([
      ['projects', '', true, null],
      ['theme', '', false, 'dark'],
      ['sso', 'true', false, null],
    ]);
    expect((await core.queries.planCurrencies(tenant, keys['plans.notes.team'])).map((c) => c.link.amountMinor)).toEqual([1200, 1100]);
    expect((await core.queries.planCapabilities(tenant, keys['plans.notes.team'])).map((c) => c.capability.name)).toEqual([
      'edit',
      'export',
    ]);
    const table = await core.queries.getPricingTable(tenant, keys['pricingTables.notes.main']);
    expect(table.plans.map((p) => p.key)).toEqual(['free', 'team', 'business']);
    expect(table.table.featuredPlanId).toBe(keys['plans.notes.team']);
  });

  it("answers FORBIDDEN for another organisation's records, NOT_FOUND for the other mode's and for unknown ids", async () => {
    const core = createTestCore();
    const { keys } = await seedSample(core, 'acme');
    const other = await core.apiKeys.ensureOrganisation('other');
    const acme = await core.apiKeys.ensureOrganisation('acme');
    await expectCode(core.queries.getProduct({ organisationId: other.id, isTest: false }, keys['products.notes']), ErrorCodes.FORBIDDEN);
    await expectCode(core.queries.getPlan({ organisationId: other.id, isTest: false }, keys['plans.notes.team']), ErrorCodes.FORBIDDEN);
    await expectCode(core.queries.getProduct({ organisationId: acme.id, isTest: true }, keys['products.notes']), ErrorCodes.NOT_FOUND);
    await expectCode(core.queries.getPlan({ organisationId: acme.id, isTest: true }, keys['plans.notes.team']), ErrorCodes.NOT_FOUND);
    await expectCode(core.queries.getProduct({ organisationId: acme.id, isTest: false }, randomUUID()), ErrorCodes.NOT_FOUND);
  });
});

describe('subscriptions', () => {
  async function world(planKey = 'team', quantity = 3) {
    const core = createTestCore();
    const seeded = await seedSample(core, 'acme');
    const { subscription } = await buy(core, seeded.tenant, seeded.keys[`plans.notes.${planKey}`], quantity);
    return { core, ...seeded, subscription };
  }

  it('changes plan in place with the provider, prorated as asked', async () => {
    const { core, tenant, keys, subscription } = await world();
    const out = await core.subscriptions.changePlan(tenant, subscription.id, keys['plans.notes.business'], 'always_invoice');
    expect(out.kind).toBe('moved');
    expect((await core.subscriptions.get(tenant, subscription.id)).subscription.planId).toBe(keys['plans.notes.business']);
    expect(core.payments.calls).toContainEqual(
      expect.objectContaining({ op: 'changePlan', request: expect.objectContaining({ proration: 'always_invoice' }) }),
    );
    const licenses = await core.licenses.list(tenant, { subscriptionId: subscription.id });
    expect(licenses.every((l) => l.planId === keys['plans.notes.business'])).toBe(true);
  });

  it('replaces a usage-based subscription on plan change', async () => {
    const { core, tenant, keys, subscription } = await world('metered', 1);
    // A provider whose renewals Tollgate's sweep makes (the sandbox): it bills a subscription started here.
    (core.payments as PaymentProvider).renewedBySweep = () => ({});
    const out = await core.subscriptions.changePlan(tenant, subscription.id, keys['plans.notes.metered-pro'], 'create_prorations');
    if (out.kind !== 'replaced') throw new Error('expected replacement');
    expect((await core.subscriptions.get(tenant, subscription.id)).subscription.status).toBe('CANCELED');
    expect((await core.subscriptions.get(tenant, out.created.id)).subscription).toMatchObject({
      status: 'ACTIVE',
      planId: keys['plans.notes.metered-pro'],
    });
    expect(await core.licenses.count(tenant, { subscriptionId: out.created.id })).toEqual({ count: 1, assigned: 1, unassigned: 0 });
  });

  it('refuses a move the target cannot bill right: no price in the currency, a paid flat plan with seats, a per-seat plan below its minimum', async () => {
    const core = createTestCore();
    const org = await core.apiKeys.ensureOrganisation('acme');
    const tenant = { organisationId: org.id, isTest: false };
    const catalog = sampleCatalog('acme');
    const [product] = catalog.products ?? [];
    const extra: PlanEntry[] = [
      {
        key: 'solo',
        displayName: 'Solo',
        pricingType: 'paid',
        licenseType: 'user',
        interval: 'month',
        length: 1,
        prices: { USD: 20 },
        capabilities: ['edit'],
      },
      {
        key: 'crew',
        displayName: 'Crew',
        pricingType: 'paid',
        licenseType: 'perSeat',
        perSeatAmount: 5,
        interval: 'month',
        length: 1,
        prices: { USD: 9, EUR: 8 },
        capabilities: ['edit'],
      },
    ];
    const { keys } = await core.importer.apply({ ...catalog, products: [{ ...product, plans: [...(product.plans ?? []), ...extra] }] });
    const buyIn = (planKey: string, currency: string, quantity: number) =>
      core.checkout.completePurchase({
        planId: keys[`plans.notes.${planKey}`],
        member: 'buyer@example.com',
        email: 'buyer@example.com',
        granteeId: `g-${planKey}-${currency}-${quantity}`,
        quantity,
        currency,
        paymentProvider: 'fake',
        paymentSubscriptionId: null,
        paymentCustomerId: null,
      });
    const move = (id: string, planKey: string) => core.subscriptions.changePlan(tenant, id, keys[`plans.notes.${planKey}`], 'none');
    const planOf = async (id: string) => (await core.subscriptions.get(tenant, id)).subscription.planId;
    // Bought in euros: Solo has no euro price, so it would cost nothing.
    const { subscription: inEuros } = await buyIn('business', 'EUR', 1);
    await expect(move(inEuros.id, 'solo')).rejects.toMatchObject({
      code: 'CHECKOUT_CURRENCY_NOT_SUPPORTED',
      details: [expect.objectContaining({ property: 'planUuid' })],
    });
    // Three seats to a flat plan would be billed three times its price.
    const { subscription: team } = await buyIn('team', 'USD', 3);
    await expect(move(team.id, 'solo')).rejects.toMatchObject({
      code: 'VALIDATION_FAILED',
      details: [expect.objectContaining({ property: 'planUuid' })],
    });
    // Three seats are below Crew's five.
    await expect(move(team.id, 'crew')).rejects.toMatchObject({ code: 'SEATS_BELOW_MINIMUM' });
    expect(await planOf(team.id)).toBe(keys['plans.notes.team']);
    expect(core.payments.calls.filter((c) => c.op === 'changePlan')).toEqual([]);
    // What fits moves: one seat to the flat plan, seats to a free plan, six seats to Crew.
    const { subscription: single } = await buyIn('business', 'USD', 1);
    await move(single.id, 'solo');
    expect(await planOf(single.id)).toBe(keys['plans.notes.solo']);
    await move(team.id, 'free');
    expect(await planOf(team.id)).toBe(keys['plans.notes.free']);
    const { subscription: six } = await buyIn('team', 'EUR', 6);
    await move(six.id, 'crew');
    expect(await planOf(six.id)).toBe(keys['plans.notes.crew']);
  });

  it('records a paid checkout even when its price left the plan after the link was made (refused only when a link is made)', async () => {
    const core = createTestCore();
    const { tenant, keys } = await seedSample(core, 'acme');
    const req = {
      successUrl: 'https://app.example.com/ok',
      cancelUrl: 'https://app.example.com/no',
      granteeId: 'eve',
      member: 'eve@example.com',
      currency: 'EUR',
    };
    const { sessionId } = await core.checkout.sessionLink(tenant, keys['plans.notes.business'], req);
    // The vendor drops the euro price while the customer is at the provider's page.
    await core.uow.run(async (r) => {
      const plan = (await r.plans.get(keys['plans.notes.business']))!;
      const currencies = await r.currencies.list();
      const eur = currencies.find((c) => c.shortName === 'EUR')!;
      await r.plans.save({ ...plan, currencies: plan.currencies.filter((c) => c.currencyId !== eur.id) });
    });
    const done = await core.checkout.completeCheckout(sessionId);
    expect(done).toMatchObject({ status: 'completed', subscription: { planId: keys['plans.notes.business'], currency: 'EUR' } });
    // A new link in euros is refused now.
    await expect(core.checkout.sessionLink(tenant, keys['plans.notes.business'], req)).rejects.toMatchObject({
      code: 'CHECKOUT_CURRENCY_NOT_SUPPORTED',
    });
  });

  it('refuses a change of billing interval on a provider whose renewals Tollgate makes; a provider with its own periods takes it', async () => {
    const core = createTestCore({
      freeCheckout: fakeFreeCheckout(),
    });
    const org = await core.apiKeys.ensureOrganisation('acme');
    const tenant = { organisationId: org.id, isTest: false };
    const catalog = sampleCatalog('acme');
    const [product] = catalog.products ?? [];
    const yearly: PlanEntry = {
      key: 'business-yearly',
      displayName: 'Business yearly',
      pricingType: 'paid',
      licenseType: 'perSeat',
      perSeatAmount: 1,
      interval: 'year',
      length: 1,
      prices: { USD: 300, EUR: 280 },
      capabilities: ['edit'],
    };
    const { keys } = await core.importer.apply({ ...catalog, products: [{ ...product, plans: [...(product.plans ?? []), yearly] }] });
    const { subscription: s } = await buy(core, tenant, keys['plans.notes.business'], 1);
    // The sandbox (renewals made here) would keep the month's end and prorate the year's price over it.
    (core.payments as PaymentProvider).renewedBySweep = () => ({});
    await expect(
      core.subscriptions.changePlan(tenant, s.id, keys['plans.notes.business-yearly'], 'create_prorations'),
    ).rejects.toMatchObject({
      code: 'VALIDATION_FAILED',
      details: [expect.objectContaining({ property: 'planUuid' })],
    });
    expect(core.payments.calls.filter((c) => c.op === 'changePlan')).toEqual([]);
    // Nor on the free checkout (renewals made here too), from a free plan.
    const { subscription: free } = await buyPlan(core, keys['plans.notes.free'], 1, 'frida', 'none');
    await expect(core.subscriptions.changePlan(tenant, free.id, keys['plans.notes.business-yearly'], 'none')).rejects.toMatchObject({
      code: 'VALIDATION_FAILED',
    });
    // A provider that bills on its own periods (Stripe) resets the cycle itself.
    delete (core.payments as PaymentProvider).renewedBySweep;
    await core.subscriptions.changePlan(tenant, s.id, keys['plans.notes.business-yearly'], 'create_prorations');
    expect((await core.subscriptions.get(tenant, s.id)).subscription.planId).toBe(keys['plans.notes.business-yearly']);
  });

  it("completes for the sandbox's pages only what they may sell: not a free plan's session once the plan is paid at another provider", async () => {
    const core = createTestCore({
      freeCheckout: fakeFreeCheckout(),
    });
    const { tenant, keys } = await seedSample(core, 'acme');
    const req = {
      successUrl: 'https://app.example.com/ok',
      cancelUrl: 'https://app.example.com/no',
      granteeId: 'fred',
      member: 'fred@example.com',
    };
    const { sessionId } = await core.checkout.sessionLink(tenant, keys['plans.notes.free'], req);
    // The vendor makes the plan paid (at the payment provider, 'fake' here, Stripe in production) while the link is open.
    await core.uow.run(async (r) => {
      const plan = (await r.plans.get(keys['plans.notes.free']))!;
      const team = (await r.plans.get(keys['plans.notes.team']))!;
      await r.plans.save({ ...plan, pricingType: 'paid', currencies: team.currencies });
    });
    await expect(core.checkout.completeCheckout(sessionId, { via: ['sandbox', 'none'] })).rejects.toMatchObject({
      code: 'CHECKOUT_SESSION_NOT_FOUND',
    });
    expect((await core.uow.read((r) => r.checkoutSessions.get(sessionId)))?.status).toBe('open');
    // A deferred link followed again reuses its session only while the plan goes to the same provider.
    const linkReq = { ...req, granteeId: 'gina' };
    const first = await core.checkout.followDeferredLink(tenant, keys['plans.notes.team'], linkReq, 'link-1');
    expect(await core.checkout.followDeferredLink(tenant, keys['plans.notes.team'], linkReq, 'link-1')).toEqual(first);
    expect(first.url).toMatch(/^https:\/\/pay\.example\.test\/checkout\//);
    await core.uow.run(async (r) => {
      const team = (await r.plans.get(keys['plans.notes.team']))!;
      await r.plans.save({ ...team, pricingType: 'free' });
    });
    // A new session, at the free checkout (the deferred link's guard is keyed on the link and its terms).
    expect(await core.checkout.followDeferredLink(tenant, keys['plans.notes.team'], linkReq, 'link-1')).toEqual({
      url: 'http://localhost/free',
    });
    // The provider it goes to now completes it (its own webhook, no `via`).
    expect((await core.checkout.completeCheckout(sessionId)).subscription.paymentProvider).toBe(core.payments.name);
  });

  it('refuses an archived target plan, and leaves everything unchanged when the provider fails', async () => {
    const { core, tenant, keys, subscription } = await world();
    await core.plans.archivePlan(tenant, keys['plans.notes.business']);
    await expectCode(core.subscriptions.changePlan(tenant, subscription.id, keys['plans.notes.business'], 'none'), 'PLAN_ARCHIVED');
    const unarchived = keys['plans.notes.free'];
    core.payments.failNext = new Error('provider down');
    await expect(core.subscriptions.changePlan(tenant, subscription.id, unarchived, 'none')).rejects.toThrow('provider down');
    expect((await core.subscriptions.get(tenant, subscription.id)).subscription.planId).toBe(keys['plans.notes.team']);
  });

  it('runs the lifecycle: cancel at end, reactivate, cancel at end, sweep at period end', async () => {
    const { core, tenant, subscription } = await world();
    const scheduled = await core.subscriptions.cancel(tenant, subscription.id, 'end');
    expect(scheduled.cancelAtPeriodEnd).toBe(true);
    expect((await core.subscriptions.reactivate(tenant, subscription.id)).cancelAtPeriodEnd).toBe(false);
    await core.subscriptions.cancel(tenant, subscription.id, 'end');
    core.clock.advanceDays(40);
    expect((await core.subscriptions.get(tenant, subscription.id)).subscription.status).toBe('CANCELED');
    await expectCode(core.subscriptions.reactivate(tenant, subscription.id), 'SUBSCRIPTION_NOT_REACTIVATABLE');
    expect(await core.sweeps.cancellations()).toBe(1);
    expect(await core.sweeps.cancellations()).toBe(0);
    expect((await core.licenses.list(tenant, { subscriptionId: subscription.id })).every((l) => l.status === 'CANCELED')).toBe(true);
  });

  it('cancels now, after which links other than the portal are refused', async () => {
    const { core, tenant, subscription } = await world();
    await core.subscriptions.cancel(tenant, subscription.id, 'now');
    await expectCode(core.subscriptions.cancel(tenant, subscription.id, 'now'), 'SUBSCRIPTION_CANCELED');
    await expectCode(core.subscriptions.link(tenant, subscription.id, 'updatePayment'), 'SUBSCRIPTION_CANCELED');
    expect((await core.subscriptions.link(tenant, subscription.id, 'portal')).url).toContain(subscription.id);
  });

  it('lists switchable plans: same product, active, not archived, not the current one, and only what change-plan takes', async () => {
    const { core, tenant, keys, subscription } = await world();
    await core.plans.archivePlan(tenant, keys['plans.notes.metered']);
    const { plans } = await core.subscriptions.switchablePlans(tenant, subscription.id);
    // Metered Pro is a flat paid plan: with the subscription's 3 seats change-plan refuses it (billed 3 times).
    expect(plans.map((p) => p.key).sort()).toEqual(['business', 'free']);
  });

  it('queues seat changes as events that the worker applies exactly once', async () => {
    const { core, tenant, subscription } = await world('team', 3);
    const inc = await core.seats.request(tenant, subscription.id, { type: 'seats.increment', count: 2, proration: 'none' });
    const dec = await core.seats.request(tenant, subscription.id, { type: 'seats.decrement', count: 1, proration: 'none' });
    expect(core.events.wakes).toBe(2);
    expect((await core.worker.get(tenant, inc.id)).status).toBe('queued');
    expect(await core.worker.drain()).toBe(2);
    expect(await core.worker.drain()).toBe(0);
    expect((await core.worker.get(tenant, inc.id)).status).toBe('success');
    expect((await core.worker.get(tenant, dec.id)).status).toBe('success');
    expect((await core.subscriptions.get(tenant, subscription.id)).subscription.quantity).toBe(4);
    expect(await core.licenses.count(tenant, { subscriptionId: subscription.id })).toEqual({ count: 4, assigned: 1, unassigned: 3 });
  });

  it('applies a number of seats asked for as the difference when applied: a repeated request is no second change', async () => {
    const { core, tenant, subscription } = await world('team', 3);
    const calls = core.payments.calls.length;
    // Two clients (or a retry) ask for 5 seats before the worker runs: 5 seats, not 7.
    const first = await core.seats.requestQuantity(tenant, subscription.id, 5, 'none');
    const again = await core.seats.requestQuantity(tenant, subscription.id, 5, 'none');
    expect([first?.type, again?.type]).toEqual(['seats.increment', 'seats.increment']);
    expect(await core.worker.drain()).toBe(2);
    expect((await core.worker.get(tenant, again!.id)).status).toBe('success');
    expect((await core.subscriptions.get(tenant, subscription.id)).subscription.quantity).toBe(5);
    expect(await core.licenses.count(tenant, { subscriptionId: subscription.id })).toMatchObject({ count: 5 });
    // The provider heard the number once; the repeat found it so.
    expect(core.payments.calls.slice(calls)).toMatchObject([{ op: 'changeSeats', quantity: 5 }]);
    // Already so: nothing queued. Fewer: the difference at apply time.
    expect(await core.seats.requestQuantity(tenant, subscription.id, 5, 'none')).toBeNull();
    await core.seats.requestQuantity(tenant, subscription.id, 4, 'none');
    await core.seats.requestQuantity(tenant, subscription.id, 4, 'none');
    await core.worker.drain();
    expect((await core.subscriptions.get(tenant, subscription.id)).subscription.quantity).toBe(4);
  });

  it('refuses impossible decrements at request time, queuing nothing', async () => {
    const { core, tenant, subscription } = await world('team', 2);
    await expectCode(
      core.seats.request(tenant, subscription.id, { type: 'seats.decrement', count: 1, proration: 'none' }),
      'SEATS_BELOW_MINIMUM',
    );
    await expectCode(
      core.seats.request(tenant, subscription.id, { type: 'seats.decrement', count: 2, proration: 'none' }),
      'SEATS_EXCEED_UNASSIGNED',
    );
    expect(await core.worker.drain()).toBe(0);
  });

  it('records a refusal found when applying as failed, and retries provider faults with backoff', async () => {
    const { core, tenant, subscription } = await world('team', 4);
    const a = await core.seats.request(tenant, subscription.id, { type: 'seats.decrement', count: 2, proration: 'none' });
    const b = await core.seats.request(tenant, subscription.id, { type: 'seats.decrement', count: 1, proration: 'none' });
    await core.worker.drain();
    expect((await core.worker.get(tenant, a.id)).status).toBe('success');
    const failed = await core.worker.get(tenant, b.id);
    expect(failed).toMatchObject({ status: 'failed', attempts: 1 });
    expect(failed.lastError).toMatch(/SEATS_BELOW_MINIMUM/);

    const c = await core.seats.request(tenant, subscription.id, { type: 'seats.increment', count: 1, proration: 'none' });
    core.payments.failNext = new Error('timeout');
    await core.worker.processNext();
    // The provider's own text stays in the log; the event carries a stable code and a safe message.
    expect(await core.worker.get(tenant, c.id)).toMatchObject({ status: 'pending', attempts: 1, errorCode: 'INTERNAL' });
    expect((await core.worker.get(tenant, c.id)).lastError).not.toMatch(/timeout/);
    expect(await core.worker.processNext()).toBe(false); // not due yet
    core.clock.advanceDays(1);
    await core.worker.processNext();
    expect((await core.worker.get(tenant, c.id)).status).toBe('success');
    expect((await core.subscriptions.get(tenant, subscription.id)).subscription.quantity).toBe(3);
  });
});

describe('licenses', () => {
  it('creates ad hoc licenses all or nothing', async () => {
    const core = createTestCore();
    const { tenant, keys } = await seedSample(core, 'acme');
    const created = await core.licenses.createAdHoc(tenant, [
      { planUuid: keys['plans.notes.free'], member: 'm@example.com', granteeId: 'alice' },
      { planUuid: keys['plans.notes.team'], member: 'm@example.com', granteeId: null },
    ]);
    expect(created.licenses.map((l) => l.status)).toEqual(['ACTIVE', 'EVALUATION']);
    // The capabilities of their plans come with them (the views need no read after the commit).
    expect(created.licenses.map((l) => (created.capabilities.get(l.planId) ?? []).map((c) => c.name).sort())).toEqual([
      ['edit'],
      ['edit', 'export'],
    ]);
    await expectCode(
      core.licenses.createAdHoc(tenant, [
        { planUuid: keys['plans.notes.free'], member: 'm', granteeId: 'x' },
        { planUuid: keys['plans.notes.business'], member: 'm', granteeId: 'y' },
      ]),
      'PLAN_NOT_FREE_OR_EVALUATION',
    );
    expect(await core.licenses.count(tenant, {})).toEqual({ count: 2, assigned: 1, unassigned: 1 });
  });

  it('creates an ad hoc license with its end in the same transaction, as one whose end was set afterwards', async () => {
    const inner = new InMemoryUnitOfWork();
    const calls: string[] = [];
    const counting: UnitOfWork = {
      run: (work) => (calls.push('run'), inner.run(work)),
      read: (work) => (calls.push('read'), inner.read(work)),
    };
    const core = createTestCore({ uow: counting });
    const { tenant, keys } = await seedSample(core, 'acme');
    const end = new Date(core.clock.now().getTime() + 3 * 86_400_000);
    calls.length = 0;
    const made = await core.licenses.createAdHoc(tenant, [
      { planUuid: keys['plans.notes.free'], member: 'm', granteeId: 'ends', endTime: end },
      { planUuid: keys['plans.notes.team'], member: 'm', granteeId: 'evaluates', endTime: end },
    ]);
    expect(calls).toEqual(['run']);
    // The same record as a license created without an end whose end is then set (v2 PUT /licenses/:uuid).
    const [other] = (await core.licenses.createAdHoc(tenant, [{ planUuid: keys['plans.notes.free'], member: 'm', granteeId: 'ends' }]))
      .licenses;
    const [set] = (await core.licenses.update(tenant, other.id, { granteeId: 'ends', endTime: end })).licenses;
    expect(made.licenses[0]).toEqual({ ...set, id: made.licenses[0].id });
    expect(await core.licenses.get(tenant, made.licenses[0].id)).toEqual(made.licenses[0]);
    // An evaluation's end is the one asked, as setting it afterwards would make it.
    expect(made.licenses[1]).toMatchObject({ status: 'EVALUATION', endTime: end });
    // A past end is refused naming endTime, and the batch makes none.
    const before = (await core.licenses.count(tenant, {})).count;
    await expect(
      core.licenses.createAdHoc(tenant, [
        { planUuid: keys['plans.notes.free'], member: 'm', granteeId: 'x' },
        { planUuid: keys['plans.notes.free'], member: 'm', granteeId: 'y', endTime: core.clock.now() },
      ]),
    ).rejects.toMatchObject({ code: 'VALIDATION_FAILED', details: [{ property: 'endTime', error: 'must lie in the future' }] });
    expect((await core.licenses.count(tenant, {})).count).toBe(before);
    // The check grants until the end and not after it.
    const check = () =>
      core.checks.check(tenant, { productId: keys['products.notes'], granteeIds: ['ends'], graceDays: 0, encoding: 'der' });
    expect((await check())?.capabilities).toEqual(['edit']);
    core.clock.set(new Date(end.getTime() + 1));
    expect(await check()).toBeNull();
  });

  it('batch-updates grantees; an unknown license fails the batch and changes nothing', async () => {
    const core = createTestCore();
    const { tenant, keys } = await seedSample(core, 'acme');
    const {
      licenses: [l],
    } = await core.licenses.createAdHoc(tenant, [{ planUuid: keys['plans.notes.free'], member: 'm', granteeId: null }]);
    await expectCode(
      core.licenses.batchUpdate(tenant, [
        { uuid: l.id, granteeId: 'bob' },
        { uuid: randomUUID(), granteeId: 'x' },
      ]),
      'NOT_FOUND',
    );
    expect((await core.licenses.list(tenant, {}))[0].granteeId).toBeNull();
    const updated = await core.licenses.batchUpdate(tenant, [{ uuid: l.id, granteeId: 'bob' }]);
    expect(updated.licenses[0].granteeId).toBe('bob');
    expect(updated.capabilities.get(l.planId)?.length).toBeGreaterThan(0);
  });

  it('writes licenses and reads the capabilities their answer shows in one transaction, nothing after it', async () => {
    const inner = new InMemoryUnitOfWork();
    const calls: string[] = [];
    const counting: UnitOfWork = {
      run: (work) => (calls.push('run'), inner.run(work)),
      read: (work) => (calls.push('read'), inner.read(work)),
    };
    const core = createTestCore({ uow: counting });
    const { tenant, keys } = await seedSample(core, 'acme');
    calls.length = 0;
    const created = await core.licenses.createAdHoc(tenant, [{ planUuid: keys['plans.notes.free'], member: 'm', granteeId: 'ann' }]);
    const id = created.licenses[0].id;
    await core.licenses.batchUpdate(tenant, [{ uuid: id, granteeId: 'bob' }]);
    const changed = await core.licenses.update(tenant, id, { granteeId: 'cat' });
    expect(calls).toEqual(['run', 'run', 'run']);
    expect(
      changed.capabilities
        .get(changed.licenses[0].planId)
        ?.map((c) => c.name)
        .sort(),
    ).toEqual(['edit']);
  });

  it('checks capabilities with a signature, and answers null when there are none', async () => {
    const core = createTestCore();
    const { tenant, keys } = await seedSample(core, 'acme');
    await buy(core, tenant, keys['plans.notes.team'], 2, 'alice');
    const check = (granteeIds: string[], graceDays = 0) =>
      core.checks.check(tenant, { productId: keys['products.notes'], granteeIds, graceDays, encoding: 'der' });
    const result = await check(['alice']);
    expect(result).toMatchObject({ capabilities: ['edit', 'export'], capsHashed: 'edit,export' });
    expect(result?.signature).toMatch(/^[0-9a-f]{64}$/);
    expect(await check(['nobody'])).toBeNull();
    await expectCode(check(['alice'], -1), 'CHECK_GRACE_INVALID');
    await expectCode(check([]), 'VALIDATION_FAILED');
  });

  it("refuses a check inside an idempotent request's transaction: nothing it would read there is cached for others", async () => {
    const core = createTestCore();
    await core.listen(); // the entitlement cache live, as on a server
    const { tenant, keys } = await seedSample(core, 'acme');
    const check = (granteeIds: string[]) =>
      core.checks.check(tenant, { productId: keys['products.notes'], granteeIds, graceDays: 0, encoding: 'der' });
    const scope = { ...tenant, key: 'k-ghost', route: 'POST /api/x' };
    await expect(
      core.idempotency.perform(scope, 'fp', async () => {
        await core.licenses.createAdHoc(tenant, [{ planUuid: keys['plans.notes.team'], member: 'm', granteeId: 'ghost' }]);
        await check(['ghost']);
        return { status: 201 };
      }),
    ).rejects.toThrow("a capability check cannot run inside an idempotent request's transaction");
    // The license rolled back with the request, and no check answers from it.
    expect(await check(['ghost'])).toBeNull();
  });

  it('signs without waiting only with the key held while the change feed is heard: the signature sign gives, then the rotated key', async () => {
    const core = createTestCore();
    const { tenant } = await seedSample(core, 'acme');
    const org = tenant;
    // Not hearing the feed: nothing is held, so nothing is signed without the database.
    await core.signing.sign(org, 'edit,export');
    expect(core.signing.signHeld(org, 'edit,export')).toBeUndefined();
    await core.listen();
    const signed = await core.signing.sign(org, 'edit,export', { encoding: 'p1363' });
    expect(core.signing.signHeld(org, 'edit,export', 'p1363')).toEqual(signed);
    expect(core.signing.signHeld(org, 'edit')).toEqual(await core.signing.sign(org, 'edit'));
    // A rotation drops the held key: the next signature is the new key's, once `sign` has loaded it.
    const rotated = await core.signing.rotate(org);
    expect(core.signing.signHeld(org, 'edit,export', 'p1363')).toBeUndefined();
    const resigned = await core.signing.sign(org, 'edit,export', { encoding: 'p1363' });
    expect(resigned.publicHash).not.toBe(signed.publicHash);
    expect((await core.signing.current(org)).id).toBe(rotated.id);
    expect(core.signing.signHeld(org, 'edit,export', 'p1363')).toEqual(resigned);
  });
});

describe('catalog admin', () => {
  it('saves a plan with entitlements and nested pricing in one call, and refuses bad nesting whole', async () => {
    const core = createTestCore();
    const org = await core.apiKeys.ensureOrganisation('acme');
    const tenant = { organisationId: org.id, isTest: false };
    const product = await core.products.createProduct(tenant, { name: 'Notes' });
    const { plan, created } = await core.plans.savePlan(tenant, {
      productId: product.id,
      name: 'Pro',
      trialPeriodDays: 7,
      entitlements: ['edit', 'export'],
      lineItems: [
        {
          name: 'Seats',
          priceType: 'per_seat',
          billingScheme: 'tiered',
          tiersMode: 'volume',
          prices: [
            {
              interval: 'month',
              currencyOptions: [
                {
                  currency: 'USD',
                  tiers: [
                    { upTo: '10', unitAmount: 500 },
                    { upTo: 'inf', unitAmount: 400 },
                  ],
                },
              ],
            },
          ],
        },
      ],
    });
    expect(created).toBe(true);
    expect(plan.lineItems[0].prices[0].currencyOptions[0]).toMatchObject({ currency: 'usd', isDefault: true });
    expect((await core.products.getProduct(tenant, product.id)).capabilities.map((c) => c.name)).toEqual(['edit', 'export']);
    await expectCode(
      core.plans.savePlan(tenant, {
        productId: product.id,
        name: 'Bad',
        entitlements: ['new-cap'],
        lineItems: [{ name: 'x', priceType: 'per_seat', billingScheme: 'tiered', prices: [] }],
      }),
      'VALIDATION_FAILED',
    );
    expect((await core.products.getProduct(tenant, product.id)).capabilities.map((c) => c.name)).toEqual(['edit', 'export']);
    const { page, filterOptions } = await core.plans.listPlans(tenant, { limit: 10 });
    expect(page.items.map((p) => p.name)).toEqual(['Pro']);
    expect(filterOptions.currencies).toEqual(['usd']);
  });

  it('refuses to delete a product or plan with subscriptions; archiving is the way', async () => {
    const core = createTestCore();
    const { tenant, keys } = await seedSample(core, 'acme');
    await buy(core, tenant, keys['plans.notes.business']);
    await expectCode(core.plans.deletePlan(tenant, keys['plans.notes.business']), 'PLAN_HAS_SUBSCRIPTIONS');
    await expectCode(core.products.deleteProduct(tenant, keys['products.notes']), 'PRODUCT_HAS_SUBSCRIPTIONS');
    await core.plans.deletePlan(tenant, keys['plans.notes.metered']);
    expect((await core.products.archiveProduct(tenant, keys['products.notes'])).archivedAt).not.toBeNull();
    await expectCode(core.products.archiveProduct(tenant, keys['products.notes']), 'PRODUCT_ARCHIVED');
  });
});

describe('in-memory unit of work', () => {
  it('rolls back a use case that fails after its first write (fault injection)', async () => {
    const uow = new FaultInjectingUnitOfWork(new InMemoryUnitOfWork());
    const core = createTestCore({ uow });
    const { tenant, keys } = await seedSample(core, 'acme');
    uow.failAfterWrites = 1;
    await expect(buy(core, tenant, keys['plans.notes.team'], 3)).rejects.toThrow('injected fault');
    uow.failAfterWrites = undefined;
    expect(await core.licenses.count(tenant, {})).toEqual({ count: 0, assigned: 0, unassigned: 0 });
    void DAY;
    void ({} as DomainError);
  });
});
