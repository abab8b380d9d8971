import request from 'supertest';
import { createTestWorld, seedOrganisation, type SeededOrg, type TestWorld } from '@tollgate/runtime/testing';
import { createCatalogApp } from '../src';
import { catalogApi } from './helpers';

// Carts (#10-16) and cart items (#8-9): a cart with several plans checked out through the sandbox's
// hosted checkout as one payment, into one subscription holding every plan. Every answer is checked against its route's schema by the
// response audit.
let world: TestWorld;
let org: SeededOrg;
let other: SeededOrg;
let app: ReturnType<typeof createCatalogApp>;

beforeAll(async () => {
  world = await createTestWorld();
  org = await seedOrganisation(world, 'carts-org');
  other = await seedOrganisation(world, 'carts-other');
  app = createCatalogApp(world);
});
afterAll(() => world?.close());

const api = (key = org.liveKey) => catalogApi(app, key);
const monthly = { interval: 'month', intervalCount: 1 };
const newCart = async (owner: string, key = org.liveKey) =>
  (
    await api(key)
      .post('/api/carts', { owner, ...monthly, currency: 'USD' })
      .expect(201)
  ).body.data as { id: string; ownerId: string };
const addItem = (cartId: string, planId: string, extra: object = {}) =>
  api().post('/api/cart-items', { cartId, planId, ...monthly, ...extra });

describe('carts', () => {
  it('checks a cart with several plans out through the sandbox as one checkout and one subscription, and is then complete', async () => {
    const cart = await newCart('cart-owner@example.com');
    const team = (await addItem(cart.id, org.keys['plans.notes.team'], { grantee: 'team-user' }).expect(201)).body.data;
    expect(team).toMatchObject({
      cartId: cart.id,
      planId: org.keys['plans.notes.team'],
      granteeId: 'team-user',
      groupId: null,
      metadata: null,
    });
    const plan = (await api().get(`/api/plans/${org.keys['plans.notes.business']}?expand=lineItems`).expect(200)).body.data;
    const seatSlug = plan.lineItems.data.find((l: { priceType: string }) => l.priceType === 'per_seat').slug;
    await addItem(cart.id, org.keys['plans.notes.business'], { metadata: { [seatSlug]: { quantity: 4 } } }).expect(201);

    const detail = (await api().get(`/api/carts/${cart.id}`).expect(200)).body.data;
    expect(detail).toMatchObject({ status: 'active', currency: 'USD', interval: 'month', owner: { value: 'cart-owner@example.com' } });
    expect(detail.cartItems.data).toHaveLength(2);
    expect(detail.cartItems.data[1].plan.product.type).toBe('object');
    expect(detail.cartItems.data[1].plan.lineItems.data[0].prices.data[0].currencyOptions.type).toBe('list');

    const link = (
      await api()
        .post(`/api/carts/${cart.id}/checkout`, {
          email: 'cart-owner@example.com',
          successUrl: 'https://vendor.example.com/paid',
          cancelUrl: 'https://vendor.example.com/cart',
          allowPromoCodes: false,
          automaticTax: false,
          collectBillingAddress: false,
          collectShippingAddress: false,
          cardPrefillPreference: 'none',
          trialPeriodDays: 3,
        })
        .expect(200)
    ).body.data.url as string;
    // One checkout for both plans: paying it leads to the vendor's page and starts ONE subscription holding both.
    const paid = await request(app)
      .post(`${new URL(link).pathname}/pay`)
      .type('form')
      .send({})
      .expect(303);
    expect(paid.headers.location).toContain('https://vendor.example.com/paid');
    expect((await api().get(`/api/carts/${cart.id}`).expect(200)).body.data.status).toBe('complete');
    const subscriptions = (await api().get(`/api/subscriptions?owner=cart-owner@example.com&expand=subscriptionPlans`).expect(200)).body
      .data;
    expect(subscriptions).toHaveLength(1);
    expect(subscriptions[0].subscriptionPlans.data.map((p: { planId: string; seats: number }) => [p.planId, p.seats])).toEqual([
      [org.keys['plans.notes.team'], 2],
      [org.keys['plans.notes.business'], 4],
    ]);
    // The team plan's seat goes to its grantee, the business plan's first to the owner (no grantee named).
    const holders = async (planId: string) =>
      (await world.core.licenses.list(org.tenant, { subscriptionId: subscriptions[0].id, planId })).map((l) => l.granteeId);
    const teamSeats = await holders(org.keys['plans.notes.team']);
    expect([teamSeats.length, teamSeats.filter((g) => g !== null)]).toEqual([2, ['team-user']]);
    const businessSeats = await holders(org.keys['plans.notes.business']);
    expect([businessSeats.length, businessSeats.filter((g) => g !== null)]).toEqual([4, ['cart-owner@example.com']]);
    // One receipt of the owner, with both plans' line items; the per-seat one with the seats asked for.
    const receipts = (await api().get(`/api/receipts?owner=${cart.ownerId}`).expect(200)).body.data;
    expect(receipts).toHaveLength(1);
    const items = (await api().get(`/api/receipts/${receipts[0].id}?expand=receiptItems`).expect(200)).body.data.receiptItems.data;
    expect(
      items.filter((i: { lineItem: { slug: string } }) => i.lineItem.slug === seatSlug).map((i: { quantity: number }) => i.quantity),
    ).toEqual([4]);
    // Found by a line item of either plan it bought (the business plan is the cart's second).
    const seatItem = plan.lineItems.data.find((l: { slug: string }) => l.slug === seatSlug).id as string;
    const byLineItem = (await api().get(`/api/receipts?owner=${cart.ownerId}&lineItems=${seatItem}`).expect(200)).body.data;
    expect(byLineItem.map((r: { id: string }) => r.id)).toEqual([receipts[0].id]);
    // The sandbox's first invoice has a line per plan.
    const invoice = (await api().get(`/api/subscriptions/${subscriptions[0].id}/invoices`).expect(200)).body.data.at(-1);
    expect(invoice.lines.data).toHaveLength(2);
    expect((await api().get('/api/carts?status=complete').expect(200)).body.data.map((c: { id: string }) => c.id)).toContain(cart.id);
    // A complete cart changes no more.
    await addItem(cart.id, org.keys['plans.notes.team']).expect(400);
    await api().post(`/api/carts/${cart.id}/checkout`, {}).expect(400);
  });

  it('refuses at checkout a cart holding a plan Tollgate would not bill as its line items price it (a base fee beside seats), and makes nothing', async () => {
    const product = (await api().post('/api/products', { name: 'Cart fees' }).expect(201)).body.data;
    const line = (slug: string, priceType: string, unitAmount: number) => ({
      name: slug,
      slug,
      priceType,
      intervalType: 'recurring',
      billingScheme: 'per_unit',
      tiersMode: null,
      minQuantity: 1,
      maxQuantity: 20,
      prices: [{ defaultCurrency: 'USD', ...monthly, currencyOptions: [{ currency: 'USD', unitAmount }] }],
    });
    const save = async (name: string, lineItems: object[]) =>
      (await api().post('/api/plans/save', { productId: product.id, name, lineItems }).expect(201)).body.data.id as string;
    const seatsOnly = await save('Cart seats', [line('seats', 'per_seat', 1000)]);
    const withBase = await save('Cart base and seats', [line('seats', 'per_seat', 1000), line('base', 'flat_rate', 5000)]);
    const checkout = (cartId: string) =>
      api().post(`/api/carts/${cartId}/checkout`, {
        successUrl: 'https://vendor.example.com/ok',
        cancelUrl: 'https://vendor.example.com/no',
      });
    // Its other plan: refused naming the cart's items; its first plan: naming the plan, as a checkout of it.
    const extra = await newCart('cart-fees@example.com');
    await addItem(extra.id, seatsOnly).expect(201);
    await addItem(extra.id, withBase).expect(201);
    expect((await checkout(extra.id).expect(400)).body.errors).toEqual([
      { property: 'cartItems', message: expect.stringContaining('its line item base would not be charged') },
    ]);
    const first = await newCart('cart-fees-first@example.com');
    await addItem(first.id, withBase).expect(201);
    expect((await checkout(first.id).expect(400)).body.errors).toEqual([
      { property: 'planId', message: expect.stringContaining('its line item base would not be charged') },
    ]);
    for (const cart of [extra, first]) expect((await api().get(`/api/carts/${cart.id}`).expect(200)).body.data.status).toBe('active');
    expect((await api().get('/api/subscriptions?owner=cart-fees@example.com').expect(200)).body.data).toEqual([]);
    // The sellable plan alone still checks out.
    const fine = await newCart('cart-fees-fine@example.com');
    await addItem(fine.id, seatsOnly).expect(201);
    await checkout(fine.id).expect(200);
  });

  it('lists by status, owner and id; replaces (PUT 204), removes items, abandons one or many', async () => {
    const a = await newCart('lister@example.com');
    const b = await newCart('lister@example.com');
    const c = await newCart('someone-else@example.com');
    const item = (await addItem(a.id, org.keys['plans.notes.team']).expect(201)).body.data;
    const gone = (await addItem(a.id, org.keys['plans.notes.business']).expect(201)).body.data;
    await api()
      .put(`/api/carts/${a.id}`, { currency: 'EUR', owner: 'new-owner@example.com', cartItems: [{ id: item.id, granteeId: 'renamed' }] })
      .expect(204);
    const replaced = (await api().get(`/api/carts/${a.id}`).expect(200)).body.data;
    expect(replaced).toMatchObject({ currency: 'EUR', owner: { value: 'new-owner@example.com' } });
    expect(replaced.cartItems.data.map((i: { id: string; granteeId: string }) => [i.id, i.granteeId])).toEqual([[item.id, 'renamed']]);
    const bad = await api()
      .put(`/api/carts/${a.id}`, { currency: null, owner: 'x', cartItems: [{ id: gone.id }] })
      .expect(400);
    expect(bad.body.errors[0].property).toBe('cartItems[0].id');
    await api().del(`/api/cart-items/${item.id}`).expect(204);
    expect((await api().get(`/api/carts/${a.id}`).expect(200)).body.data.cartItems.data).toEqual([]);

    const byOwner = (await api().get(`/api/carts?ownerId=${b.ownerId}&expand=owner`).expect(200)).body.data;
    expect(byOwner.map((x: { id: string }) => x.id)).toEqual([b.id]);
    expect(byOwner[0].owner.value).toBe('lister@example.com');
    expect(
      (
        await api()
          .get(`/api/carts?search=${c.id.slice(0, 13)}`)
          .expect(200)
      ).body.data.map((x: { id: string }) => x.id),
    ).toEqual([c.id]);
    await api().get('/api/carts?status=nope').expect(400);
    expect((await api().get('/api/carts?ownerId=owner_123').expect(200)).body.data).toEqual([]);

    await api().del(`/api/carts/${a.id}`).expect(204);
    await api().del(`/api/carts/${a.id}`).expect(400);
    const batch = (
      await api()
        .post('/api/carts/batch', { action: 'abandon', cartIds: [a.id, b.id, c.id] })
        .expect(200)
    ).body.data;
    expect(batch).toMatchObject({ total: 3, succeeded: 2, skipped: 1, failed: 0 });
    expect(batch.results.find((r: { id: string }) => r.id === a.id)).toMatchObject({ status: 'skipped' });
    expect((await api().get('/api/carts?status=abandoned&limit=100').expect(200)).body.data.map((x: { id: string }) => x.id)).toEqual(
      expect.arrayContaining([a.id, b.id, c.id]),
    );
  });

  it('refuses what does not fit: another interval, an archived plan, another organisation, a batch with a stranger', async () => {
    const cart = await newCart('strict@example.com');
    expect((await addItem(cart.id, org.keys['plans.notes.team'], { interval: 'year' }).expect(400)).body.errors[0].property).toBe(
      'interval',
    );
    const yearly = (await api().post('/api/carts', { owner: 'strict@example.com', interval: 'year', intervalCount: 1 }).expect(201)).body
      .data;
    expect((await addItem(yearly.id, org.keys['plans.notes.team'], { interval: 'year' }).expect(400)).body.errors[0].property).toBe(
      'interval',
    );
    await addItem(cart.id, org.keys['plans.notes.team'], { metadata: { nope: { quantity: 1 } } }).expect(400);
    await api().post('/api/carts', { owner: 'x' }).expect(400);
    // One subscription holds a plan once: the same plan twice in a cart is refused at checkout, nothing made.
    const twice = await newCart('twice@example.com');
    await addItem(twice.id, org.keys['plans.notes.team'], { grantee: 'one' }).expect(201);
    await addItem(twice.id, org.keys['plans.notes.team'], { grantee: 'two' }).expect(201);
    const refused = await api()
      .post(`/api/carts/${twice.id}/checkout`, { successUrl: 'https://vendor.example.com/ok', cancelUrl: 'https://vendor.example.com/no' })
      .expect(400);
    expect(refused.body.errors[0].property).toBe('cartItems');
    expect((await api().get(`/api/carts/${twice.id}`).expect(200)).body.data.status).toBe('active');
    expect((await api().get('/api/subscriptions?owner=twice@example.com').expect(200)).body.data).toEqual([]);
    const foreign = await newCart('stranger@example.com', other.liveKey);
    expect([403, 404]).toContain((await api().get(`/api/carts/${foreign.id}`)).status);
    expect([403, 404]).toContain((await addItem(foreign.id, org.keys['plans.notes.team'])).status);
    expect(
      (
        await api()
          .post('/api/carts/batch', { action: 'abandon', cartIds: [cart.id, foreign.id] })
          .expect(403)
      ).body.detail,
    ).toMatch(/different organisation/);
    const unknown = '3f1e9a52-8c4b-4d7e-9f21-6a0b5c8d7e13';
    expect(
      (
        await api()
          .post('/api/carts/batch', { action: 'abandon', cartIds: [cart.id, unknown] })
          .expect(404)
      ).body.detail,
    ).toMatch(/not found/);
    // Any id is taken (as published); one that names no cart is not found.
    await api()
      .post('/api/carts/batch', { action: 'abandon', cartIds: ['cart_123'] })
      .expect(404);
    expect((await api().get(`/api/carts/${cart.id}`).expect(200)).body.data.status).toBe('active');
    await api(other.liveKey)
      .post('/api/cart-items', { cartId: cart.id, planId: org.keys['plans.notes.team'], ...monthly })
      .expect((r) => expect([403, 404]).toContain(r.status));
    await api(org.readOnlyKey).get('/api/carts').expect(403);
  });

  it('sells no inactive plan (isActive: false): not into a cart, not at a cart checkout, not by quick checkout; on sale again it sells', async () => {
    const team = org.keys['plans.notes.team'];
    const cart = await newCart('paused@example.com');
    await addItem(cart.id, team, { grantee: 'before-pause' }).expect(201);
    await api().put(`/api/plans/${team}`, { isActive: false }).expect(200);
    try {
      const item = await addItem(cart.id, team).expect(400);
      expect(item.body.detail).toMatch(/not on sale/);
      const urls = { successUrl: 'https://vendor.example.com/ok', cancelUrl: 'https://vendor.example.com/no' };
      // A cart that took the plan while it was on sale is not checked out once it is off sale; nothing is made.
      const held = await api().post(`/api/carts/${cart.id}/checkout`, urls).expect(400);
      expect(held.body.detail).toMatch(/not on sale/);
      expect((await api().get(`/api/carts/${cart.id}`).expect(200)).body.data.status).toBe('active');
      const quick = await api()
        .post('/api/checkout', { planId: team, owner: 'paused@example.com', ...monthly, currency: 'USD', ...urls })
        .expect(400);
      expect(quick.body.detail).toMatch(/not on sale/);
    } finally {
      await api().put(`/api/plans/${team}`, { isActive: true }).expect(200);
    }
    await addItem(cart.id, org.keys['plans.notes.business']).expect(201);
    await api()
      .post('/api/checkout', {
        planId: team,
        owner: 'paused@example.com',
        ...monthly,
        currency: 'USD',
        successUrl: 'https://vendor.example.com/ok',
        cancelUrl: 'https://vendor.example.com/no',
      })
      .expect(200);
  });
});
