import nock from 'nock';
import { createTestWorld, purchase, seedOrganisation, type TestWorld } from '../src/testing';

// The payments review (twelfth session): under a live Stripe key the sandbox is the router's other
// provider whether or not test mode has its own Stripe keys. Its test-mode subscriptions (made
// before the test keys were set) keep renewing, with their invoices; its live-mode ones (left from
// before Stripe was configured) are not renewed, as before test mode went to the sandbox.

beforeAll(() => nock.disableNetConnect());
afterAll(() => nock.enableNetConnect());

const stripe = { stripeSecretKey: 'sk_live_review', stripeWebhookSecret: 'whsec_review' };
const testKeys = { stripeTestSecretKey: 'sk_test_review', stripeTestWebhookSecret: 'whsec_test_review' };

describe.each([
  ['a live key with test keys', { ...stripe, ...testKeys }],
  ['a live key alone', stripe],
])('sandbox subscriptions under %s', (_name, config) => {
  let world: TestWorld;
  beforeAll(async () => {
    world = await createTestWorld({ config });
  });
  afterAll(() => world?.close());

  it('renews the test-mode ones with their invoices and leaves the live-mode ones to end', async () => {
    const org = await seedOrganisation(world, `sandbox-review-${Object.keys(config).length}`);
    const { subscription: test } = await purchase(world, org.testKeys['plans.notes.business'], 'tester');
    const { subscription: live } = await purchase(world, org.keys['plans.notes.business'], 'buyer');
    expect([test.paymentProvider, live.paymentProvider]).toEqual(['sandbox', 'sandbox']);
    world.clock.advanceDays(40);
    // Twice: a live-mode subscription listed past once is not in the way of the next pass.
    expect(await world.core.sweeps.renewals()).toBe(1);
    expect(await world.core.sweeps.renewals()).toBe(0);
    const renewed = (await world.core.subscriptions.get(org.testTenant, test.id)).subscription;
    expect(renewed.currentPeriodEnd.getTime()).toBeGreaterThan(world.clock.now().getTime());
    const invoices = await world.db.uow.run((r) => r.billingDocuments.list(test.id, 'invoice'));
    expect(invoices.length).toBeGreaterThan(0);
    const lapsed = (await world.core.subscriptions.get(org.tenant, live.id)).subscription;
    expect(lapsed.currentPeriodEnd.getTime()).toBe(live.currentPeriodEnd.getTime());
    // The test-mode subscription's links still come from the sandbox (no Stripe call: no network).
    const { url } = await world.core.subscriptions.link(org.testTenant, test.id, 'portal');
    expect(url).toContain('/sandbox/');
  });

  it('never lets live-mode ones fill a pass: a pass of one renews the test-mode one behind them', async () => {
    const org = await seedOrganisation(world, `sandbox-first-${Object.keys(config).length}`);
    // The live-mode ones first: their period ends are older, first in the due list.
    for (const buyer of ['early-1', 'early-2']) await purchase(world, org.keys['plans.notes.business'], buyer);
    world.clock.advanceDays(1);
    const { subscription: test } = await purchase(world, org.testKeys['plans.notes.business'], 'late-tester');
    world.clock.advanceDays(40);
    // Each pass of one renews a due test-mode one (the earlier test's too) until none is left.
    let passes = 0;
    while ((await world.core.sweeps.renewals(1)) === 1) passes++;
    expect(passes).toBeGreaterThanOrEqual(1);
    const renewed = (await world.core.subscriptions.get(org.testTenant, test.id)).subscription;
    expect(renewed.currentPeriodEnd.getTime()).toBeGreaterThan(world.clock.now().getTime());
  });
});
