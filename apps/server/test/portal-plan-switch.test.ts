import request from 'supertest';
import { sampleCatalog } from '@tollgate/core/testing';
import { createTestWorld, purchase, type TestWorld } from '@tollgate/runtime/testing';
import { createServerApp } from '../src';

// The sandbox portal's plan switch takes only a plan its page lists (the lifecycle review, twelfth
// session): a private or inactive plan's id sent by hand is refused, and the plan stays.

let world: TestWorld;
let app: ReturnType<typeof createServerApp>;
let key: string;
let plans: Record<string, string>;

beforeAll(async () => {
  world = await createTestWorld();
  await world.core.apiKeys.ensureOrganisation('switch-org');
  const catalog = sampleCatalog('switch-org');
  const [product] = catalog.products ?? [];
  const partner = {
    key: 'partner',
    displayName: 'Partner',
    pricingType: 'paid' as const,
    licenseType: 'perSeat' as const,
    perSeatAmount: 1,
    interval: 'month' as const,
    length: 1,
    prices: { USD: 5 },
    visibility: 'private' as const,
    capabilities: ['edit', 'export', 'admin'],
  };
  const { keys } = await world.core.importer.apply({ ...catalog, products: [{ ...product, plans: [...(product.plans ?? []), partner] }] });
  plans = Object.fromEntries(['team', 'business', 'partner'].map((k) => [k, keys[`plans.notes.${k}`]]));
  key = (await world.core.apiKeys.create({ organisation: 'switch-org', scopes: ['*'], isTest: false })).plaintext;
  app = createServerApp(world);
});
afterAll(() => world?.close());

describe("the sandbox portal's plan switch", () => {
  it('refuses a plan the page does not list (a private one), and switches to one it lists', async () => {
    const { subscription: s } = await purchase(world, plans.team, 'switcher', 2);
    const portalUrl = (
      await request(app).get(`/subscriptions/${s.id}/customer-portal`).set('x-api-key', key).set('version', 'v1').expect(200)
    ).body.url as string;
    const { pathname, search } = new URL(portalUrl);
    const page = await request(app)
      .get(pathname + search)
      .expect(200);
    expect(page.text).toContain(plans.business);
    expect(page.text).not.toContain(plans.partner);

    const refused = await request(app).post(`${pathname}/plan${search}`).type('form').send({ planId: plans.partner });
    expect(refused.status).toBe(400);
    expect(refused.text).not.toMatch(/at \w+ \(/);
    expect((await world.core.subscriptions.get({ organisationId: s.organisationId, isTest: false }, s.id)).subscription.planId).toBe(
      plans.team,
    );

    await request(app).post(`${pathname}/plan${search}`).type('form').send({ planId: plans.business.toUpperCase() }).expect(303);
    expect((await world.core.subscriptions.get({ organisationId: s.organisationId, isTest: false }, s.id)).subscription.planId).toBe(
      plans.business,
    );
  });
});
