import { buyPlan, FakePaymentProvider } from '@tollgate/core/testing';
import { capabilitySchema, legacyErrorSchema, licenseSchema } from '@tollgate/http';
import {
  checkoutLinkSchema,
  eventSchema,
  eventUuidSchema,
  licenseCountSchema,
  planCapabilitySchema,
  planCurrencySchema,
  pricingTableSchema,
  productCurrencySchema,
  urlSchema,
  v1FeatureSchema,
  v1PlanFeatureSchema,
  v1PlanSchema,
  v1ProductSchema,
  v1SubscriptionSchema,
} from '../src';
import { coreDownAfter, createTestWorld, purchase, seedOrganisation, type SeededOrg, type TestWorld } from '@tollgate/runtime/testing';
import { createV1App, EXPANDABLE } from '../src';
import request from 'supertest';
import { arrayOf, expectSchema, v1 } from './helpers';

const DAY = 86_400_000;
let world: TestWorld;
let app: ReturnType<typeof createV1App>;
let org: SeededOrg;
let other: SeededOrg;
let api: ReturnType<typeof v1>;
const payments = new FakePaymentProvider();

beforeAll(async () => {
  world = await createTestWorld({ payments });
  app = createV1App(world);
  org = await seedOrganisation(world, 'v1-org');
  other = await seedOrganisation(world, 'v1-other');
  api = v1(app, org.liveKey);
});
afterAll(() => world?.close());

const drain = () => world.core.worker.drain();
const checkoutParams =
  'successUrl=https://app.example.com/ok&cancelUrl=https://app.example.com/cancel&granteeId=alice&member=m@example.com';
const globalParams =
  'globalSuccessUrl=https://app.example.com/ok&globalCancelUrl=https://app.example.com/cancel&globalGranteeId=alice&member=m@example.com';

describe('v1 products', () => {
  it('lists products without relations', async () => {
    const res = await api.get('/products').expect(200);
    expectSchema(arrayOf(v1ProductSchema), res.body);
    expect(res.body).toHaveLength(1);
    expect(res.body[0]).not.toHaveProperty('plans');
    expect(res.body[0]).toMatchObject({ appType: 'custom', isTest: false });
  });

  it('expands every allowed value, dotted paths nested', async () => {
    const id = org.keys['products.notes'];
    const bare = (await api.get(`/products/${id}`).expect(200)).body;
    expectSchema(v1ProductSchema, bare);
    for (const rel of ['features', 'capabilities', 'currencies', 'organisationPaymentIntegration', 'plans'])
      expect(bare).not.toHaveProperty(rel);

    const all = EXPANDABLE.product.filter((e) => e !== 'generateCheckoutLinks').join(',');
    const full = (await api.get(`/products/${id}?expand=${all}`).expect(200)).body;
    expectSchema(v1ProductSchema, full);
    expect(full.features[1].featureEnumOptions.map((o: { name: string }) => o.name)).toEqual(['light', 'dark']);
    expect(full.capabilities.map((c: { name: string }) => c.name)).toEqual(['edit', 'export', 'admin']);
    expect(full.currencies[0]).toMatchObject({ defaultCurrency: true, currency: { shortName: 'USD' } });
    expect(full.organisationPaymentIntegration).toMatchObject({ integrationName: 'sandbox', isTest: false });
    const team = full.plans.find((p: { displayName: string }) => p.displayName === 'Team');
    expect(team.currencies.map((c: { price: number; currency: { shortName: string } }) => [c.currency.shortName, c.price])).toEqual([
      ['USD', 12],
      ['EUR', 11],
    ]);
    expect(team.features.find((f: { feature: { name: string } }) => f.feature.name === 'theme').enumValue.name).toBe('dark');
    expect(team.capabilities.map((c: { capabilityUuid: string }) => c.capabilityUuid)).toHaveLength(2);

    const shallow = (await api.get(`/products/${id}?expand=plans.features,currencies`).expect(200)).body;
    expect(shallow.plans[1].features[0]).not.toHaveProperty('feature');
    expect(shallow.currencies[0]).not.toHaveProperty('currency');
    expect(shallow).not.toHaveProperty('features');
  });

  it('refuses an unknown expand value, naming it', async () => {
    const res = await api.get(`/products/${org.keys['products.notes']}?expand=plans,bogus`).expect(400);
    expectSchema(legacyErrorSchema, res.body);
    expect(res.body.error).toMatch(/bogus/);
    await api.get(`/plans/${org.keys['plans.notes.team']}?expand=plans`).expect(400);
    await api.get(`/subscriptions/00000000-0000-4000-8000-000000000000?expand=invoices`).expect(400);
  });

  it('generates checkout links for the plans when asked, and needs the checkout parameters for it', async () => {
    const id = org.keys['products.notes'];
    await api.get(`/products/${id}?expand=generateCheckoutLinks`).expect(400);
    const res = await api.get(`/products/${id}?expand=generateCheckoutLinks&${checkoutParams}`).expect(200);
    expectSchema(v1ProductSchema, res.body);
    // Deferred links: following one creates the checkout (paid plans at the provider, the free plan at the hosted free checkout).
    for (const p of res.body.plans as { pricingType: string; checkoutUrl: string }[]) {
      expect(p.checkoutUrl).toMatch(/^http:\/\/localhost:3000\/checkout\/start\//);
      const followed = await request(app).get(new URL(p.checkoutUrl).pathname).expect(303);
      expect(followed.headers.location).toMatch(
        p.pricingType === 'free' ? /^http:\/\/localhost:3000\/sandbox\/checkout\// : /^https:\/\/pay\.example\.test\//,
      );
    }
  });

  it('links only the plans priced in the currency asked: a paid plan without a price in it gets no link, the others still do', async () => {
    const id = org.keys['products.notes'];
    const res = await api.get(`/products/${id}?expand=generateCheckoutLinks&${checkoutParams}&currency=EUR`).expect(200);
    const links = Object.fromEntries(
      (res.body.plans as { displayName: string; checkoutUrl?: string }[]).map((p) => [p.displayName, p.checkoutUrl ?? null]),
    );
    // Metered and Metered Pro are priced in dollars only.
    expect(links).toMatchObject({ Metered: null, 'Metered Pro': null });
    for (const name of ['Free', 'Team', 'Business']) expect(links[name]).toMatch(/\/checkout\/start\//);
    // Asked directly, a link in a currency the plan has no price in is refused, naming the currency.
    const refused = await api.get(`/plans/${org.keys['plans.notes.metered']}/checkoutlink?${checkoutParams}&currency=EUR`).expect(400);
    expect(JSON.stringify(refused.body)).toContain('no price in EUR');
  });

  it('links no plan Tollgate would not bill as its line items price it (a base fee beside seats), and refuses it asked directly', async () => {
    const product = await world.core.products.createProduct(org.tenant, { name: 'Fees' });
    const line = (slug: string, priceType: 'per_seat' | 'flat_rate', unitAmount: number) => ({
      name: slug,
      slug,
      priceType,
      prices: [{ interval: 'month' as const, intervalCount: 1, currencyOptions: [{ currency: 'USD', unitAmount }] }],
    });
    const save = async (name: string, lineItems: ReturnType<typeof line>[]) =>
      (await world.core.plans.savePlan(org.tenant, { productId: product.id, name, lineItems })).plan.id;
    const seatsOnly = await save('Seats only', [line('seats', 'per_seat', 1000)]);
    const withBase = await save('Base and seats', [line('seats', 'per_seat', 1000), line('base', 'flat_rate', 5000)]);
    const res = await api.get(`/products/${product.id}?expand=generateCheckoutLinks&${checkoutParams}&currency=USD`).expect(200);
    const links = Object.fromEntries(
      (res.body.plans as { displayName: string; checkoutUrl?: string }[]).map((p) => [p.displayName, p.checkoutUrl ?? null]),
    );
    expect(links).toEqual({ 'Seats only': expect.stringMatching(/\/checkout\/start\//), 'Base and seats': null });
    await api.get(`/plans/${seatsOnly}/checkoutlink?${checkoutParams}&currency=USD`).expect(200);
    const refused = await api.get(`/plans/${withBase}/checkoutlink?${checkoutParams}&currency=USD`).expect(400);
    expect(JSON.stringify(refused.body)).toContain('its line item base would not be charged');
  });

  it('serves the plans, features, currencies and capabilities of a product', async () => {
    const id = org.keys['products.notes'];
    expectSchema(arrayOf(v1PlanSchema), (await api.get(`/products/${id}/plans`).expect(200)).body);
    const features = (await api.get(`/products/${id}/features`).expect(200)).body;
    expectSchema(arrayOf(v1FeatureSchema), features);
    expect(features.map((f: { sortOrder: number }) => f.sortOrder)).toEqual([0, 1, 2]);
    expectSchema(arrayOf(productCurrencySchema), (await api.get(`/products/${id}/currencies`).expect(200)).body);
    expectSchema(arrayOf(capabilitySchema), (await api.get(`/products/${id}/capabilities`).expect(200)).body);
  });
});

describe('v1 plans and checkout', () => {
  const team = () => org.keys['plans.notes.team'];

  it('gets a plan with each expansion', async () => {
    const bare = (await api.get(`/plans/${team()}`).expect(200)).body;
    expectSchema(v1PlanSchema, bare);
    expect(bare).toMatchObject({ perSeatAmount: 2, isTest: false });
    expect(bare).not.toHaveProperty('type');
    const all = (await api.get(`/plans/${team()}?expand=${EXPANDABLE.plan.join(',')}&${checkoutParams}`).expect(200)).body;
    expectSchema(v1PlanSchema, all);
    expect(all.capabilities[0].capability.name).toBe('edit');
    expect(all.currencies[0].currency.shortName).toBe('USD');
    expect(all.checkoutUrl).toMatch(/^https:\/\//);
    await api.get(`/plans/${team()}?expand=generateCheckoutLink`).expect(400);
  });

  it('serves plan features, currencies and capabilities', async () => {
    expectSchema(arrayOf(v1PlanFeatureSchema), (await api.get(`/plans/${team()}/features`).expect(200)).body);
    expectSchema(arrayOf(planCurrencySchema), (await api.get(`/plans/${team()}/currencies`).expect(200)).body);
    expectSchema(arrayOf(planCapabilitySchema), (await api.get(`/plans/${team()}/capabilities`).expect(200)).body);
  });

  it('gives a checkout link and passes the option set to the provider', async () => {
    const res = await api
      .get(
        `/plans/${team()}/checkoutlink?${checkoutParams}&currency=eur&quantity=3&changeQuantity=true&customerEmail=a@b.co&allowPromoCode=true`,
      )
      .expect(200);
    expectSchema(checkoutLinkSchema, res.body);
    const call = payments.calls.filter((c) => c.op === 'checkoutLink').pop();
    expect(call).toMatchObject({
      request: {
        granteeId: 'alice',
        member: 'm@example.com',
        options: { currency: 'EUR', quantity: 3, changeQuantity: true, allowPromoCode: true, customerEmail: 'a@b.co' },
      },
    });
  });

  it("reads real clients' spellings: owner for member, single-quoted URLs", async () => {
    const quoted = `successUrl='https://app.example.com/ok'&cancelUrl='https://app.example.com/cancel'&granteeId=bob&owner=o@example.com`;
    await api.get(`/plans/${team()}/checkoutlink?${quoted}`).expect(200);
    const call = payments.calls.filter((c) => c.op === 'checkoutLink').pop();
    expect(call).toMatchObject({
      request: {
        granteeId: 'bob',
        member: 'o@example.com',
        successUrl: 'https://app.example.com/ok',
        cancelUrl: 'https://app.example.com/cancel',
      },
    });
    // member wins over owner; neither is a 400 naming member.
    await api.get(`/plans/${team()}/checkoutlink?${checkoutParams}&owner=other@example.com`).expect(200);
    expect(payments.calls.filter((c) => c.op === 'checkoutLink').pop()).toMatchObject({ request: { member: 'm@example.com' } });
    const none = await api.get(`/plans/${team()}/checkoutlink?successUrl=https://x.io&cancelUrl=https://x.io&granteeId=a`).expect(400);
    expect(none.body).toMatchObject({ code: 'VALIDATION_FAILED', validationErrors: [{ property: 'member', error: 'is required' }] });
    // A pricing table takes owner too; the contract's required member stays required.
    const table = org.keys['pricingTables.notes.main'];
    const viaOwner = `globalSuccessUrl='https://app.example.com/ok'&globalCancelUrl=https://app.example.com/cancel&globalGranteeId=bob&owner=o@example.com`;
    const res = await api.get(`/pricing-tables/${table}?${viaOwner}`).expect(200);
    expect(res.body.plans.length).toBeGreaterThan(0);
    const missing = await api
      .get(`/pricing-tables/${table}?globalSuccessUrl=https://x.io&globalCancelUrl=https://x.io&globalGranteeId=a`)
      .expect(400);
    expect(missing.body.validationErrors).toEqual([{ property: 'member', error: 'is required' }]);
  });

  it('refuses checkout links that break the option set rules', async () => {
    const bad = async (query: string, code: string, plan = team()) => {
      const res = await api.get(`/plans/${plan}/checkoutlink?${query}`).expect(400);
      expect(res.body.code).toBe(code);
    };
    await bad('successUrl=https://x.io&cancelUrl=https://x.io&granteeId=a', 'VALIDATION_FAILED');
    await bad(`${checkoutParams}&promoCode=SAVE&allowPromoCode=true`, 'CHECKOUT_PROMO_CODE_CONFLICT');
    await bad(`${checkoutParams}&customerEmail=not-an-email`, 'CHECKOUT_INVALID_EMAIL');
    await bad(`${checkoutParams}&currency=GBP`, 'CHECKOUT_CURRENCY_NOT_SUPPORTED');
    // A made-up code, or one outside the published list, is a currency the product is not sold in.
    for (const code of ['XDR', 'ZZZ', 'US']) await bad(`${checkoutParams}&currency=${code}`, 'CHECKOUT_CURRENCY_NOT_SUPPORTED');
    await bad(`${checkoutParams}&quantity=1`, 'CHECKOUT_QUANTITY_BELOW_MINIMUM');
    await bad(`${checkoutParams}&quantity=2`, 'CHECKOUT_QUANTITY_NOT_PER_SEAT', org.keys['plans.notes.free']);
    await bad(`successUrl=/relative&cancelUrl=https://x.io&granteeId=a&member=m`, 'CHECKOUT_INVALID_URL');
  });
});

describe('v1 pricing tables', () => {
  /** What a deferred checkout link carries (its signed payload, read without the key). */
  const linkRequestOf = (url: string) =>
    JSON.parse(Buffer.from((url.split('/').pop() as string).split('.')[0], 'base64url').toString('utf8')).request;

  it("applies the real clients' per-plan lists (granteeIds, successUrls, cancelUrls) to their plans only", async () => {
    const team = org.keys['plans.notes.team'];
    const business = org.keys['plans.notes.business'];
    const perPlan =
      `&granteeIds=${encodeURIComponent(`[${team},zed,${business},${'00000000-0000-4000-8000-0000000000aa'}]`)}` +
      `&successUrls=${encodeURIComponent(`[${team},https://app.example.com/team?a=1,b=2]`)}` +
      `&cancelUrls=${encodeURIComponent(`[${business},'https://app.example.com/no-business']`)}`;
    for (const path of [
      `/pricing-tables/${org.keys['pricingTables.notes.main']}`,
      `/products/${org.keys['products.notes']}/pricingtable`,
    ]) {
      const res = await api.get(`${path}?${globalParams}${perPlan}`).expect(200);
      const plans: { uuid: string; checkoutUrl: string }[] = res.body.plans.map((p: { plan?: object }) => p.plan ?? p);
      const req = (id: string) => linkRequestOf((plans.find((p) => p.uuid === id) as { checkoutUrl: string }).checkoutUrl);
      expect(req(team)).toMatchObject({
        granteeId: 'zed',
        successUrl: 'https://app.example.com/team?a=1,b=2',
        cancelUrl: 'https://app.example.com/cancel',
      });
      expect(req(business)).toMatchObject({
        granteeId: '00000000-0000-4000-8000-0000000000aa',
        successUrl: 'https://app.example.com/ok',
        cancelUrl: 'https://app.example.com/no-business',
      });
      expect(req(org.keys['plans.notes.free'])).toMatchObject({ granteeId: 'alice', successUrl: 'https://app.example.com/ok' });
    }
    // A list that does not start with a plan, or a plan without a value, is a 400 naming the list.
    const table = `/pricing-tables/${org.keys['pricingTables.notes.main']}?${globalParams}`;
    const bad = await api.get(`${table}&granteeIds=${encodeURIComponent('[zed,' + team + ']')}`).expect(400);
    expect(bad.body.validationErrors[0].property).toBe('granteeIds');
    await api.get(`${table}&successUrls=${encodeURIComponent(`[${team}]`)}`).expect(400);
    // A per-plan address is checked like the global one.
    const relative = await api.get(`${table}&successUrls=${encodeURIComponent(`[${team},/relative]`)}`).expect(400);
    expect(relative.body.code).toBe('CHECKOUT_INVALID_URL');
  });

  it('serves the product pricing table with every public plan, links built from the global parameters', async () => {
    const id = org.keys['products.notes'];
    await api.get(`/products/${id}/pricingtable?globalSuccessUrl=https://x.io&globalCancelUrl=https://x.io`).expect(400);
    const res = await api.get(`/products/${id}/pricingtable?${globalParams}`).expect(200);
    expectSchema(v1ProductSchema, res.body);
    expect(res.body.plans.map((p: { displayName: string }) => p.displayName)).toEqual([
      'Free',
      'Team',
      'Business',
      'Metered',
      'Metered Pro',
    ]);
    expect(
      res.body.plans.every(
        (p: { checkoutUrl?: string; features: unknown[]; currencies: unknown[] }) => p.checkoutUrl && p.features && p.currencies,
      ),
    ).toBe(true);
    expect(res.body.organisationPaymentIntegration.integrationName).toBe('sandbox');
  });

  it('creates no checkout while a pricing table is viewed; following a link does, once; forged links are 404', async () => {
    const before = payments.calls.filter((c) => c.op === 'checkoutLink').length;
    const res = await api.get(`/pricing-tables/${org.keys['pricingTables.notes.main']}?${globalParams}&currency=EUR`).expect(200);
    expect(payments.calls.filter((c) => c.op === 'checkoutLink').length).toBe(before);
    const team = res.body.plans.find((p: { plan: { displayName: string } }) => p.plan.displayName === 'Team').plan;
    const path = new URL(team.checkoutUrl).pathname;
    expect((await request(app).get(path).expect(303)).headers.location).toMatch(/^https:\/\/pay\.example\.test\/checkout\//);
    const call = payments.calls.filter((c) => c.op === 'checkoutLink').pop();
    expect(call).toMatchObject({
      request: { granteeId: 'alice', member: 'm@example.com', successUrl: 'https://app.example.com/ok', options: { currency: 'EUR' } },
    });
    await request(app)
      .get(`${path.slice(0, -3)}xyz`)
      .expect(404);
    await request(app).get('/checkout/start/garbage').expect(404);
    await api.get(`/pricing-tables/${org.keys['pricingTables.notes.main']}?${globalParams}&currency=GBP`).expect(400);
  });

  it('serves a pricing table with features and plans in sort order', async () => {
    const id = org.keys['pricingTables.notes.main'];
    await api.get(`/pricing-tables/${id}?globalSuccessUrl=https://x.io&globalCancelUrl=https://x.io&globalGranteeId=a`).expect(400);
    const res = await api.get(`/pricing-tables/${id}?${globalParams}`).expect(200);
    expectSchema(pricingTableSchema, res.body);
    expect(res.body.features.map((f: { feature: { name: string } }) => f.feature.name)).toEqual(['projects', 'theme']);
    expect(res.body.plans.map((p: { plan: { displayName: string } }) => p.plan.displayName)).toEqual(['Free', 'Team', 'Business']);
    expect(res.body.featuredPlanUuid).toBe(org.keys['plans.notes.team']);
    await v1(app, other.liveKey).get(`/pricing-tables/${id}?${globalParams}`).expect(403);
  });
});

describe('v1 subscriptions', () => {
  it('gets a subscription, with each expansion', async () => {
    const { subscription } = await purchase(world, org.keys['plans.notes.team'], 'sub-get', 2);
    const bare = (await api.get(`/subscriptions/${subscription.id}`).expect(200)).body;
    expectSchema(v1SubscriptionSchema, bare);
    expect(bare).toMatchObject({ quantity: 2, status: 'ACTIVE', cancelAtPeriodEnd: false, type: 'perSeat' });
    const all = (await api.get(`/subscriptions/${subscription.id}?expand=${EXPANDABLE.subscription.join(',')}`).expect(200)).body;
    expectSchema(v1SubscriptionSchema, all);
    expect(all.product.organisationPaymentIntegration.integrationName).toBe('sandbox');
    expect(all.product.currencies).toHaveLength(2);
    expect(all.plan.currencies).toHaveLength(2);
    expect(all.customer).toMatchObject({ value: 'buyer@example.com' });
  });

  it('serves invoices, switchable plans, links and the payment method', async () => {
    const { subscription } = await purchase(world, org.keys['plans.notes.team'], 'sub-links', 2);
    const s = `/subscriptions/${subscription.id}`;
    const invoices = (await api.get(`${s}/invoices`).expect(200)).body;
    expect(Object.keys(invoices).sort()).toEqual(['data', 'first', 'hasMore', 'last']);
    const plans = (await api.get(`${s}/updateplan/listplans`).expect(200)).body;
    expectSchema(arrayOf(v1PlanSchema), plans);
    // Not Metered nor Metered Pro: flat paid plans, which change-plan refuses for 2 seats (billed twice).
    expect(plans.map((p: { displayName: string }) => p.displayName)).toEqual(['Free', 'Business']);
    expect(plans[0]).toHaveProperty('currencies');
    expect(plans[0]).toHaveProperty('features');
    for (const path of ['updatepaymentlink', 'customer-portal', 'cancelpaymentlink'])
      expectSchema(urlSchema, (await api.get(`${s}/${path}`).expect(200)).body);
    expect((await api.get(`${s}/payment-method`).expect(200)).body).toMatchObject({ id: 'pm_fake' });
  });

  it('refuses to move a free subscription (the free checkout) to a paid plan, naming planUuid; lists it no paid plan', async () => {
    const { subscription } = await buyPlan(world.core, org.keys['plans.notes.free'], 1, 'free-mover', 'none');
    const s = `/subscriptions/${subscription.id}`;
    const res = await api.put(`${s}/change-plan`, { planUuid: org.keys['plans.notes.business'] }).expect(400);
    expect(res.body).toMatchObject({
      code: 'VALIDATION_FAILED',
      validationErrors: [{ property: 'planUuid', error: expect.stringContaining('check out Business') }],
    });
    expect((await api.get(s).expect(200)).body.planUuid).toBe(org.keys['plans.notes.free']);
    expect((await api.get(`${s}/updateplan/listplans`).expect(200)).body).toEqual([]);
  });

  it('shows the cancel instant as the expiry date of a subscription canceled now', async () => {
    const { subscription } = await purchase(world, org.keys['plans.notes.business'], 'sub-expiry');
    const s = `/subscriptions/${subscription.id}`;
    expect((await api.get(s).expect(200)).body.expiryDate).toBe(subscription.currentPeriodEnd.toISOString());
    await api.put(`${s}/cancel?when=now`).expect(204);
    const canceled = (await world.core.subscriptions.get({ organisationId: subscription.organisationId, isTest: false }, subscription.id))
      .subscription;
    const body = (await api.get(s).expect(200)).body;
    expect(body.expiryDate).toBe(canceled.canceledAt?.toISOString());
    expect(body.expiryDate).not.toBe(subscription.currentPeriodEnd.toISOString());
  });

  it('cancels now or at the end (when required) and reactivates only while scheduled', async () => {
    const { subscription } = await purchase(world, org.keys['plans.notes.business'], 'sub-cancel');
    const s = `/subscriptions/${subscription.id}`;
    expect((await api.put(`${s}/cancel`).expect(400)).body.validationErrors).toEqual([{ property: 'when', error: 'is required' }]);
    await api.put(`${s}/cancel?when=later`).expect(400);
    const res = await api.put(`${s}/cancel?when=end`).expect(204);
    expect(res.headers['content-length']).toBe('0');
    expect((await api.get(s)).body.cancelAtPeriodEnd).toBe(true);
    await api.put(`${s}/reactivate`).expect(204);
    expect((await api.get(s)).body.cancelAtPeriodEnd).toBe(false);
    await api.put(`${s}/reactivate`).expect(400);
    await api.put(`${s}/cancel?when=now`).expect(204);
    expect((await api.get(s)).body.status).toBe('CANCELED');
    expect((await api.put(`${s}/reactivate`).expect(400)).body.code).toBe('SUBSCRIPTION_NOT_REACTIVATABLE');
  });

  it('changes plan (204), refuses archived targets, and replaces usage-based subscriptions', async () => {
    const admin = world.core.plans;
    const { subscription } = await purchase(world, org.keys['plans.notes.team'], 'sub-change', 2);
    const s = `/subscriptions/${subscription.id}`;
    await api.put(`${s}/change-plan`, { planUuid: org.keys['plans.notes.business'], proration: 'always_invoice' }).expect(204);
    expect((await api.get(s)).body.planUuid).toBe(org.keys['plans.notes.business']);
    await api.put(`${s}/change-plan`, { planUuid: org.keys['plans.notes.team'], proration: 'sometimes' }).expect(400);
    await api.put(`${s}/change-plan`, {}).expect(400);

    const extra = await admin.createPlan(org.tenant, { productId: org.keys['products.notes'], name: 'Legacy' });
    await admin.archivePlan(org.tenant, extra.id);
    expect((await api.put(`${s}/change-plan`, { planUuid: extra.id }).expect(400)).body.code).toBe('PLAN_ARCHIVED');

    const metered = await purchase(world, org.keys['plans.notes.metered'], 'sub-metered');
    await api.put(`/subscriptions/${metered.subscription.id}/change-plan`, { planUuid: org.keys['plans.notes.metered-pro'] }).expect(204);
    expect((await api.get(`/subscriptions/${metered.subscription.id}`)).body.status).toBe('CANCELED');
    const licenses = (await api.get(`/licenses?status=active`).expect(200)).body.filter(
      (l: { granteeId: string }) => l.granteeId === 'sub-metered',
    );
    expect(licenses).toHaveLength(1);
    expect(licenses[0].planUuid).toBe(org.keys['plans.notes.metered-pro']);
    expect(licenses[0].subscriptionUuid).not.toBe(metered.subscription.id);
  });

  it("moves a subscription with SDK 3's body spelling (PUT /subscriptions {newPlanId, subscriptionId}), with or without the version header", async () => {
    const { subscription } = await purchase(world, org.keys['plans.notes.team'], 'sub-move-body', 2);
    const move = (version: string | null, body: object) => v1(app, org.liveKey, version).put('/subscriptions', body);
    await move(null, { newPlanId: org.keys['plans.notes.business'], subscriptionId: subscription.id }).expect(204);
    expect((await api.get(`/subscriptions/${subscription.id}`)).body.planUuid).toBe(org.keys['plans.notes.business']);
    await move('v1', { newPlanId: org.keys['plans.notes.team'], subscriptionId: subscription.id }).expect(204);
    expect((await api.get(`/subscriptions/${subscription.id}`)).body.planUuid).toBe(org.keys['plans.notes.team']);
    // Bad bodies are 400s naming the field; nothing moves.
    const missing = await move(null, { newPlanId: org.keys['plans.notes.business'] }).expect(400);
    expect(JSON.stringify(missing.body)).toContain('subscriptionId');
    await move(null, { newPlanId: 'nope', subscriptionId: subscription.id }).expect(400);
    expect((await api.get(`/subscriptions/${subscription.id}`)).body.planUuid).toBe(org.keys['plans.notes.team']);
  });

  it('moves a subscription with the deprecated operation, with or without the version header', async () => {
    const { subscription } = await purchase(world, org.keys['plans.notes.team'], 'sub-move', 2);
    await v1(app, org.liveKey, null).put(`/subscriptions/${subscription.id}/updateplan/${org.keys['plans.notes.business']}`).expect(204);
    expect((await api.get(`/subscriptions/${subscription.id}`)).body.planUuid).toBe(org.keys['plans.notes.business']);
    await v1(app, org.liveKey, null)
      .put(`/subscriptions/${subscription.id}/change-plan`, { planUuid: org.keys['plans.notes.team'] })
      .expect(204);
  });

  it('accepts seat changes with 202 and an event, applied by the worker; refuses impossible decrements', async () => {
    const { subscription } = await purchase(world, org.keys['plans.notes.team'], 'sub-seats', 2);
    const s = `/subscriptions/${subscription.id}`;
    const inc = await api.post(`${s}/seats`, { increment: 3 }).expect(202);
    expectSchema(eventUuidSchema, inc.body);
    expectSchema(eventSchema, (await api.get(`/events/${inc.body.eventUuid}`).expect(200)).body);
    await drain();
    expect((await api.get(`/events/${inc.body.eventUuid}`)).body.status).toBe('success');
    expect((await api.get(s)).body.quantity).toBe(5);
    expect((await api.get(`/licenses/count?subscriptionUuid=${subscription.id}`)).body).toEqual({ count: 5, assigned: 1, unassigned: 4 });
    expect((await api.put(`${s}/seats`, { decrement: 5 }).expect(400)).body.code).toBe('SEATS_EXCEED_UNASSIGNED');
    expect((await api.put(`${s}/seats`, { decrement: 4 }).expect(400)).body.code).toBe('SEATS_BELOW_MINIMUM');
    await api.put(`${s}/seats`, { decrement: 0 }).expect(400);
    await api.post(`${s}/seats`, { increment: '2' }).expect(400);
    const dec = await api.put(`${s}/seats`, { decrement: 3, proration: 'none' }).expect(202);
    await drain();
    expect((await api.get(`/events/${dec.body.eventUuid}`)).body.status).toBe('success');
    expect((await api.get(`/licenses/count?subscriptionUuid=${subscription.id}`)).body).toEqual({ count: 2, assigned: 1, unassigned: 1 });
    expect(
      payments.calls
        .filter((c) => c.op === 'changeSeats' && c.subscriptionId === subscription.id)
        .map((c) => (c as { quantity: number }).quantity),
    ).toEqual([5, 2]);
  });
});

describe('v1 licenses', () => {
  it('answers the licenses it wrote without reading the database after the commit', async () => {
    // Each request runs on a core that fails every call made after its write resolved, as an outage would.
    const after = async (write: string, method: 'post' | 'put', path: string, body: object) => {
      const core = coreDownAfter(world.core, write);
      const res = await v1(createV1App({ ...world, core }), org.liveKey)[method](path, body);
      expect([res.status, core.wrote()]).toEqual([200, true]);
      return res.body;
    };
    const [created] = await after('licenses.createAdHoc', 'post', '/licenses', {
      planUuid: org.keys['plans.notes.free'],
      member: 'm@example.com',
      granteeId: 'v1-after',
    });
    expect(created).toMatchObject({ granteeId: 'v1-after', capabilities: [expect.objectContaining({ name: 'edit' })] });
    const batch = await after('licenses.batchUpdate', 'put', '/licenses', [{ uuid: created.uuid, granteeId: 'v1-next' }]);
    expect(batch).toMatchObject([{ uuid: created.uuid, granteeId: 'v1-next', capabilities: created.capabilities }]);
    const one = await after('licenses.update', 'put', `/licenses/${created.uuid}`, { granteeId: 'v1-last' });
    expect(one).toEqual({ ...(await api.get(`/licenses/${created.uuid}`).expect(200)).body });
    expect(one.granteeId).toBe('v1-last');
  });

  it('creates licenses (200, array), batch-updates grantees, lists by status and counts', async () => {
    const created = await api
      .post('/licenses', { planUuid: org.keys['plans.notes.free'], member: 'm@example.com', granteeId: null })
      .expect(200);
    expectSchema(arrayOf(licenseSchema), created.body);
    const [lic] = created.body;
    const updated = await api.put('/licenses', [{ uuid: lic.uuid, granteeId: 'zoe' }]).expect(200);
    expectSchema(arrayOf(licenseSchema), updated.body);
    expect(updated.body[0].granteeId).toBe('zoe');
    const missing = await api
      .put('/licenses', [
        { uuid: lic.uuid, granteeId: 'yan' },
        { uuid: '00000000-0000-4000-8000-000000000000', granteeId: 'x' },
      ])
      .expect(404);
    expectSchema(legacyErrorSchema, missing.body);
    expect(missing.body.code).toBe('NOT_FOUND');
    const list = (await api.get('/licenses?status=active').expect(200)).body;
    // Real clients send the status in capitals too.
    expect((await api.get('/licenses?status=ACTIVE').expect(200)).body).toEqual(list);
    expectSchema(arrayOf(licenseSchema), list);
    expect(list.find((l: { uuid: string }) => l.uuid === lic.uuid).granteeId).toBe('zoe');
    expect(
      (await api.get('/licenses?status=evaluation').expect(200)).body.every((l: { status: string }) => l.status === 'EVALUATION'),
    ).toBe(true);
    for (const status of ['active', 'canceled', 'evaluation', 'scheduled', 'trialing', 'inactive'])
      await api.get(`/licenses?status=${status}`).expect(200);
    // Any letter case (#14: real clients send ACTIVE); an unknown status stays 400.
    await api.get('/licenses?status=Trialing').expect(200);
    await api.get('/licenses?status=bogus').expect(400);
    const count = (await api.get('/licenses/count').expect(200)).body;
    expectSchema(licenseCountSchema, count);
    expect(count.count).toBe(count.assigned + count.unassigned);
    await api.post('/licenses', { planUuid: org.keys['plans.notes.free'], member: 'm' }).expect(400);
    await api.put('/licenses', [{ uuid: 'x', granteeId: 'y' }]).expect(400);
  });

  it('answers the capability check as legacy does', async () => {
    await purchase(world, org.keys['plans.notes.business'], 'checker');
    const res = await api.get(`/licenses/check?productUuid=${org.keys['products.notes']}&granteeIds=[checker]`).expect(200);
    expect(res.body.capabilities).toEqual(['admin', 'edit', 'export']);
    await api.get(`/licenses/check?productUuid=${org.keys['products.notes']}&granteeIds=checker&grace=0`).expect(400);
  });
});

describe('v1 version header, authentication and tenancy', () => {
  it('takes requests without a version header (real clients send none); another value is 400', async () => {
    expectSchema(arrayOf(v1ProductSchema), (await v1(app, org.liveKey, null).get('/products').expect(200)).body);
    const wrong = await v1(app, org.liveKey, 'v2').get('/products').expect(400);
    expectSchema(legacyErrorSchema, wrong.body);
    expect(wrong.body.error).toMatch(/unsupported version v2/);
    const { subscription } = await purchase(world, org.keys['plans.notes.team'], 'exempt', 2);
    expectSchema(v1SubscriptionSchema, (await v1(app, org.liveKey, null).get(`/subscriptions/${subscription.id}`).expect(200)).body);
    await v1(app, org.liveKey, null)
      .put(`/subscriptions/${subscription.id}/change-plan`, { planUuid: org.keys['plans.notes.business'] })
      .expect(204);
    await v1(app, org.liveKey, null).put(`/subscriptions/${subscription.id}/updateplan/${org.keys['plans.notes.team']}`).expect(204);
  });

  it("answers 401 without a key, 403 for another organisation's record, 404 for the other mode's and for an unknown id", async () => {
    await v1(app, '').get('/products').expect(401);
    const { subscription } = await purchase(world, org.keys['plans.notes.team'], 'tenancy', 2);
    const paths = [
      `/products/${org.keys['products.notes']}`,
      `/plans/${org.keys['plans.notes.team']}`,
      `/subscriptions/${subscription.id}`,
      `/products/${org.keys['products.notes']}/features`,
      `/plans/${org.keys['plans.notes.team']}/capabilities`,
    ];
    for (const p of paths) {
      expect((await v1(app, other.liveKey).get(p).expect(403)).body.code).toBe('FORBIDDEN');
      const otherMode = await v1(app, org.testKey).get(p).expect(404);
      expectSchema(legacyErrorSchema, otherMode.body);
      expect(otherMode.body.code).toBe('NOT_FOUND');
      const unknown = await v1(app, org.liveKey)
        .get(p.replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/, '00000000-0000-4000-8000-000000000000'))
        .expect(404);
      expect(unknown.body).toEqual({ error: expect.stringMatching(/not found/), code: 'NOT_FOUND' });
    }
    await v1(app, other.liveKey).put(`/subscriptions/${subscription.id}/cancel?when=now`).expect(403);
    await v1(app, other.liveKey)
      .put('/licenses', [{ uuid: (await api.get(`/licenses?subscriptionUuid=${subscription.id}`)).body[0].uuid, granteeId: 'x' }])
      .expect(403);
    await v1(app, org.readOnlyKey).put(`/subscriptions/${subscription.id}/cancel?when=now`).expect(403);
  });
});

describe('v1 subscription lifecycle end to end', () => {
  it('buy -> add seats -> assign -> remove seats -> change plan -> cancel at end -> reactivate -> period end -> check shows nothing', async () => {
    const product = org.keys['products.notes'];
    const { subscription } = await purchase(world, org.keys['plans.notes.team'], 'owner', 2);
    const s = `/subscriptions/${subscription.id}`;
    await api.post(`${s}/seats`, { increment: 2 }).expect(202);
    await drain();
    const seats = (await api.get(`/licenses?subscriptionUuid=${subscription.id}`)).body as { uuid: string; granteeId: string | null }[];
    const free = seats.filter((l) => l.granteeId === null);
    await api.put('/licenses', [{ uuid: free[0].uuid, granteeId: 'teammate' }]).expect(200);
    expect((await api.get(`/licenses/check?productUuid=${product}&granteeIds=teammate`).expect(200)).body.capabilities).toEqual([
      'edit',
      'export',
    ]);
    await api.put(`${s}/seats`, { decrement: 1 }).expect(202);
    await drain();
    expect((await api.get(`/licenses/count?subscriptionUuid=${subscription.id}`)).body).toEqual({ count: 3, assigned: 2, unassigned: 1 });
    await api.put(`${s}/change-plan`, { planUuid: org.keys['plans.notes.business'] }).expect(204);
    expect((await api.get(`/licenses/check?productUuid=${product}&granteeIds=teammate`)).body.capabilities).toEqual([
      'admin',
      'edit',
      'export',
    ]);
    await api.put(`${s}/cancel?when=end`).expect(204);
    await api.put(`${s}/reactivate`).expect(204);
    await api.put(`${s}/cancel?when=end`).expect(204);
    const end = new Date((await api.get(s)).body.expiryDate);
    world.clock.set(new Date(end.getTime() + DAY));
    try {
      expect((await api.get(s)).body.status).toBe('CANCELED');
      expect((await api.put(`${s}/reactivate`).expect(400)).body.code).toBe('SUBSCRIPTION_NOT_REACTIVATABLE');
      await world.core.sweeps.cancellations();
      await api.get(`/licenses/check?productUuid=${product}&granteeIds=owner,teammate`).expect(204);
    } finally {
      world.clock.set(new Date());
    }
  });
});
