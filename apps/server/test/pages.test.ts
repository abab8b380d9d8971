import request from 'supertest';
import { createTestWorld, seedOrganisation, type SeededOrg, type TestWorld } from '@tollgate/runtime/testing';
import { createServerApp } from '../src';

let world: TestWorld;
let org: SeededOrg;
let app: ReturnType<typeof createServerApp>;
let pricingKey: string;

beforeAll(async () => {
  world = await createTestWorld();
  org = await seedOrganisation(world, 'pages-org');
  pricingKey = (await world.core.apiKeys.create({ organisation: 'pages-org', scopes: ['pricing-tables:read'], isTest: false })).plaintext;
  app = createServerApp({ ...world, demoPricingPage: 'http://localhost:3000/pricing-tables/x/page?token=demo' });
});
afterAll(() => world?.close());

const table = () => org.keys['pricingTables.notes.main'];
const customer = (extra = '') =>
  `globalSuccessUrl=${encodeURIComponent('https://vendor.example/ok')}&globalCancelUrl=${encodeURIComponent('https://vendor.example/no')}` +
  `&globalGranteeId=cust-1&member=cust@example.com${extra}`;
const pageLink = (extra = '') =>
  request(app)
    .get(`/pricing-tables/${table()}/page-link?${customer(extra)}`)
    .set('x-api-key', pricingKey)
    .set('version', 'v1');
const pathOf = (url: string) => {
  const u = new URL(url);
  return `${u.pathname}${u.search}`;
};

describe('GET / and /docs', () => {
  it('answers a person opening the address with a small HTML page: what runs, its version, links', async () => {
    const res = await request(app).get('/').expect(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.text).toContain('<h1>Tollgate</h1>');
    expect(res.text).toMatch(/<strong id="version">\d+\.\d+\.\d+<\/strong>/);
    for (const href of [
      '/docs',
      '/openapi/v1.json',
      '/openapi/v2.json',
      '/openapi/v3.json',
      '/openapi/catalog.json',
      '/openapi/legacy.json',
      '/healthz',
      '/readyz',
      '/metrics',
    ])
      expect(res.text).toContain(`href="${href}"`);
    expect(res.text).toContain('id="demo-pricing" href="http://localhost:3000/pricing-tables/x/page?token=demo"');
  });

  it('serves the API reference page and its renderer from the package, not a CDN', async () => {
    const res = await request(app).get('/docs').expect(200);
    expect(res.text).not.toMatch(/https?:\/\//);
    expect(res.text).toContain('/docs/assets/swagger-ui-bundle.js');
    const bundle = await request(app).get('/docs/assets/swagger-ui-bundle.js').expect(200);
    expect(bundle.text.length).toBeGreaterThan(100_000);
    await request(app).get('/docs/assets/swagger-ui.css').expect(200);
    const init = await request(app).get('/docs/init.js').expect(200);
    for (const g of ['v1', 'v2', 'v3', 'catalog', 'legacy']) expect(init.text).toContain(`/openapi/${g}.json`);
    expect(init.text).toContain('validatorUrl: null');
  });
});

describe('hosted pricing table', () => {
  it('gives a signed, expiring page link for one customer to a key with pricing-tables:read', async () => {
    await request(app).get(`/pricing-tables/${table()}/page-link?${customer()}`).set('version', 'v1').expect(401);
    await request(app)
      .get(`/pricing-tables/${table()}/page-link?${customer()}`)
      .set('x-api-key', org.readOnlyKey)
      .set('version', 'v1')
      .expect(403);
    const res = await pageLink().expect(200);
    expect(res.body.url).toMatch(new RegExp(`^http://localhost:3000/pricing-tables/${table()}/page\\?token=`));
    expect(new Date(res.body.expiresAt).getTime() - world.clock.now().getTime()).toBe(7 * 86_400_000);
    // The customer's details are checked when the link is made, not when it is followed.
    const bad = await request(app)
      .get(`/pricing-tables/${table()}/page-link?globalSuccessUrl=nope&globalGranteeId=g&member=m`)
      .set('x-api-key', pricingKey)
      .set('version', 'v1')
      .expect(400);
    expect(bad.body.code).toBe('VALIDATION_FAILED');
    // Another organisation's key cannot make one.
    const other = await seedOrganisation(world, 'pages-other');
    await request(app)
      .get(`/pricing-tables/${table()}/page-link?${customer()}`)
      .set('x-api-key', other.liveKey)
      .set('version', 'v1')
      .expect(403);
  });

  it('renders plans, prices in the chosen currency, features with values, the featured plan and checkout buttons', async () => {
    const { body } = await pageLink().expect(200);
    const page = await request(app).get(pathOf(body.url)).expect(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    const text = page.text;
    expect(text).toContain('<!doctype html>');
    expect(text).toContain('<h1 id="tollgate-pricing-title">Pick a plan</h1>');
    for (const plan of ['Free', 'Team', 'Business']) expect(text).toMatch(new RegExp(`<h2 id="plan-[^"]+">${plan}</h2>`));
    expect(text).toContain('<span class="amount">$12.00</span> <span class="per">per seat per month</span>');
    expect(text).toContain('<span class="amount">Free</span>');
    expect(text).toMatch(/<dt>Projects<\/dt>\s*<dd>3<\/dd>/);
    expect(text).toMatch(/<dt>Projects<\/dt>\s*<dd>Unlimited<\/dd>/);
    expect(text).toMatch(/class="plan featured" data-plan="[^"]+">[\s\S]*?<h2[^>]*>Team<\/h2>[\s\S]*?Recommended/);
    const buttons = [...text.matchAll(/<a class="buy" href="([^"]+)"/g)].map((m) => m[1]);
    expect(buttons).toHaveLength(3);
    for (const b of buttons) expect(b).toMatch(/^http:\/\/localhost:3000\/checkout\/start\//);
    expect(text).toMatch(/<a href="[^"]*currency=USD"[^>]*aria-current="true">USD<\/a>/);

    // The currency switch: prices and checkout links in euros.
    const euros = await request(app)
      .get(`${pathOf(body.url)}&currency=eur`)
      .expect(200);
    expect(euros.text).toMatch(/<a href="[^"]*currency=EUR"[^>]*aria-current="true">EUR<\/a>/);
    expect(euros.text).toMatch(/<span class="amount">€\d+\.\d\d<\/span>/);
    const euroButton = /<a class="buy" href="http:\/\/localhost:3000(\/checkout\/start\/[^"]+)"[^>]*>Choose Team/.exec(euros.text)?.[1];
    const started = await request(app)
      .get(euroButton as string)
      .expect(303);
    const checkout = await request(app).get(pathOf(started.headers.location)).expect(200);
    expect(checkout.text).toContain('€11.00 per seat per month');
  });

  it('answers the component a fragment with its styles, to any origin; serves the component', async () => {
    const { body } = await pageLink().expect(200);
    const fragment = await request(app)
      .get(`${pathOf(body.url)}&format=fragment`)
      .set('origin', 'https://vendor.example')
      .expect(200);
    expect(fragment.headers['access-control-allow-origin']).toBe('*');
    expect(fragment.text.startsWith('<style>')).toBe(true);
    expect(fragment.text).not.toContain('<html');
    expect(fragment.text).toContain('format=fragment');
    const script = await request(app).get('/embed/pricing-table.js').expect(200);
    expect(script.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(script.text).toContain("customElements.define('tollgate-pricing-table'");
  });

  it('refuses forged, expired, foreign and other signed links with a page, not a stack', async () => {
    const { body } = await pageLink().expect(200);
    const url = new URL(body.url);
    const token = url.searchParams.get('token') as string;
    const forged = `${token.slice(0, -2)}xx`;
    const notValid = async (path: string) => {
      const res = await request(app).get(path).expect(404);
      expect(res.text).toContain('This pricing link is not valid or has expired');
      expect(res.text).not.toMatch(/at .*\.ts:\d+/);
    };
    await notValid(`${url.pathname}?token=${forged}`);
    await notValid(`${url.pathname}`);
    await notValid(`/pricing-tables/${org.keys['plans.notes.team']}/page?token=${token}`);
    // A checkout link of the same table is signed by the same key, but is not a page link.
    const pricing = await request(app)
      .get(`/pricing-tables/${table()}?${customer()}`)
      .set('x-api-key', pricingKey)
      .set('version', 'v1')
      .expect(200);
    const checkoutToken = (pricing.body.plans[0].plan.checkoutUrl as string).split('/').pop();
    await notValid(`${url.pathname}?token=${checkoutToken}`);
    // Expired: a week and a second later.
    const now = world.clock.now();
    world.clock.set(new Date(now.getTime() + 7 * 86_400_000 + 1000));
    try {
      await notValid(pathOf(body.url));
    } finally {
      world.clock.set(now);
    }
  });
});
