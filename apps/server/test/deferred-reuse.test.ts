/* The pages review (twelfth session): a deferred checkout link reuses only an open session on the terms it was made with. */
import request from 'supertest';
import { sampleCatalog } from '@tollgate/core/testing';
import { createTestWorld, seedOrganisation, type SeededOrg, type TestWorld } from '@tollgate/runtime/testing';
import { createServerApp } from '../src';

let world: TestWorld;
let org: SeededOrg;
let app: ReturnType<typeof createServerApp>;
beforeAll(async () => {
  world = await createTestWorld();
  org = await seedOrganisation(world, 'deferred-reuse-org');
  app = createServerApp(world);
});
afterAll(() => world?.close());

const params = 'successUrl=https://app.example.com/ok&cancelUrl=https://app.example.com/cancel&granteeId=bob&member=bob@example.com';

/** A fresh view of the product's checkout links: the paid plan's deferred link. */
const link = async () => {
  const res = await request(app)
    .get(`/products/${org.keys['products.notes']}?expand=generateCheckoutLinks&${params}`)
    .set('x-api-key', org.liveKey)
    .set('version', 'v1')
    .expect(200);
  const paid = (res.body.plans as { pricingType: string; checkoutUrl: string }[]).find((p) => p.pricingType !== 'free');
  return new URL(paid!.checkoutUrl).pathname;
};
/** The checkout session page a link leads to. */
const follow = async (path: string) => new URL((await request(app).get(path).expect(303)).headers.location as string).pathname;

it('a customer who paid and comes back (a new view, an hour later) gets a new session', async () => {
  const first = await follow(await link());
  expect(await follow(await link())).toBe(first);
  await request(app).post(`${first}/pay`).type('form').send({}).expect(303);
  world.clock.set(new Date(world.clock.now().getTime() + 60 * 60 * 1000));
  const again = await follow(await link());
  expect(again).not.toBe(first);
  const page = await request(app).get(again).expect(200);
  expect(page.text).not.toMatch(/already been paid/);
});

it('a reloaded page after a price change gets a new session, on the new price', async () => {
  const first = await follow(await link());
  expect(await follow(await link())).toBe(first);
  const file = sampleCatalog('deferred-reuse-org', false);
  for (const plan of file.products?.[0]?.plans ?? []) {
    const prices = (plan as { prices?: Record<string, number> }).prices;
    if (prices) for (const c of Object.keys(prices)) prices[c] += 7;
  }
  await world.core.importer.apply(file);
  const again = await follow(await link());
  expect(again).not.toBe(first);
  // The new terms make one session again: the next follow reuses it.
  expect(await follow(await link())).toBe(again);
});

describe("a table's customerId is checked when the table is built (payments review)", () => {
  const table = `globalSuccessUrl=https://app.example.com/ok&globalCancelUrl=https://app.example.com/no&globalGranteeId=bob&member=bob@example.com`;
  const v1 = (path: string) => request(app).get(path).set('x-api-key', org.liveKey).set('version', 'v1');
  it.each([
    [
      'a product with its checkout links',
      () => `/products/${org.keys['products.notes']}?expand=generateCheckoutLinks&${params}&customerId=cus_nobody`,
    ],
    ["a product's pricing table", () => `/products/${org.keys['products.notes']}/pricingtable?${table}&customerId=cus_nobody`],
    ['a pricing table', () => `/pricing-tables/${org.keys['pricingTables.notes.main']}?${table}&customerId=cus_nobody`],
    ['a pricing page link', () => `/pricing-tables/${org.keys['pricingTables.notes.main']}/page-link?${table}&customerId=cus_nobody`],
  ])('%s: 400 naming customerId, no link handed out', async (_name, path) => {
    const res = await v1(path()).expect(400);
    expect(JSON.stringify(res.body)).toContain('customerId');
  });
});
