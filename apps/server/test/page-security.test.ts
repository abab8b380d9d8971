import crypto from 'node:crypto';
import request from 'supertest';
import { createTestWorld, purchase, seedOrganisation, type SeededOrg, type TestWorld } from '@tollgate/runtime/testing';
import { createServerApp } from '../src';

// The pages a browser opens (the hosted pricing page, the sandbox's checkout and subscription
// pages, `/`, `/docs`): links that keep their kind and expiry, a pinned currency that stays
// pinned, and security headers fitting what each page loads.
let world: TestWorld;
let org: SeededOrg;
let app: ReturnType<typeof createServerApp>;

beforeAll(async () => {
  world = await createTestWorld();
  org = await seedOrganisation(world, 'security-org');
  app = createServerApp(world);
});
afterAll(() => world?.close());

const v1 = (path: string) => request(app).get(path).set('x-api-key', org.liveKey).set('version', 'v1');
const pathOf = (url: string) => new URL(url).pathname + new URL(url).search;
const customer =
  `globalSuccessUrl=${encodeURIComponent('https://vendor.example/ok')}&globalCancelUrl=${encodeURIComponent('https://vendor.example/no')}` +
  '&globalGranteeId=sec-1&member=sec@example.com';
const pageLink = async (extra = '') =>
  (await v1(`/pricing-tables/${org.keys['pricingTables.notes.main']}/page-link?${customer}${extra}`).expect(200)).body.url as string;
const tokenOf = (location: string) => new URL(location, 'http://x').searchParams.get('token') as string;
/** The payload of a signed link (`<body>.<mac>`), as the browser holds it. */
const payloadOf = (token: string) => JSON.parse(Buffer.from(token.split('.')[0], 'base64url').toString('utf8'));
/** The CSP hashes of a page's inline `<style>` elements, as a browser computes them. */
const styleHashes = (text: string) =>
  [...text.matchAll(/<style>([\s\S]*?)<\/style>/g)].map((m) => `'sha256-${crypto.createHash('sha256').update(m[1]).digest('base64')}'`);

function expectPageHeaders(res: request.Response, secretUrl: boolean) {
  const csp = res.headers['content-security-policy'] as string;
  expect(csp).toMatch(/^default-src 'none'/);
  expect(csp).not.toContain('unsafe-inline');
  expect(csp).toContain("frame-ancestors 'none'");
  expect(csp).toContain("base-uri 'none'");
  expect(res.headers['x-frame-options']).toBe('DENY');
  expect(res.headers['x-content-type-options']).toBe('nosniff');
  if (secretUrl) expect(res.headers['referrer-policy']).toBe('no-referrer');
  // Every inline style of the page is allowed by its hash, and there is no inline script.
  for (const h of styleHashes(res.text)) expect(csp).toContain(h);
  expect(res.text).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
  expect(res.text).not.toMatch(/\sstyle="/);
  return csp;
}

describe('sandbox subscription pages keep their link: its kind and its expiry', () => {
  it('answers a cancel link, after its form, on its own page with the same token, never with a portal link', async () => {
    const { subscription } = await purchase(world, org.keys['plans.notes.business'], 'sec-cancel');
    const cancelUrl = (await v1(`/subscriptions/${subscription.id}/cancelpaymentlink`).expect(200)).body.url as string;
    const token = tokenOf(cancelUrl);
    const page = await request(app).get(pathOf(cancelUrl)).expect(200);
    expect(page.text).toContain('id="confirm-cancel"');
    const posted = await request(app).post(pathOf(cancelUrl)).type('form').send({}).expect(303);
    const location = new URL(posted.headers.location);
    expect(location.pathname).toBe(`/sandbox/cancel/${subscription.id}`);
    expect(tokenOf(posted.headers.location)).toBe(token);
    expect(posted.headers['referrer-policy']).toBe('no-referrer');
    const after = await request(app).get(pathOf(posted.headers.location)).expect(200);
    expect(after.text).toContain('Your subscription is canceled');
    expect(after.text).not.toContain('confirm-cancel');
    // The cancel link opens neither the portal nor its actions.
    await request(app).get(`/sandbox/portal/${subscription.id}?token=${token}`).expect(403);
    await request(app).post(`/sandbox/portal/${subscription.id}/reactivate?token=${token}`).type('form').send({}).expect(403);
    expect((await v1(`/subscriptions/${subscription.id}`).expect(200)).body.cancelAtPeriodEnd).toBe(true);
  });

  it('answers every portal form with the same token, so a portal link still expires an hour after it was made', async () => {
    const { subscription } = await purchase(world, org.keys['plans.notes.team'], 'sec-portal', 2);
    const portalUrl = (await v1(`/subscriptions/${subscription.id}/customer-portal`).expect(200)).body.url as string;
    const token = tokenOf(portalUrl);
    const { exp } = payloadOf(token);
    const start = world.clock.now();
    try {
      world.clock.set(new Date(start.getTime() + 30 * 60_000));
      const q = `?token=${encodeURIComponent(token)}`;
      const answers = [
        await request(app).post(`/sandbox/portal/${subscription.id}/cancel${q}`).type('form').send({}).expect(303),
        await request(app).post(`/sandbox/portal/${subscription.id}/reactivate${q}`).type('form').send({}).expect(303),
        await request(app).post(`/sandbox/portal/${subscription.id}/seats${q}`).type('form').send({ quantity: 3 }).expect(303),
      ];
      for (const a of answers) {
        expect(new URL(a.headers.location).pathname).toBe(`/sandbox/portal/${subscription.id}`);
        expect(tokenOf(a.headers.location)).toBe(token);
      }
      // The portal's payment-method page is reached with the portal's own token (not a fresh link).
      const portal = await request(app).get(`/sandbox/portal/${subscription.id}${q}`).expect(200);
      const pm = /<a href="([^"]+)">Update payment method<\/a>/.exec(portal.text)?.[1].replace(/&amp;/g, '&') as string;
      expect(tokenOf(pm)).toBe(token);
      await request(app).get(pm).expect(200);
      const saved = await request(app).post(pm).type('form').send({ card: 'mastercard' }).expect(303);
      expect(new URL(saved.headers.location).pathname).toBe(`/sandbox/payment-method/${subscription.id}`);
      expect(tokenOf(saved.headers.location)).toBe(token);
      // An hour after the link was made, nothing it led to opens any more.
      world.clock.set(new Date(exp + 1000));
      await request(app).get(`/sandbox/portal/${subscription.id}${q}`).expect(403);
      await request(app).post(`/sandbox/portal/${subscription.id}/cancel${q}`).type('form').send({}).expect(403);
      await request(app).get(pm).expect(403);
    } finally {
      world.clock.set(start);
    }
  });
});

describe('hosted pricing page: a currency pinned by the link', () => {
  it('ignores ?currency and offers no switch when the signed link names a currency', async () => {
    const pinned = await pageLink('&currency=EUR');
    for (const path of [pathOf(pinned), `${pathOf(pinned)}&currency=USD`, `${pathOf(pinned)}&currency=usd&format=fragment`]) {
      const res = await request(app).get(path).expect(200);
      expect(res.text).toMatch(/<span class="amount">€\d+\.\d\d<\/span>/);
      expect(res.text).not.toContain('$');
      expect(res.text).not.toContain('data-currency=');
    }
    // A link that leaves the currency open keeps its switch.
    const open = await request(app)
      .get(`${pathOf(await pageLink())}&currency=EUR`)
      .expect(200);
    expect(open.text).toMatch(/<a href="[^"]*currency=EUR"[^>]*aria-current="true">EUR<\/a>/);
  });
});

describe('security headers of the pages', () => {
  it('sends a strict policy with the pricing page (its link in its address), its error page and its fragment', async () => {
    const url = await pageLink();
    expectPageHeaders(await request(app).get(pathOf(url)).expect(200), true);
    expectPageHeaders(
      await request(app)
        .get(`${pathOf(url)}&format=fragment`)
        .expect(200),
      true,
    );
    const csp = expectPageHeaders(
      await request(app)
        .get(`${new URL(url).pathname}?token=nope`)
        .expect(404),
      true,
    );
    expect(csp).not.toContain('script-src');
  });

  it('sends a strict policy with every sandbox page', async () => {
    const { body } = await v1(
      `/plans/${org.keys['plans.notes.team']}/checkoutlink?successUrl=https://vendor.example/ok&cancelUrl=https://vendor.example/no&granteeId=sec-co&member=b@example.com&changeQuantity=true`,
    ).expect(200);
    expectPageHeaders(await request(app).get(pathOf(body.checkoutUrl)).expect(200), true);
    const { subscription } = await purchase(world, org.keys['plans.notes.team'], 'sec-headers', 2);
    for (const op of ['customer-portal', 'updatepaymentlink', 'cancelpaymentlink']) {
      const link = (await v1(`/subscriptions/${subscription.id}/${op}`).expect(200)).body.url as string;
      expectPageHeaders(await request(app).get(pathOf(link)).expect(200), true);
    }
    expectPageHeaders(await request(app).get(`/sandbox/portal/${subscription.id}?token=forged`).expect(403), true);
    expectPageHeaders(await request(app).get('/sandbox/thank-you').expect(200), true);
  });

  it('sends a policy with / and /docs, and serves only the Swagger UI files /docs loads', async () => {
    const home = expectPageHeaders(await request(app).get('/').expect(200), false);
    expect(home).not.toContain('script-src');
    const docs = await request(app).get('/docs').expect(200);
    const csp = expectPageHeaders(docs, false);
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("connect-src 'self'");
    for (const file of ['swagger-ui-bundle.js', 'swagger-ui-standalone-preset.js', 'swagger-ui.css'])
      expect((await request(app).get(`/docs/assets/${file}`).expect(200)).headers['x-content-type-options']).toBe('nosniff');
    // The package's demo page (it loads the Petstore spec from petstore.swagger.io) and the rest are not served.
    for (const file of ['index.html', 'swagger-initializer.js', 'oauth2-redirect.html', 'swagger-ui.js', 'package.json', ''])
      expect((await request(app).get(`/docs/assets/${file}`)).status).toBe(404);
  });

  it('sends nosniff with the scripts and styles the pages load', async () => {
    for (const path of ['/docs/init.js', '/embed/pricing-table.js', '/docs/assets/swagger-ui.css'])
      expect((await request(app).get(path).expect(200)).headers['x-content-type-options']).toBe('nosniff');
  });
});
