import { randomUUID } from 'node:crypto';
import express from 'express';
import request from 'supertest';
import { DomainError, ErrorCodes, type CheckoutService, type ErrorCode, type SubscriptionLifecycle } from '@tollgate/core';
import { FakeSignedLinks, FixedClock } from '@tollgate/core/testing';
import { createSandboxRouter, SandboxPaymentProvider } from '../src';

// The hosted pay page answers what went wrong with the status it means: a write that met another
// at once (CONFLICT: reload and retry) is a 409 that says to try again, never the 400 of a bad
// request, and an outage or a full pool a 503 with Retry-After, as the APIs answer them.

function pagesFailingWith(code: ErrorCode, message: string) {
  return pagesThrowing(() => new DomainError(code, message));
}

function pagesThrowing(error: () => unknown) {
  const errors: unknown[] = [];
  const fails = async () => {
    throw error();
  };
  const checkout = { session: fails, completeCheckout: fails } as unknown as CheckoutService;
  const subscriptions = {
    tenantOf: async () => ({ organisationId: randomUUID(), isTest: true }),
    cancel: fails,
  } as unknown as SubscriptionLifecycle;
  const provider = new SandboxPaymentProvider({
    publicUrl: 'http://localhost',
    links: new FakeSignedLinks('links'),
    clock: new FixedClock(),
  });
  const app = express();
  app.use(
    '/sandbox',
    createSandboxRouter({
      checkout,
      subscriptions,
      provider,
      logger: { info: () => undefined, error: (...a: unknown[]) => void errors.push(a) },
    }),
  );
  return { app, errors, provider };
}

describe.each([
  [ErrorCodes.CONFLICT, 'a record with the same identity was written meanwhile; reload and retry', 409, 'Please try again', undefined],
  [ErrorCodes.DATABASE_UNAVAILABLE, 'the database is unavailable; nothing was changed, retry later', 503, 'Please try again shortly', '5'],
  [ErrorCodes.BUSY, 'every database connection stayed in use; nothing was changed, retry shortly', 503, 'Please try again shortly', '1'],
])('the sandbox pages on %s', (code, message, status, heading, retryAfter) => {
  it.each([
    ['the pay form', 'post', '/pay'],
    ['the checkout page', 'get', ''],
  ] as const)(`%s answers ${status} saying to try again`, async (_name, method, suffix) => {
    const { app, errors } = pagesFailingWith(code, message);
    const res = await request(app)
      [method](`/sandbox/checkout/${randomUUID()}${suffix}`)
      .type('form')
      .send(method === 'post' ? 'quantity=1' : '');
    expect(res.status).toBe(status);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.headers['retry-after']).toBe(retryAfter);
    expect(res.text).toContain(`<h1>${heading}</h1>`);
    expect(res.text).toContain(message);
    expect(res.text).not.toContain('Already done');
    // Not a failure of the service: nothing logged, no stack.
    expect(errors).toEqual([]);
    expect(res.text).not.toMatch(/\bat .+\.ts:\d+/);
  });
});

// An outage while the change was being committed (the PostgreSQL unit of work's "commit in doubt",
// kept by `outageAfter` behind an earlier step): the payment or the cancellation may have been
// applied. "Please try again shortly" with Retry-After would contradict the message, and a second
// pay is no answer: the page says it may have gone through and links to where the buyer sees it.
const IN_DOUBT =
  'the database became unreachable while this change was being committed, so it may have been applied: read it back before writing it again (or retry with the same idempotency-key, on the catalog API)';

describe.each([
  ['a commit in doubt', IN_DOUBT],
  ['a commit in doubt after an earlier step', `the subscription was canceled at the provider; then ${IN_DOUBT}`],
])('the sandbox pages on %s', (_name, message) => {
  const session = randomUUID();
  it.each([
    ['the pay form', `/sandbox/checkout/${session}/pay`, `http://localhost/sandbox/checkout/${session}`],
    ['the checkout cancel form', `/sandbox/checkout/${session}/cancel`, `http://localhost/sandbox/checkout/${session}`],
  ])('%s says it may have gone through, links to the checkout page and asks for no retry', async (_form, path, checkAt) => {
    const { app, errors } = pagesFailingWith(ErrorCodes.DATABASE_UNAVAILABLE, message);
    const res = await request(app).post(path).type('form').send('quantity=1');
    expect(res.status).toBe(503);
    expect(res.headers['retry-after']).toBeUndefined();
    expect(res.text).toContain('<h1>It may have gone through</h1>');
    expect(res.text).toContain(message);
    expect(res.text).toContain(`<a href="${checkAt}" id="check-back">`);
    expect(res.text).not.toContain('try again shortly');
    expect(errors).toEqual([]);
  });

  it("a subscription page's form links back to its page with the same token", async () => {
    const { app, provider } = pagesFailingWith(ErrorCodes.DATABASE_UNAVAILABLE, message);
    const id = randomUUID();
    const token = provider.links.token('cancel', id);
    const res = await request(app)
      .post(`/sandbox/cancel/${id}?token=${encodeURIComponent(token)}`)
      .type('form')
      .send('');
    expect(res.status).toBe(503);
    expect(res.headers['retry-after']).toBeUndefined();
    expect(res.text).toContain('<h1>It may have gone through</h1>');
    const href = /<a href="([^"]+)" id="check-back">/.exec(res.text)?.[1].replace(/&amp;/g, '&');
    expect(href).toBeDefined();
    const url = new URL(href as string);
    expect(`${url.origin}${url.pathname}`).toBe(`http://localhost/sandbox/cancel/${id}`);
    expect(url.searchParams.get('token')).toBe(token);
  });
});

it('a request the pages refuse stays a 400 (an error code they have no status for)', async () => {
  const { app } = pagesFailingWith(ErrorCodes.VALIDATION_FAILED, 'quantity: must be a whole number');
  const res = await request(app).post(`/sandbox/checkout/${randomUUID()}/pay`).type('form').send('quantity=x');
  expect(res.status).toBe(400);
  expect(res.headers['retry-after']).toBeUndefined();
  expect(res.text).toContain('<h1>Cannot do that</h1>');
});

// Second review: only a refusal of the request keeps its 4xx here too (http's clientStatus rule). A
// third-party error carrying a `status` (Stripe's 401) is a fault of the service: a logged 500.
describe('which thrown status is the request’s, on the sandbox pages', () => {
  const stripeAuthError = () =>
    Object.assign(new Error('Invalid API Key provided: sk_test_***'), { type: 'StripeAuthenticationError', status: 401, statusCode: 401 });

  it('answers an error carrying status 401 without expose as a logged 500', async () => {
    const { app, errors } = pagesThrowing(stripeAuthError);
    const res = await request(app).get(`/sandbox/checkout/${randomUUID()}`);
    expect(res.status).toBe(500);
    expect(res.text).toContain('<h1>Something went wrong</h1>');
    expect(res.text).not.toContain('Invalid API Key');
    expect(errors).toHaveLength(1);
  });

  it('keeps the 4xx of an error that may be shown, of a form over the limit and of a path that does not decode, unlogged', async () => {
    const shown = pagesThrowing(() => Object.assign(new Error('x'), { status: 409, expose: true }));
    expect((await request(shown.app).get(`/sandbox/checkout/${randomUUID()}`)).status).toBe(409);
    const { app, errors } = pagesFailingWith(ErrorCodes.CONFLICT, 'unused');
    const tooLarge = await request(app)
      .post(`/sandbox/checkout/${randomUUID()}/pay`)
      .type('form')
      .send(`quantity=${'1'.repeat(20_000)}`);
    expect(tooLarge.status).toBe(413);
    expect(tooLarge.text).toContain('The form is too large.');
    const notDecoded = await request(app).get('/sandbox/checkout/%ff');
    expect(notDecoded.status).toBe(400);
    expect(notDecoded.text).toContain('<h1>Cannot do that</h1>');
    expect([...shown.errors, ...errors]).toEqual([]);
  });
});
