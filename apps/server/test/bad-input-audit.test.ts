import request from 'supertest';
import Stripe from 'stripe';
import { DomainError, ErrorCodes, type Logger, type Repositories, type UnitOfWork } from '@tollgate/core';
import { createTestWorld, purchase, seedOrganisation, type SeededOrg, type TestWorld } from '@tollgate/runtime/testing';
import { createServerApp } from '../src';

// The bad-input audit (24 700 requests against `npm start`'s server, NODE_ENV unset): each finding
// reproduced through the combined server and its fix asserted.

const SECRET = 'whsec_bad_input';
const signer = new Stripe('sk_test_signer');
let world: TestWorld;
let org: SeededOrg;
let app: ReturnType<typeof createServerApp>;
const errors: { message: string; fields?: Record<string, unknown> }[] = [];
const logger: Logger = { info: () => undefined, error: (message, fields) => void errors.push({ message, fields }) } as Logger;

beforeAll(async () => {
  world = await createTestWorld({ config: { stripeSecretKey: 'sk_test_bad_input', stripeWebhookSecret: SECRET } });
  org = await seedOrganisation(world, 'bad-input-org');
  app = createServerApp({ ...world, logger });
});
afterAll(() => world?.close());
beforeEach(() => void (errors.length = 0));

/** No Express HTML page, no stack, no file path: JSON. */
const jsonWithoutStack = (res: request.Response) => {
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  expect(res.text).not.toMatch(/<pre>|<html|\bat \w|node_modules|\/work\/|node:zlib/);
};

/** A use case whose repository `repo` answers its `page` reads as the database does in an outage. */
function pagesDown<T extends object>(service: T, repo: keyof Repositories): T {
  const deps = (service as unknown as { deps: { uow: UnitOfWork } }).deps;
  const down = () => Promise.reject(new DomainError(ErrorCodes.DATABASE_UNAVAILABLE, 'the database is unavailable; retry later'));
  const uow = Object.assign(Object.create(deps.uow) as UnitOfWork, {
    read: <R>(work: (r: Repositories) => Promise<R>) =>
      deps.uow.read((r) =>
        work(
          new Proxy(r, {
            get: (t, k) =>
              k === repo
                ? new Proxy(t[repo] as object, {
                    get: (rt, m) => {
                      if (m === 'page') return down;
                      const v: unknown = Reflect.get(rt, m);
                      return typeof v === 'function' ? v.bind(rt) : v;
                    },
                  })
                : Reflect.get(t, k),
          }),
        ),
      ),
  });
  return Object.assign(Object.create(service) as T, { deps: { ...deps, uow } });
}

describe('1. no stack traces from routes outside the generation routers', () => {
  const webhook = () => request(app).post('/webhooks/stripe').set('content-type', 'application/json');

  it('answers a webhook body over 1 MB 413 with a fixed JSON error', async () => {
    const res = await webhook()
      .send(`{"a":"${'x'.repeat(1.2 * 1024 * 1024)}"}`)
      .expect(413);
    jsonWithoutStack(res);
    expect(res.body).toEqual({ error: 'the webhook body is too large', code: 'WEBHOOK_BODY_TOO_LARGE' });
  });

  it('answers a body that does not decompress 400, an unknown encoding 415, both fixed JSON', async () => {
    const gz = await webhook().set('content-encoding', 'gzip').send('x').expect(400);
    jsonWithoutStack(gz);
    expect(gz.body).toEqual({ error: 'the webhook body could not be read', code: 'WEBHOOK_BODY_INVALID' });
    const enc = await webhook().set('content-encoding', 'identityx').send('x').expect(415);
    jsonWithoutStack(enc);
    expect(enc.body).toEqual({ error: 'the webhook body has an unsupported encoding', code: 'WEBHOOK_BODY_UNSUPPORTED' });
    expect(errors).toEqual([]);
  });

  it('answers a correctly signed body that is not an event 400 (was a 500 TypeError)', async () => {
    for (const payload of ['null', '[]', '{}', '{"id":"evt_1","type":"invoice.paid"}']) {
      const header = signer.webhooks.generateTestHeaderString({ payload, secret: SECRET });
      const res = await webhook().set('stripe-signature', header).send(payload).expect(400);
      jsonWithoutStack(res);
      expect(res.body).toEqual({ error: 'the webhook body is not a Stripe event', code: 'WEBHOOK_EVENT_INVALID' });
    }
    expect(errors).toEqual([]);
  });

  it('answers /openapi/%ff.json 400 in the JSON error shape, naming the path', async () => {
    const res = await request(app).get('/openapi/%ff.json').expect(400);
    jsonWithoutStack(res);
    expect(res.body).toMatchObject({ code: 'VALIDATION_FAILED', validationErrors: [{ property: 'path' }] });
    await request(app).get('/openapi/v1.json').expect(200);
  });
});

describe('2. v1 streamed lists answer instead of cutting the connection', () => {
  const v1 = (path: string, a = app) => request(a).get(path).set('x-api-key', org.liveKey).set('version', 'v1');

  it('answers a NUL in a path parameter of a v1 streamed list 400 naming it (the connection was cut)', async () => {
    const res = await v1('/licenses/granteeId/a%00b').expect(400);
    expect(res.body).toMatchObject({ code: 'VALIDATION_FAILED', validationErrors: [{ property: 'granteeId' }] });
  });

  it('names the path parameter in v2 too (it named "body")', async () => {
    const v2 = await request(app).get('/licenses/granteeId/a%00b').set('x-api-key', org.liveKey).set('version', 'v2').expect(400);
    expect(v2.body.validationErrors).toEqual([{ property: 'granteeId', error: 'contains a NUL character or broken UTF-16' }]);
  });

  it('answers 503 with Retry-After when the database fails on the first page of v1 GET /licenses and /licenses/granteeId/:id', async () => {
    const licenses = pagesDown(world.core.licenses, 'licenses');
    const down = createServerApp({ ...world, logger, core: { ...world.core, licenses } });
    for (const path of ['/licenses', '/licenses/granteeId/alice']) {
      const res = await v1(path, down).expect(503);
      expect(res.headers['retry-after']).toBe('5');
      expect(res.body).toEqual({ error: 'the database is unavailable; retry later', code: 'DATABASE_UNAVAILABLE' });
    }
    await v1('/licenses').expect(200);
  });
});

describe('3. the hosted pricing page honours a 4xx', () => {
  it('answers a pricing table id that does not decode 400, nothing logged', async () => {
    const link = await request(app)
      .get(
        `/pricing-tables/${org.keys['pricingTables.notes.main']}/page-link?globalSuccessUrl=https://vendor.example.com/ok&globalCancelUrl=https://vendor.example.com/no&globalGranteeId=bob&member=bob@example.com`,
      )
      .set('x-api-key', org.liveKey)
      .set('version', 'v1')
      .expect(200);
    const token = new URL(link.body.url as string).searchParams.get('token') as string;
    const res = await request(app)
      .get(`/pricing-tables/%ff/page?token=${encodeURIComponent(token)}`)
      .expect(400);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.text).toContain('This pricing link is not valid');
    expect(res.text).not.toMatch(/URIError|\bat \w/);
    expect(errors).toEqual([]);
  });
});

describe('4. the usage bound is told in the meter units', () => {
  it('says "at most 10000000000" (units of a 2-place meter), not the count of steps', async () => {
    const api = (a: typeof app) => (path: string, body: object) =>
      request(a).post(path).set('authorization', `Bearer ${org.liveKey}`).send(body);
    await api(app)('/api/meters', { slug: 'gpu_hours_audit', name: 'GPU hours', unitLabel: 'hour', scale: 2 }).expect(201);
    for (const a of [app, createServerApp(world, { usageFastPath: false })]) {
      const res = await api(a)('/api/usage/record', { owner: 'audit-owner', meterSlug: 'gpu_hours_audit', increment: 100000000000 }).expect(
        400,
      );
      expect(res.body.errors).toEqual([{ property: 'increment', message: 'must be at most 10000000000' }]);
    }
  });
});

describe('5. a JSON null body is not an empty object', () => {
  it('refuses null on v2/v3 PUT /subscriptions/:id and POST /api/api-keys naming body; no body still works', async () => {
    const { subscription } = await purchase(world, org.keys['plans.notes.team'], 'null-body', 2);
    for (const version of ['v2', 'v3']) {
      const res = await request(app)
        .put(`/subscriptions/${subscription.id}`)
        .set('x-api-key', org.liveKey)
        .set('version', version)
        .set('content-type', 'application/json')
        .send('null')
        .expect(400);
      expect(res.body).toEqual({
        error: 'body must be object',
        code: 'VALIDATION_FAILED',
        validationErrors: [{ property: 'body', error: 'must be object' }],
      });
      await request(app).put(`/subscriptions/${subscription.id}`).set('x-api-key', org.liveKey).set('version', version).expect(200);
    }
    const key = await request(app)
      .post('/api/api-keys')
      .set('authorization', `Bearer ${org.liveKey}`)
      .set('content-type', 'application/json')
      .send('null')
      .expect(400);
    expect(key.body).toMatchObject({ detail: 'body must be object', errors: [{ property: 'body', message: 'must be object' }] });
    await request(app).post('/api/api-keys').set('authorization', `Bearer ${org.liveKey}`).expect(201);
  });
});
