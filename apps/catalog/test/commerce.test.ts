import request from 'supertest';
import { createTestWorld, seedOrganisation, type SeededOrg, type TestWorld } from '@tollgate/runtime/testing';
import { createCatalogApp } from '../src';
import { catalogApi } from './helpers';

// Quick checkout (#17), paid in the sandbox, seen as receipts (#80-81); payment integrations
// (#56-59); copy-to-live-mode (#73). Every answer is checked against its route's schema by the
// response audit.
let world: TestWorld;
let org: SeededOrg;
let other: SeededOrg;
let app: ReturnType<typeof createCatalogApp>;

beforeAll(async () => {
  world = await createTestWorld();
  org = await seedOrganisation(world, 'commerce-org');
  other = await seedOrganisation(world, 'commerce-other');
  app = createCatalogApp(world);
});
afterAll(() => world?.close());

const api = (key = org.liveKey) => catalogApi(app, key);
const pay = async (url: string, form: object = {}) =>
  request(app)
    .post(`${new URL(url).pathname}/pay`)
    .type('form')
    .send(form)
    .expect(303);

describe('quick checkout and receipts', () => {
  it('makes a sandbox checkout link from the published body, paid into a subscription and a receipt', async () => {
    const planId = org.keys['plans.notes.team'];
    const plan = (await api().get(`/api/plans/${planId}?expand=lineItems`).expect(200)).body.data;
    const seatSlug = plan.lineItems.data.find((l: { priceType: string }) => l.priceType === 'per_seat')?.slug;
    expect(seatSlug).toBeDefined();
    const link = (
      await api()
        .post('/api/checkout', {
          planId,
          owner: 'owner-quick@example.com',
          grantee: 'quick-grantee',
          interval: 'month',
          intervalCount: 1,
          currency: 'USD',
          metadata: { [seatSlug]: { quantity: 3 } },
          email: 'owner-quick@example.com',
          successUrl: 'https://vendor.example.com/ok',
          cancelUrl: 'https://vendor.example.com/no',
          allowPromoCodes: false,
          automaticTax: false,
          collectBillingAddress: true,
          collectShippingAddress: false,
          cardPrefillPreference: 'none',
          trialPeriodDays: 7,
        })
        .expect(200)
    ).body;
    expect(link).toMatchObject({ type: 'object', data: { url: expect.stringMatching(/^https?:\/\//) } });
    await pay(link.data.url);

    const receipts = (await api().get('/api/receipts?expand=owner&search=owner-quick').expect(200)).body.data;
    expect(receipts).toHaveLength(1);
    const [receipt] = receipts;
    expect(receipt).toMatchObject({ subscriptionId: expect.any(String), owner: { value: 'owner-quick@example.com' } });
    const detail = (await api().get(`/api/receipts/${receipt.id}?expand=owner,receiptItems`).expect(200)).body.data;
    const seats = detail.receiptItems.data.find((i: { lineItem: { slug: string } }) => i.lineItem.slug === seatSlug);
    expect(seats.quantity).toBe(3);
    expect((await api().get(`/api/receipts?subscriptionId=${receipt.subscriptionId}`).expect(200)).body.data).toHaveLength(1);
    expect((await api().get(`/api/receipts?owner=${receipt.ownerId}`).expect(200)).body.data.map((r: { id: string }) => r.id)).toEqual([
      receipt.id,
    ]);
    expect((await api(other.liveKey).get('/api/receipts').expect(200)).body.data).toEqual([]);
    expect((await api().get('/api/receipts?owner=owner_123').expect(200)).body.data).toEqual([]);
    expect([403, 404]).toContain((await api(other.liveKey).get(`/api/receipts/${receipt.id}`)).status);
  });

  it('lists receipts newest first with cursors leading on in that order, and by the line items bought', async () => {
    const team = org.keys['plans.notes.team'];
    const business = org.keys['plans.notes.business'];
    for (const [i, planId] of [team, business, team].entries()) {
      const link = (
        await api()
          .post('/api/checkout', {
            planId,
            owner: `rsort-${i}`,
            interval: 'month',
            intervalCount: 1,
            successUrl: 'https://v.example.com/ok',
            cancelUrl: 'https://v.example.com/no',
          })
          .expect(200)
      ).body;
      await pay(link.data.url);
    }
    const ids = (body: { data: { id: string }[] }) => body.data.map((r) => r.id);
    const listed = (await api().get('/api/receipts?search=rsort-&expand=owner').expect(200)).body.data;
    const asc = listed.map((r: { id: string }) => r.id);
    expect(asc).toHaveLength(3);
    const boughtBy = (...owners: string[]) =>
      listed.filter((r: { owner: { value: string } }) => owners.includes(r.owner.value)).map((r: { id: string }) => r.id);
    const first = (await api().get('/api/receipts?search=rsort-&sort=desc&limit=2').expect(200)).body;
    expect(first).toMatchObject({ hasMore: true, previousCursor: null });
    const second = (await api().get(`/api/receipts?search=rsort-&sort=desc&limit=2&after=${first.nextCursor}`).expect(200)).body;
    expect(second).toMatchObject({ hasMore: false, nextCursor: null });
    expect([...ids(first), ...ids(second)]).toEqual([...asc].reverse());
    const back = (await api().get(`/api/receipts?search=rsort-&sort=DESC&limit=2&before=${second.previousCursor}`).expect(200)).body;
    expect(ids(back)).toEqual(ids(first));
    expect((await api().get('/api/receipts?sort=newest').expect(400)).body.errors[0].property).toMatch('sort');
    // lineItems: the receipts of the plans those line items belong to (ids, comma-separated, any case).
    const lineItemsOf = async (planId: string) =>
      (await api().get(`/api/plans/${planId}?expand=lineItems`).expect(200)).body.data.lineItems.data.map((l: { id: string }) => l.id);
    const [teamItem] = await lineItemsOf(team);
    const [businessItem] = await lineItemsOf(business);
    const teamReceipts = ids((await api().get(`/api/receipts?search=rsort-&lineItems=${teamItem.toUpperCase()}`).expect(200)).body);
    expect(teamReceipts).toEqual(boughtBy('rsort-0', 'rsort-2'));
    expect(ids((await api().get(`/api/receipts?search=rsort-&lineItems=${businessItem}`).expect(200)).body)).toEqual(boughtBy('rsort-1'));
    expect(ids((await api().get(`/api/receipts?search=rsort-&lineItems=${teamItem},${businessItem}`).expect(200)).body)).toEqual(asc);
    expect((await api().get('/api/receipts?lineItems=00000000-0000-4000-8000-000000000000,li_unknown').expect(200)).body.data).toEqual([]);
    expect((await api(other.liveKey).get(`/api/receipts?lineItems=${teamItem}`).expect(200)).body.data).toEqual([]);
    // The owners' expansions: receipts in the list, carts in the detail.
    const owners = (await api().get('/api/owners?search=rsort-&expand=receipts').expect(200)).body.data;
    expect(owners).toHaveLength(3);
    for (const o of owners)
      expect(o.receipts).toMatchObject({
        type: 'list',
        hasMore: false,
        path: `/api/receipts?owner=${o.id}`,
        data: [{ id: boughtBy(o.value)[0], ownerId: o.id }],
      });
    expect(owners[0]).not.toHaveProperty('subscriptions');
    const cart = (await api().post('/api/carts', { owner: owners[0].value, interval: 'month', intervalCount: 1 }).expect(201)).body.data;
    const detail = (await api().get(`/api/owners/${owners[0].id}?expand=carts`).expect(200)).body.data;
    expect(detail.carts).toMatchObject({ type: 'list', hasMore: false, data: [{ id: cart.id, ownerId: owners[0].id }] });
    expect(detail).not.toHaveProperty('groups');
    expect((await api().get(`/api/owners/${owners[1].id}?expand=carts`).expect(200)).body.data.carts.data).toEqual([]);
  });

  it('takes the URLs from the product settings and the grantee from the owner; refuses what the plan does not sell', async () => {
    const productId = org.keys['products.notes'];
    await api()
      .put(`/api/products/${productId}`, {
        settings: { successUrl: 'https://vendor.example.com/done', cancelUrl: 'https://vendor.example.com/back' },
      })
      .expect(200);
    const planId = org.keys['plans.notes.team'];
    const link = (await api().post('/api/checkout', { planId, owner: 'bare-owner', interval: 'month', intervalCount: 1 }).expect(200)).body
      .data;
    await pay(link.url);
    const [receipt] = (await api().get('/api/receipts?search=bare-owner').expect(200)).body.data;
    expect(receipt).toBeDefined();
    // The wrong interval, a one-off, an unknown line item slug, a missing owner: 400 naming the field.
    const bad = async (body: object, property: string) =>
      expect(
        (
          await api()
            .post('/api/checkout', { planId, owner: 'x', interval: 'month', intervalCount: 1, ...body })
            .expect(400)
        ).body.errors[0].property,
      ).toContain(property);
    await bad({ interval: 'year' }, 'interval');
    await bad({ interval: null, intervalCount: null }, 'interval');
    await bad({ metadata: { no_such_slug: { quantity: 1 } } }, 'metadata');
    await bad({ owner: undefined }, 'owner');
    expect([403, 404]).toContain(
      (await api(other.liveKey).post('/api/checkout', { planId, owner: 'x', interval: 'month', intervalCount: 1 })).status,
    );
  });
});

describe('payment integrations', () => {
  it('lists the sandbox as an active integration; create answers 204; delete and onboarding say why not (400)', async () => {
    const list = (await api().get('/api/payment-integrations').expect(200)).body;
    expect(list.data).toEqual([expect.objectContaining({ provider: 'sandbox', status: 'active', accountType: 'standard' })]);
    await api().post('/api/payment-integrations', { emailAddress: 'billing@vendor.example.com' }).expect(204);
    expect((await api().get('/api/payment-integrations').expect(200)).body.data).toHaveLength(1);
    const id = list.data[0].id;
    expect((await api().del(`/api/payment-integrations/${id}`).expect(400)).body.detail).toMatch(/deployment's configuration/);
    expect((await api().post(`/api/payment-integrations/${id}/onboarding`).expect(400)).body.detail).toMatch(/nothing to onboard/);
    await api().post('/api/payment-integrations', {}).expect(400);
    expect([403, 404]).toContain((await api(other.liveKey).del(`/api/payment-integrations/${id}`)).status);
    await api(org.readOnlyKey).get('/api/payment-integrations').expect(403);
  });
});

describe('copy to live mode', () => {
  it('copies a test-mode product with its plans into live mode (201 {id}); again updates the same copy; live keys are refused', async () => {
    const created = (await api(org.testKey).post('/api/products', { name: 'Copied' }).expect(201)).body.data;
    await api(org.testKey).post('/api/plans', { name: 'Copied plan', productId: created.id }).expect(201);
    const copy = (await api(org.testKey).post('/api/products/copy-to-live-mode', { id: created.id }).expect(201)).body;
    expect(Object.keys(copy)).toEqual(['id']);
    expect(copy.id).not.toBe(created.id);
    const live = (await api().get(`/api/products/${copy.id}?expand=plans`).expect(200)).body.data;
    expect(live).toMatchObject({ name: 'Copied' });
    expect(live.plans.data.map((p: { name: string }) => p.name)).toContain('Copied plan');
    const again = (await api(org.testKey).post('/api/products/copy-to-live-mode', { id: created.id }).expect(201)).body;
    expect(again.id).toBe(copy.id);
    // A live key: its own (live) product is refused as published; the test product is the other mode's.
    expect((await api().post('/api/products/copy-to-live-mode', { id: copy.id }).expect(400)).body.detail).toMatch(/test-mode API key/);
    expect([403, 404]).toContain((await api().post('/api/products/copy-to-live-mode', { id: created.id })).status);
    expect([403, 404]).toContain((await api(other.testKey).post('/api/products/copy-to-live-mode', { id: created.id })).status);
    await api(org.testKey).post('/api/products/copy-to-live-mode', { id: 'prod_123' }).expect(404);
  });
});
