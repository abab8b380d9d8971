import request from 'supertest';
import { createTestWorld, seedOrganisation, type SeededOrg, type TestWorld } from '@tollgate/runtime/testing';
import { createServerApp } from '../src';

// Checkout inputs (payments audit, 2026-11-25): what a checkout link is given is what is used.

let world: TestWorld;
let org: SeededOrg;
let app: ReturnType<typeof createServerApp>;

beforeAll(async () => {
  world = await createTestWorld();
  org = await seedOrganisation(world, 'checkout-inputs-org');
  app = createServerApp(world);
});
afterAll(() => world?.close());

const pathOf = (url: string) => new URL(url).pathname + new URL(url).search;
const link = (key: string, plan: string, query: string) =>
  request(app)
    .get(`/plans/${plan}/checkoutlink?granteeId=alice&member=buyer@example.com&${query}`)
    .set('x-api-key', key)
    .set('version', 'v1');

describe('return URLs are kept normalised', () => {
  it('a successUrl with CR/LF and non-ASCII characters: the paid sandbox checkout redirects to its normalised form (never a 500 after the purchase)', async () => {
    const success = encodeURIComponent('https://vendor.example.com/danke/grüße?x=1\r\nSet-Cookie: a=b');
    const cancel = encodeURIComponent('https://vendor.example.com/zurück');
    const { body } = await link(org.liveKey, org.keys['plans.notes.business'], `successUrl=${success}&cancelUrl=${cancel}`).expect(200);
    const paid = await request(app)
      .post(`${pathOf(body.checkoutUrl)}/pay`)
      .type('form')
      .send({})
      .expect(303);
    expect(paid.headers.location).toBe('https://vendor.example.com/danke/gr%C3%BC%C3%9Fe?x=1Set-Cookie:%20a=b');
    expect(paid.headers['set-cookie']).toBeUndefined();

    const again = await link(org.liveKey, org.keys['plans.notes.business'], `successUrl=${success}&cancelUrl=${cancel}`).expect(200);
    const canceled = await request(app)
      .post(`${pathOf(again.body.checkoutUrl)}/cancel`)
      .type('form')
      .send({})
      .expect(303);
    expect(canceled.headers.location).toBe('https://vendor.example.com/zur%C3%BCck');
  });
});
