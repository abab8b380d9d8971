import { FakePaymentProvider } from '@tollgate/core/testing';
import { createTestWorld, seedOrganisation, type SeededOrg, type TestWorld } from '@tollgate/runtime/testing';
import request from 'supertest';
import { createV1App } from '../src';
import { v1 } from './helpers';

// One deferred checkout link (and every view of the same pricing table for the same customer)
// gives one checkout session: neither another spelling of its token nor a fresh signature (a
// reloaded table signs its links anew, with a new expiry) makes another.
let world: TestWorld;
let app: ReturnType<typeof createV1App>;
let org: SeededOrg;
let api: ReturnType<typeof v1>;
const payments = new FakePaymentProvider();

beforeAll(async () => {
  world = await createTestWorld({ payments });
  app = createV1App(world);
  org = await seedOrganisation(world, 'deferred-org');
  api = v1(app, org.liveKey);
});
afterAll(() => world?.close());

const globalParams =
  'globalSuccessUrl=https://app.example.com/ok&globalCancelUrl=https://app.example.com/cancel&globalGranteeId=alice&member=m@example.com';

/** The path of the Team plan's deferred link in a fresh view of the pricing table. */
async function teamLink(extra = ''): Promise<string> {
  const res = await api.get(`/pricing-tables/${org.keys['pricingTables.notes.main']}?${globalParams}${extra}`).expect(200);
  const team = res.body.plans.find((p: { plan: { displayName: string } }) => p.plan.displayName === 'Team').plan;
  return new URL(team.checkoutUrl).pathname;
}
const sessionOf = (location: string) => location.split('/').pop();

describe('deferred checkout links', () => {
  it('refuses a link with anything added to its token (404, no session), and reuses the session for the link itself', async () => {
    const path = await teamLink();
    const first = await request(app).get(path).expect(303);
    const made = payments.calls.filter((c) => c.op === 'checkoutLink').length;
    for (const extra of ['.a', '.b', '.', '..x'])
      expect((await request(app).get(`${path}${extra}`).expect(404)).body.code).toBe('NOT_FOUND');
    expect(payments.calls.filter((c) => c.op === 'checkoutLink').length).toBe(made);
    expect(sessionOf((await request(app).get(path).expect(303)).headers.location)).toBe(sessionOf(first.headers.location));
  });

  it('gives the links of every view of a table for the same customer and plan one session; another request another', async () => {
    const start = world.clock.now();
    try {
      const first = await request(app)
        .get(await teamLink())
        .expect(303);
      // The table viewed again later: its links are signed anew (another expiry, another token).
      world.clock.set(new Date(start.getTime() + 60_000));
      const again = await teamLink();
      world.clock.set(new Date(start.getTime() + 120_000));
      const third = await teamLink();
      expect(again).not.toBe(third);
      expect(sessionOf((await request(app).get(again).expect(303)).headers.location)).toBe(sessionOf(first.headers.location));
      expect(sessionOf((await request(app).get(third).expect(303)).headers.location)).toBe(sessionOf(first.headers.location));
      // Another currency, another request: its own session.
      const euros = await request(app)
        .get(await teamLink('&currency=EUR'))
        .expect(303);
      expect(sessionOf(euros.headers.location)).not.toBe(sessionOf(first.headers.location));
    } finally {
      world.clock.set(start);
    }
  });

  it('refuses a token signed by the same key that is not a checkout link (a pricing page link)', async () => {
    const { body } = await api.get(`/pricing-tables/${org.keys['pricingTables.notes.main']}/page-link?${globalParams}`).expect(200);
    const token = new URL(body.url).searchParams.get('token') as string;
    const made = payments.calls.filter((c) => c.op === 'checkoutLink').length;
    expect((await request(app).get(`/checkout/start/${token}`).expect(404)).body.code).toBe('NOT_FOUND');
    expect(payments.calls.filter((c) => c.op === 'checkoutLink').length).toBe(made);
  });
});
