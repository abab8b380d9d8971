/* One describe per finding of the hardening issue (#13): each reproduces the attack and asserts the fix. */
import { connect, type AddressInfo } from 'node:net';
import express from 'express';
import request from 'supertest';
import { ERROR_STATUS, generationRouter, legacyErrorBody, resource, route } from '@tollgate/http';
import { createTestWorld, seedOrganisation, type SeededOrg, type TestWorld } from '@tollgate/runtime/testing';
import { createServerApp, createServerHttp } from '../src';

let world: TestWorld;
let org: SeededOrg;
let app: ReturnType<typeof createServerApp>;

beforeAll(async () => {
  world = await createTestWorld();
  org = await seedOrganisation(world, 'hardening-org');
  app = createServerApp(world);
});
afterAll(() => world?.close());

const v1 = (method: 'get' | 'put' | 'post', path: string, key = org.liveKey) =>
  request(app)[method](path).set('x-api-key', key).set('version', 'v1');
const pathOf = (url: string) => new URL(url).pathname;
const linkQuery = (grantee: string, extra = '') =>
  `successUrl=https://vendor.example.com/ok&cancelUrl=https://vendor.example.com/no&granteeId=${grantee}&member=buyer@example.com${extra}`;

describe('finding 1: seat counts are bounded everywhere (no crash without authentication)', () => {
  it('answers 400 to a sandbox payment of a million seats and stays up', async () => {
    const { body } = await v1(
      'get',
      `/plans/${org.keys['plans.notes.team']}/checkoutlink?${linkQuery('huge', '&changeQuantity=true')}`,
    ).expect(200);
    const res = await request(app)
      .post(`${pathOf(body.checkoutUrl)}/pay`)
      .type('form')
      .send({ quantity: '1000000' })
      .expect(400);
    expect(res.text).toMatch(/at most 10000 seats/);
    // The same session still pays with a sane count.
    await request(app)
      .post(`${pathOf(body.checkoutUrl)}/pay`)
      .type('form')
      .send({ quantity: '3' })
      .expect(303);
  });

  it('refuses a checkout link for more seats than the bound', async () => {
    const res = await v1('get', `/plans/${org.keys['plans.notes.team']}/checkoutlink?${linkQuery('many', '&quantity=100000000')}`).expect(
      400,
    );
    expect(res.body.code).toBe('SEATS_LIMIT_EXCEEDED');
  });

  it('pays for 5 000 seats (past the single-statement parameter limit) in batches', async () => {
    const { body } = await v1('get', `/plans/${org.keys['plans.notes.team']}/checkoutlink?${linkQuery('big', '&quantity=5000')}`).expect(
      200,
    );
    await request(app)
      .post(`${pathOf(body.checkoutUrl)}/pay`)
      .type('form')
      .send({})
      .expect(303);
    const licenses = (await v1('get', '/licenses').expect(200)).body as { subscriptionUuid: string | null; granteeId: string | null }[];
    const sub = licenses.find((l) => l.granteeId === 'big')?.subscriptionUuid;
    expect((await v1('get', `/licenses/count?subscriptionUuid=${sub}`).expect(200)).body).toEqual({
      count: 5000,
      assigned: 1,
      unassigned: 4999,
    });
  });
});

describe('finding 2: large increments apply; events of a subscription apply in order; event errors are safe', () => {
  it('applies an increment of 3 500 seats and refuses one beyond the bound at request time', async () => {
    const { body } = await v1('get', `/plans/${org.keys['plans.notes.team']}/checkoutlink?${linkQuery('inc')}`).expect(200);
    await request(app)
      .post(`${pathOf(body.checkoutUrl)}/pay`)
      .type('form')
      .send({})
      .expect(303);
    const licenses = (await v1('get', '/licenses').expect(200)).body as { subscriptionUuid: string | null; granteeId: string | null }[];
    const sub = licenses.find((l) => l.granteeId === 'inc')?.subscriptionUuid as string;
    const big = (await v1('post', `/subscriptions/${sub}/seats`).send({ increment: 3500 }).expect(202)).body.eventUuid;
    const after = (await v1('post', `/subscriptions/${sub}/seats`).send({ increment: 1 }).expect(202)).body.eventUuid;
    await world.core.worker.drain();
    const first = (await v1('get', `/events/${big}`).expect(200)).body;
    expect(first).toMatchObject({ status: 'success', error: null, errorCode: null });
    expect((await v1('get', `/events/${after}`).expect(200)).body.status).toBe('success');
    expect(new Date((await v1('get', `/events/${after}`)).body.updatedAt) >= new Date(first.updatedAt)).toBe(true);
    expect((await v1('get', `/subscriptions/${sub}`).expect(200)).body.quantity).toBe(3503);
    expect((await v1('post', `/subscriptions/${sub}/seats`).send({ increment: 10_000 }).expect(400)).body.code).toBe(
      'SEATS_LIMIT_EXCEEDED',
    );
  });
});

describe('finding 3: one idempotency key runs one request, however many arrive at once', () => {
  it('creates one product from 50 concurrent POSTs with one key and body; the others replay it or are told it is in flight', async () => {
    const key = `race-${Date.now()}`;
    const body = { name: `raced product ${key}` };
    const post = (b: object) =>
      request(app).post('/api/products').set('authorization', `Bearer ${org.liveKey}`).set('idempotency-key', key).send(b);
    const answers = await Promise.all(Array.from({ length: 50 }, () => post(body)));
    const ids = new Set(answers.filter((a) => a.status === 201).map((a) => a.body.data.id));
    expect(ids.size).toBe(1);
    for (const a of answers) expect([201, 409]).toContain(a.status);
    const list = await request(app)
      .get(`/api/products?search=${encodeURIComponent(body.name)}`)
      .set('authorization', `Bearer ${org.liveKey}`)
      .expect(200);
    expect(list.body.data).toHaveLength(1);
    // The same key with another body is refused.
    expect((await post({ name: 'another' }).expect(409)).body.title).toBe('Conflict');
  });

  it('scopes a key by the route, not by how its path is spelt (a trailing slash)', async () => {
    const key = `spelt-${Date.now()}`;
    const body = { name: `spelt product ${key}` };
    const post = (path: string) =>
      request(app).post(path).set('authorization', `Bearer ${org.liveKey}`).set('idempotency-key', key).send(body);
    const first = await post('/api/products').expect(201);
    for (const path of ['/api/products/']) {
      const again = await post(path).expect(201);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.body.data.id).toBe(first.body.data.id);
    }
    const list = await request(app)
      .get(`/api/products?search=${encodeURIComponent(body.name)}`)
      .set('authorization', `Bearer ${org.liveKey}`)
      .expect(200);
    expect(list.body.data).toHaveLength(1);
  });
});

describe('finding 7, as the contract says (issue #20): unknown 404, foreign 403, other mode 404', () => {
  it("answers an unknown id 404, another organisation's id 403 and the other mode's id 404, in v1 and the catalog", async () => {
    const other = await seedOrganisation(world, 'oracle-other');
    const unknown = '00000000-0000-4000-8000-000000000000';
    const ask = async (path: string) => {
      const res = await request(app).get(path).set('x-api-key', org.liveKey).set('version', 'v1');
      return { status: res.status, body: res.body };
    };
    for (const [template, idOf] of [
      ['/products/ID', (o: SeededOrg, test: boolean) => (test ? o.testKeys : o.keys)['products.notes']],
      ['/plans/ID/features', (o: SeededOrg, test: boolean) => (test ? o.testKeys : o.keys)['plans.notes.team']],
    ] as const) {
      const answers = await Promise.all([
        ask(template.replace('ID', unknown)),
        ask(template.replace('ID', idOf(other, false))),
        ask(template.replace('ID', idOf(org, true))),
      ]);
      expect(answers.map((a) => a.status)).toEqual([404, 403, 404]);
      expect(answers.map((a) => a.body.code)).toEqual(['NOT_FOUND', 'FORBIDDEN', 'NOT_FOUND']);
      // The other mode's record is, for this key, a record that does not exist.
      expect(answers[2]).toEqual(answers[0]);
    }
    const catalog = (id: string) => request(app).get(`/api/plans/${id}`).set('authorization', `Bearer ${org.liveKey}`);
    const [a, b, c] = await Promise.all([
      catalog(unknown),
      catalog(other.keys['plans.notes.team']),
      catalog(org.testKeys['plans.notes.team']),
    ]);
    expect([a.status, b.status, c.status]).toEqual([404, 403, 404]);
    expect(a.body).toEqual({ title: 'Not Found', detail: 'plan not found', errors: null });
    expect(b.body).toEqual({ title: 'Forbidden', detail: 'plan belongs to another organisation', errors: null });
    expect(c.body).toEqual(a.body);
  });
});

describe('finding 5: inputs that gave 500 are refused by their class', () => {
  const bearer = () => ({ authorization: `Bearer ${org.liveKey}` });
  it('refuses a NUL character in any string, wherever it comes in', async () => {
    const free = org.keys['plans.notes.free'];
    const nul = [
      request(app).post('/licenses').set('x-api-key', org.liveKey).send({ planUuid: free, member: 'm\u0000', granteeId: 'g' }),
      request(app).post('/licenses').set('x-api-key', org.liveKey).send({ planUuid: free, member: 'm', granteeId: 'g\u0000' }),
      request(app).post('/api/products').set(bearer()).send({ name: 'bad\u0000name' }),
      request(app).get(`/licenses/check?productUuid=${org.keys['products.notes']}&granteeIds=%00`).set('x-api-key', org.liveKey),
      request(app).get(`/api/products?search=%00`).set(bearer()),
      request(app).post('/api/products').set(bearer()).send({ name: 'lone \ud800 surrogate' }),
    ];
    for (const res of await Promise.all(nul)) {
      expect(res.status).toBe(400);
      expect(JSON.stringify(res.body)).toMatch(/NUL character or broken UTF-16/);
    }
  });

  it('answers malformed ids and paths of the sandbox pages with 404/400, and a large form with 413', async () => {
    await request(app).get('/sandbox/checkout/not-a-uuid').expect(404);
    await request(app).post('/sandbox/checkout/not-a-uuid/pay').type('form').send({}).expect(404);
    await request(app).get('/sandbox/portal/not-a-uuid?token=x').expect(404);
    expect([400, 404]).toContain((await request(app).get('/sandbox/portal/%zz')).status);
    const { body } = await v1('get', `/plans/${org.keys['plans.notes.team']}/checkoutlink?${linkQuery('form')}`).expect(200);
    await request(app)
      .post(`${pathOf(body.checkoutUrl)}/pay`)
      .type('form')
      .send({ quantity: '3', filler: 'x'.repeat(11_000) })
      .expect(413);
    await request(app)
      .post(`${pathOf(body.checkoutUrl)}/pay`)
      .type('form')
      .send({ quantity: '3\u0000' })
      .expect(400);
  });

  it('refuses JSON nested thousands deep before parsing it, with or without an idempotency key', async () => {
    const deep = `${'['.repeat(12_000)}${']'.repeat(12_000)}`;
    for (const path of ['/api/products', '/licenses']) {
      const res = await request(app)
        .post(path)
        .set(bearer())
        .set('x-api-key', org.liveKey)
        .set('idempotency-key', 'deep')
        .set('content-type', 'application/json')
        .send(deep);
      expect(res.status).toBe(400);
      expect(JSON.stringify(res.body)).toMatch(/nests deeper than 32 levels/);
    }
  });

  it('answers a write that races the deletion of what it refers to with 404/409, never 500', async () => {
    const product = (await request(app).post('/api/products').set(bearer()).send({ name: 'doomed' }).expect(201)).body.data.id;
    const writes = Array.from({ length: 30 }, (_, i) =>
      request(app)
        .post('/api/plans')
        .set(bearer())
        .send({ productId: product, name: `p${i}` }),
    );
    const del = request(app).delete(`/api/products/${product}`).set(bearer());
    const answers = await Promise.all([...writes, del]);
    for (const a of answers) expect([201, 204, 404, 409]).toContain(a.status);
  });
});

describe('finding 6: every error of a generation is in its shape', () => {
  it('answers bad JSON, a body over the limit and an unsupported charset in the catalog shape under /api', async () => {
    const post = (body: string, type = 'application/json') =>
      request(app).post('/api/products').set('authorization', `Bearer ${org.liveKey}`).set('content-type', type).send(body);
    const bad = await post('{"name": ');
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ title: 'Bad Request', detail: 'the body is not valid JSON' });
    const big = await post(JSON.stringify({ name: 'x'.repeat(1_100_000) }));
    expect(big.status).toBe(413);
    expect(big.body).toMatchObject({ title: 'Payload Too Large' });
    const charset = await post('{"name":"x"}', 'application/json; charset=latin-9');
    expect(charset.status).toBe(415);
    expect(charset.body).toHaveProperty('title');
    const legacy = await request(app)
      .post('/licenses')
      .set('x-api-key', org.liveKey)
      .set('content-type', 'application/json')
      .send('{"planUuid": ');
    expect(legacy.body).toMatchObject({ code: 'VALIDATION_FAILED', error: 'the body is not valid JSON' });
  });

  it("gives Node's own 400 and 431 a body in the path's generation's shape", async () => {
    const server = createServerHttp(app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    const raw = (text: string) =>
      new Promise<string>((resolve, reject) => {
        const socket = connect(port, '127.0.0.1', () => socket.end(text));
        let out = '';
        socket.on('data', (d) => (out += d.toString()));
        socket.on('end', () => resolve(out));
        socket.on('error', reject);
      });
    try {
      const bad = await raw('GET /products HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n');
      expect(bad).toMatch(/^HTTP\/1.1 400/);
      expect(JSON.parse(bad.split('\r\n\r\n')[1])).toMatchObject({ code: 'VALIDATION_FAILED' });
      const huge = await raw(`GET /api/products HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
      expect(huge).toMatch(/^HTTP\/1.1 431/);
      expect(JSON.parse(huge.split('\r\n\r\n')[1])).toMatchObject({
        title: expect.any(String),
        detail: 'the request headers are too large',
      });
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe('finding 8: sandbox pages keep their promises', () => {
  it('does not let a canceled checkout be paid', async () => {
    const { body } = await v1('get', `/plans/${org.keys['plans.notes.team']}/checkoutlink?${linkQuery('quitter')}`).expect(200);
    const res = await request(app)
      .post(`${pathOf(body.checkoutUrl)}/cancel`)
      .type('form')
      .send({})
      .expect(303);
    expect(res.headers.location).toBe('https://vendor.example.com/no');
    await request(app)
      .post(`${pathOf(body.checkoutUrl)}/pay`)
      .type('form')
      .send({})
      .expect(409);
    await request(app).get(pathOf(body.checkoutUrl)).expect(409);
  });

  it('gives portal links a nonce and an expiry', async () => {
    const { body } = await v1('get', `/plans/${org.keys['plans.notes.team']}/checkoutlink?${linkQuery('portal-user')}`).expect(200);
    await request(app)
      .post(`${pathOf(body.checkoutUrl)}/pay`)
      .type('form')
      .send({})
      .expect(303);
    const licenses = (await v1('get', '/licenses').expect(200)).body as { subscriptionUuid: string | null; granteeId: string | null }[];
    const sub = licenses.find((l) => l.granteeId === 'portal-user')?.subscriptionUuid as string;
    const a = (await v1('get', `/subscriptions/${sub}/customer-portal`).expect(200)).body.url as string;
    const b = (await v1('get', `/subscriptions/${sub}/customer-portal`).expect(200)).body.url as string;
    expect(a).not.toBe(b);
    const path = (u: string) => new URL(u).pathname + new URL(u).search;
    await request(app).get(path(a)).expect(200);
    world.clock.advanceDays(1);
    await request(app).get(path(a)).expect(403);
    world.clock.advanceDays(-1);
  });

  it('answers a refused Stripe signature with a fixed message', async () => {
    // The Stripe webhook is mounted only with Stripe configured: see apps/server/test/stripe.test.ts.
    const stripeWorld = await createTestWorld({ config: { stripeSecretKey: 'sk_test_x', stripeWebhookSecret: 'whsec_x' } });
    try {
      const res = await request(createServerApp(stripeWorld))
        .post('/webhooks/stripe')
        .set('stripe-signature', 't=1,v1=abc')
        .send('{}')
        .expect(400);
      expect(res.body).toEqual({ error: 'webhook signature verification failed', code: 'WEBHOOK_SIGNATURE_INVALID' });
    } finally {
      await stripeWorld.close();
    }
  });
});

describe('finding 4: lists stream in bounded memory, page on request, and are limited per key', () => {
  let sub: string;
  beforeAll(async () => {
    const { body } = await v1('get', `/plans/${org.keys['plans.notes.team']}/checkoutlink?${linkQuery('lister', '&quantity=6000')}`).expect(
      200,
    );
    await request(app)
      .post(`${pathOf(body.checkoutUrl)}/pay`)
      .type('form')
      .send({})
      .expect(303);
    const page = await v1('get', '/licenses?take=1000').expect(200);
    let cursor = page.headers['x-next-cursor'];
    let found = page.body.find((l: { granteeId: string | null }) => l.granteeId === 'lister');
    while (!found && cursor) {
      const next = await v1('get', `/licenses?take=1000&cursor=${encodeURIComponent(cursor)}`).expect(200);
      found = next.body.find((l: { granteeId: string | null }) => l.granteeId === 'lister');
      cursor = next.headers['x-next-cursor'];
    }
    sub = found.subscriptionUuid;
  });

  it('streams the whole list as one plain array (chunked, no Content-Length)', async () => {
    const res = await v1('get', `/licenses?subscriptionUuid=${sub}`).expect(200);
    expect(res.headers['content-type']).toBe('application/json');
    expect(res.headers['content-length']).toBeUndefined();
    expect(res.headers['transfer-encoding']).toBe('chunked');
    expect(res.body).toHaveLength(6000);
    expect(new Set(res.body.map((l: { uuid: string }) => l.uuid)).size).toBe(6000);
  });

  it('pages with take and cursor, the next cursor in x-next-cursor, covering the list exactly once', async () => {
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const res = await v1(
        'get',
        `/licenses?subscriptionUuid=${sub}&take=1000${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      ).expect(200);
      expect(res.body.length).toBeLessThanOrEqual(1000);
      seen.push(...res.body.map((l: { uuid: string }) => l.uuid));
      cursor = res.headers['x-next-cursor'];
    } while (cursor);
    expect(seen).toHaveLength(6000);
    expect(new Set(seen).size).toBe(6000);
    await v1('get', '/licenses?take=0').expect(400);
    await v1('get', '/licenses?take=5000').expect(400);
  });

  it('lets one key read at most two long lists at once (429 with Retry-After beyond)', async () => {
    // A list route whose stream waits until told: the limit is the kit's, so any list route shows it.
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    async function* slow() {
      yield [1];
      await gate;
      yield [2];
    }
    const lists = generationRouter(
      resource({ name: 'slow', description: 'a slow list' }, [
        route({
          method: 'get',
          path: '/slow',
          operationId: 'slowList',
          summary: 'slow list',
          description: 'a list that waits until told',
          scope: ['licenses', 'read'],
          list: true,
          response: { status: 200, schema: { type: 'array', items: { type: 'integer' } } },
          handle: () => ({ status: 200, stream: slow() }),
        }),
      ]),
      {
        keySource: 'x-api-key',
        apiKeys: world.core.apiKeys,
        statusTable: ERROR_STATUS,
        errorShape: legacyErrorBody,
        logger: world.logger,
        notFound: () => 'no',
      },
    );
    const server = createServerHttp(express().use(lists.router));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const held = [
        request(server).get('/slow').set('x-api-key', org.liveKey),
        request(server).get('/slow').set('x-api-key', org.liveKey),
      ].map((r) => r.then((x) => x));
      await new Promise((r) => setTimeout(r, 200));
      const third = await request(server).get('/slow').set('x-api-key', org.liveKey);
      expect(third.status).toBe(429);
      expect(third.headers['retry-after']).toBe('1');
      expect(third.body.code).toBe('RATE_LIMITED');
      // Another key is not affected.
      const other = request(server).get('/slow').set('x-api-key', org.testKey);
      release();
      expect((await other).body).toEqual([1, 2]);
      for (const r of await Promise.all(held)) expect(r.body).toEqual([1, 2]);
      // Once they are done, the key lists again.
      await request(server).get('/slow').set('x-api-key', org.liveKey).expect(200);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe('finding 9: failed authentication and writes are rate limited', () => {
  const limited = (rateLimits: { enabled: boolean; authFailuresPerMinute: number; writesPerMinute: number }) =>
    createServerApp({ ...world, config: { ...world.config, rateLimits } });

  it('answers 429 with Retry-After once an address has failed authentication too often, in every generation', async () => {
    const app9 = limited({ enabled: true, authFailuresPerMinute: 20, writesPerMinute: 1000 });
    const bad = await Promise.all(Array.from({ length: 20 }, () => request(app9).get('/products').set('x-api-key', 'live_nope')));
    expect(bad.every((r) => r.status === 401)).toBe(true);
    const legacy = await request(app9).get('/products').set('x-api-key', 'live_nope').expect(429);
    expect(Number(legacy.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(legacy.body).toMatchObject({ code: 'RATE_LIMITED' });
    const catalog = await request(app9).get('/api/products').set('authorization', 'Bearer live_nope').expect(429);
    expect(catalog.body).toMatchObject({ title: 'Too Many Requests' });
  });

  it('limits writes per API key, leaving other keys alone', async () => {
    const app9 = limited({ enabled: true, authFailuresPerMinute: 1000, writesPerMinute: 5 });
    const write = (key: string) => request(app9).post('/api/products').set('authorization', `Bearer ${key}`).send({ name: 'w' });
    for (let i = 0; i < 5; i++) await write(org.liveKey).expect(201);
    const over = await write(org.liveKey).expect(429);
    expect(over.headers['retry-after']).toBeDefined();
    await request(app9).get('/api/products').set('authorization', `Bearer ${org.liveKey}`).expect(200);
    await write(org.testKey).expect(201);
  });

  it('has an off switch (benchmarks)', async () => {
    const app9 = limited({ enabled: false, authFailuresPerMinute: 1, writesPerMinute: 1 });
    for (let i = 0; i < 5; i++) await request(app9).get('/products').set('x-api-key', 'live_nope').expect(401);
  });
});
