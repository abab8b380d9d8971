import request from 'supertest';
import { createTestWorld, seedOrganisation, type SeededOrg, type TestWorld } from '@tollgate/runtime/testing';
import { createCatalogApp } from '../src';
import { catalogApi } from './helpers';

// A group as the grantee of a quick checkout (#17) and of a cart item (#8, #14, #16): published as
// "a grantee ID or a group ID starting `grp_`". The seats of the subscription the purchase makes go
// to the group's members, one each, paid in the sandbox (paid plans) or the free checkout (free
// plans). Every answer is checked against its route's schema by the response audit.
let world: TestWorld;
let org: SeededOrg;
let other: SeededOrg;
let app: ReturnType<typeof createCatalogApp>;

beforeAll(async () => {
  world = await createTestWorld();
  org = await seedOrganisation(world, 'group-buy-org');
  other = await seedOrganisation(world, 'group-buy-other');
  app = createCatalogApp(world);
});
afterAll(() => world?.close());

const api = (key = org.liveKey) => catalogApi(app, key);
const monthly = { interval: 'month', intervalCount: 1 };
const pay = async (url: string) =>
  request(app)
    .post(`${new URL(url).pathname}/pay`)
    .type('form')
    .send({})
    .expect(303);
const newGroup = async (owner: string, grantees: string[], key = org.liveKey) =>
  (
    await api(key)
      .post('/api/groups', { owner, name: `${owner} team`, grantees: grantees.map((granteeId) => ({ granteeId })) })
      .expect(200)
  ).body.data as { id: string };
const quick = (body: object, key = org.liveKey) =>
  api(key).post('/api/checkout', {
    successUrl: 'https://vendor.example.com/ok',
    cancelUrl: 'https://vendor.example.com/no',
    ...monthly,
    ...body,
  });
/** The owner's subscriptions, oldest first. */
const subscriptionsOf = async (owner: string) =>
  (
    await api()
      .get(`/api/subscriptions?owner=${encodeURIComponent(owner)}&expand=subscriptionPlans`)
      .expect(200)
  ).body.data as {
    id: string;
    subscriptionPlans: { data: { seats: number; groupId: string }[] };
  }[];
/** The vendor grantee ids holding seats of the subscription (its group's members), and its seat count. */
const seatsOf = async (subscriptionId: string) => {
  const licenses = await world.core.licenses.list(org.tenant, {});
  const mine = licenses.filter((l) => l.subscriptionId === subscriptionId);
  return {
    total: mine.length,
    holders: mine
      .map((l) => l.granteeId)
      .filter((g): g is string => g !== null)
      .sort(),
  };
};
const entitlementsOf = async (granteeId: string) =>
  ((await api().get(`/api/entitlements/check?granteeId=${granteeId}`).expect(200)).body.data.entitlements as { value: string }[])
    .map((e) => e.value)
    .sort();
const seatSlugOf = async (planId: string) =>
  (await api().get(`/api/plans/${planId}?expand=lineItems`).expect(200)).body.data.lineItems.data.find(
    (l: { priceType: string }) => l.priceType === 'per_seat',
  ).slug as string;

describe('a group as the grantee of a quick checkout', () => {
  it('gives every member of a standalone group a seat of the new subscription (the seats grow to the members)', async () => {
    const group = await newGroup('buyer-a@example.com', ['ann', 'ben', 'cal']);
    // team: per seat, at least 2 seats; three members make it three.
    const link = (
      await quick({ planId: org.keys['plans.notes.team'], owner: 'buyer-a@example.com', grantee: `grp_${group.id}` }).expect(200)
    ).body.data.url as string;
    await pay(link);
    const [sub] = await subscriptionsOf('buyer-a@example.com');
    expect(sub.subscriptionPlans.data[0]).toMatchObject({ seats: 3, groupId: sub.id });
    expect(await seatsOf(sub.id)).toEqual({ total: 3, holders: ['ann', 'ben', 'cal'] });
    for (const g of ['ann', 'ben', 'cal']) expect(await entitlementsOf(g)).toEqual(['edit', 'export']);
    // The subscription's group shows them as its members; the standalone group keeps its own.
    const members = (await api().get(`/api/groups/${sub.id}?expand=memberships`).expect(200)).body.data.memberships.data;
    expect(members.map((m: { grantee: { granteeId: string } }) => m.grantee.granteeId).sort()).toEqual(['ann', 'ben', 'cal']);
    expect((await api().get(`/api/grantees?groupId=${group.id}`).expect(200)).body.data).toHaveLength(3);
  });

  it('takes a bare group id (as `GET /api/groups` shows it) and a subscription’s group; extra seats start free', async () => {
    const group = await newGroup('buyer-b@example.com', ['dee', 'eve']);
    const business = org.keys['plans.notes.business'];
    const seatSlug = await seatSlugOf(business);
    await pay(
      (
        await quick({
          planId: business,
          owner: 'buyer-b@example.com',
          grantee: group.id,
          metadata: { [seatSlug]: { quantity: 2 } },
        }).expect(200)
      ).body.data.url,
    );
    const [first] = await subscriptionsOf('buyer-b@example.com');
    expect(await seatsOf(first.id)).toEqual({ total: 2, holders: ['dee', 'eve'] });
    // The first subscription's group (its id) buys another plan for the same people, with 4 seats.
    await pay(
      (
        await quick({
          planId: org.keys['plans.notes.team'],
          owner: 'buyer-b@example.com',
          grantee: `grp_${first.id}`,
          metadata: { [await seatSlugOf(org.keys['plans.notes.team'])]: { quantity: 4 } },
        }).expect(200)
      ).body.data.url,
    );
    const second = (await subscriptionsOf('buyer-b@example.com')).find((s) => s.id !== first.id) as { id: string };
    expect(await seatsOf(second.id)).toEqual({ total: 4, holders: ['dee', 'eve'] });
  });

  it('sells a free plan to a group of one through the free checkout', async () => {
    const group = await newGroup('buyer-c@example.com', ['fay']);
    await pay(
      (await quick({ planId: org.keys['plans.notes.free'], owner: 'buyer-c@example.com', grantee: `grp_${group.id}` }).expect(200)).body
        .data.url,
    );
    const [sub] = await subscriptionsOf('buyer-c@example.com');
    expect(await seatsOf(sub.id)).toEqual({ total: 1, holders: ['fay'] });
    expect(await entitlementsOf('fay')).toEqual(['edit']);
  });

  it('refuses a group its seats cannot hold, an unknown group (404) and another organisation’s (403)', async () => {
    const group = await newGroup('buyer-d@example.com', ['gus', 'hal', 'ivy']);
    const business = org.keys['plans.notes.business'];
    const few = await quick({
      planId: business,
      owner: 'buyer-d@example.com',
      grantee: `grp_${group.id}`,
      metadata: { [await seatSlugOf(business)]: { quantity: 2 } },
    }).expect(400);
    expect(few.body.errors[0].property).toBe('grantee');
    // The free plan has one seat: not for three.
    const flat = await quick({ planId: org.keys['plans.notes.free'], owner: 'buyer-d@example.com', grantee: `grp_${group.id}` }).expect(
      400,
    );
    expect(flat.body.errors[0].property).toBe('grantee');
    await quick({ planId: business, owner: 'buyer-d@example.com', grantee: 'grp_6a1f1d8e-0000-4000-8000-000000000000' }).expect(404);
    await quick({ planId: business, owner: 'buyer-d@example.com', grantee: 'grp_not-an-id' }).expect(404);
    const theirs = await newGroup('their-buyer@example.com', ['x'], other.liveKey);
    await quick({ planId: business, owner: 'buyer-d@example.com', grantee: `grp_${theirs.id}` }).expect(403);
    // A bare id of another organisation's group is nobody's group here: an ordinary grantee id.
    await quick({ planId: business, owner: 'buyer-d@example.com', grantee: theirs.id }).expect(200);
    expect(await subscriptionsOf('buyer-d@example.com')).toEqual([]);
  });
});

describe('a group as the grantee of a cart item', () => {
  it('shows the item’s groupId, keeps it through a replace, and seats the members when the cart is paid', async () => {
    const group = await newGroup('cart-buyer@example.com', ['jo', 'kim']);
    const cart = (
      await api()
        .post('/api/carts', { owner: 'cart-buyer@example.com', ...monthly, currency: 'USD' })
        .expect(201)
    ).body.data;
    const item = (
      await api()
        .post('/api/cart-items', { cartId: cart.id, planId: org.keys['plans.notes.team'], grantee: `grp_${group.id}`, ...monthly })
        .expect(201)
    ).body.data;
    expect(item).toMatchObject({ granteeId: null, groupId: group.id });
    const other = (
      await api()
        .post('/api/cart-items', { cartId: cart.id, planId: org.keys['plans.notes.business'], grantee: 'solo', ...monthly })
        .expect(201)
    ).body.data;
    expect(other).toMatchObject({ granteeId: 'solo', groupId: null });
    // A replace naming a grantee moves the item off the group, and back.
    await api()
      .put(`/api/carts/${cart.id}`, {
        currency: 'USD',
        owner: 'cart-buyer@example.com',
        cartItems: [{ id: item.id, granteeId: 'lee' }, { id: other.id }],
      })
      .expect(204);
    let items = (await api().get(`/api/carts/${cart.id}`).expect(200)).body.data.cartItems.data;
    expect(items.map((i: { granteeId: string | null; groupId: string | null }) => [i.granteeId, i.groupId])).toEqual([
      ['lee', null],
      ['solo', null],
    ]);
    await api()
      .put(`/api/carts/${cart.id}`, {
        currency: 'USD',
        owner: 'cart-buyer@example.com',
        cartItems: [{ id: item.id, granteeId: group.id }, { id: other.id }],
      })
      .expect(204);
    items = (await api().get(`/api/carts/${cart.id}`).expect(200)).body.data.cartItems.data;
    expect(items[0]).toMatchObject({ granteeId: null, groupId: group.id });

    const checkout = await api().post(`/api/carts/${cart.id}/checkout`, {
      successUrl: 'https://vendor.example.com/paid',
      cancelUrl: 'https://vendor.example.com/cart',
    });
    expect([checkout.status, checkout.body.errors]).toEqual([200, undefined]);
    let url = checkout.body.data.url as string;
    while (!url.startsWith('https://vendor.example.com/')) url = (await pay(url)).headers.location;
    expect((await api().get(`/api/carts/${cart.id}`).expect(200)).body.data.status).toBe('complete');
    // One subscription holds both plans: the group's members hold the team plan's seats, `solo` the other's.
    const [sub, ...none] = await subscriptionsOf('cart-buyer@example.com');
    expect(none).toEqual([]);
    const held = async (planId: string) =>
      (await world.core.licenses.list(org.tenant, { subscriptionId: sub.id, planId })).map((l) => l.granteeId).sort();
    expect(await held(org.keys['plans.notes.team'])).toEqual(['jo', 'kim']);
    expect(await held(org.keys['plans.notes.business'])).toEqual(['solo']);
  });

  it('refuses a group item its plan cannot seat, and an unknown group', async () => {
    const group = await newGroup('cart-buyer-2@example.com', ['m1', 'm2']);
    const cart = (
      await api()
        .post('/api/carts', { owner: 'cart-buyer-2@example.com', ...monthly, currency: 'USD' })
        .expect(201)
    ).body.data;
    const metered = org.keys['plans.notes.metered'];
    const flat = await api().post('/api/cart-items', { cartId: cart.id, planId: metered, grantee: `grp_${group.id}`, ...monthly });
    if (flat.status !== 400) throw new Error(`expected 400, got ${flat.status}: ${JSON.stringify(flat.body)}`);
    expect(flat.body.errors[0].property).toBe('grantee');
    await api()
      .post('/api/cart-items', {
        cartId: cart.id,
        planId: org.keys['plans.notes.team'],
        grantee: 'grp_6a1f1d8e-0000-4000-8000-000000000001',
        ...monthly,
      })
      .expect(404);
  });
});
