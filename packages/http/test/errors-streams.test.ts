import net, { type AddressInfo } from 'node:net';
import request from 'supertest';
import type { ApiKeyService } from '@tollgate/core';
import {
  clientStatus,
  compile,
  createHttpApp,
  ERROR_STATUS,
  generationRouter,
  legacyErrorBody,
  resource,
  route,
  toHttpError,
} from '../src';

// Review follow-ups of the bad-input audit: only a refusal of the request keeps its 4xx (not any
// error with a `statusCode`), an anyOf with a `$ref` branch keeps ajv's errors, a client that leaves
// a streamed list frees its reader and is not logged as a fault, and a route may take `null` itself.

const logged: { level: 'info' | 'error'; message: string; fields?: Record<string, unknown> }[] = [];
const logger = {
  info: (message: string, fields?: Record<string, unknown>) => void logged.push({ level: 'info', message, fields }),
  error: (message: string, fields?: Record<string, unknown>) => void logged.push({ level: 'error', message, fields }),
};
beforeEach(() => void (logged.length = 0));

/** Stripe's authentication error as the SDK throws it: a 401 of Stripe's, not of the request. */
const stripeAuthError = () =>
  Object.assign(new Error('Invalid API Key provided: sk_test_***'), { type: 'StripeAuthenticationError', statusCode: 401 });

const stream = { returned: 0, yielded: 0, yieldedAtClose: -1 };
async function* endless(): AsyncGenerator<string[]> {
  try {
    for (;;) {
      stream.yielded++;
      await new Promise((r) => setTimeout(r, 1));
      yield ['x'.repeat(50_000)];
    }
  } finally {
    stream.returned++;
  }
}

const routes = resource({ name: 'things', description: 'test routes' }, [
  route({
    method: 'get',
    path: '/endless',
    operationId: 'endless',
    summary: '',
    description: '',
    response: { status: 200, schema: { type: 'array', items: { type: 'string' } } },
    handle: () => ({ status: 200, stream: endless() }),
  }),
  route({
    method: 'get',
    path: '/stripe',
    operationId: 'stripe',
    summary: '',
    description: '',
    response: { status: 200, schema: {} },
    handle: () => {
      throw stripeAuthError();
    },
  }),
  route({
    method: 'post',
    path: '/nullable',
    operationId: 'nullable',
    summary: '',
    description: '',
    body: { type: 'object', additionalProperties: false },
    nullBody: true,
    response: { status: 200, schema: {} },
    handle: ({ body }) => ({ status: 200, body: { got: body } }),
  }),
]);

const app = createHttpApp({ logger, logRequests: false }, (a) => {
  // How many batches the list had read when the connection closed (this hook runs before the
  // list's own wait for `drain`/`close` is let go).
  a.use('/endless', (_req, res, next) => {
    res.on('close', () => void (stream.yieldedAtClose = stream.yielded));
    next();
  });
  a.get('/stripe-page', () => {
    throw stripeAuthError();
  });
  a.get('/own-decode', () => {
    decodeURIComponent('%ff');
  });
  a.use(
    generationRouter(routes, {
      keySource: 'x-api-key',
      apiKeys: {} as ApiKeyService,
      statusTable: ERROR_STATUS,
      errorShape: legacyErrorBody,
      logger,
      notFound: () => 'no such operation',
    }).router,
  );
});

describe('which thrown status is the request’s', () => {
  it('answers a third-party error carrying statusCode 401 as a logged 500, by a route and outside one', async () => {
    for (const path of ['/stripe', '/stripe-page']) {
      const res = await request(app).get(path).expect(500);
      expect(res.body).toEqual({ error: 'internal error', code: 'INTERNAL' });
    }
    expect(logged.filter((l) => l.level === 'error')).toHaveLength(2);
  });

  it('keeps the 4xx of an error that may be shown (http-errors), and of express’s undecodable path only', async () => {
    expect(clientStatus(Object.assign(new Error('x'), { status: 413, expose: true }))).toBe(413);
    expect(clientStatus(Object.assign(new Error('x'), { statusCode: 400, expose: true }))).toBe(400);
    expect(clientStatus(Object.assign(new Error('x'), { statusCode: 401 }))).toBeUndefined();
    expect(clientStatus(Object.assign(new Error('x'), { status: 404, expose: false }))).toBeUndefined();
    expect(clientStatus(Object.assign(new URIError('x'), { status: 400 }))).toBe(400);
    expect(clientStatus(new URIError('x'))).toBeUndefined();
    expect(toHttpError(new URIError('URI malformed'), ERROR_STATUS).status).toBe(500);
    expect(toHttpError(Object.assign(new URIError("Failed to decode param '%ff'"), { status: 400 }), ERROR_STATUS)).toMatchObject({
      status: 400,
      details: [{ property: 'path' }],
    });
    // A handler's own decodeURIComponent failing is its fault, not the path's.
    await request(app).get('/own-decode').expect(500);
    expect(logged.filter((l) => l.level === 'error')).toHaveLength(1);
  });
});

describe('an anyOf whose branch is a $ref', () => {
  const schema = {
    definitions: { item: { type: 'object', properties: { a: { type: 'string' } }, required: ['a'], additionalProperties: false } },
    anyOf: [{ $ref: '#/definitions/item' }, { type: 'array', items: { $ref: '#/definitions/item' } }],
  };
  const check = compile(schema);
  const details = (value: unknown) => {
    try {
      check(value);
    } catch (e) {
      return (e as { details: { property: string; error: string }[] }).details;
    }
    return [];
  };

  it('keeps ajv’s errors (the object’s among them), not "must be an array" as if the array were the only branch', () => {
    // ajv reports the object branch's error at the referenced schema's path (#/definitions/item),
    // outside #/anyOf/0: which branch it belongs to is not known, so nothing is rewritten.
    expect(details({})).toEqual([
      { property: 'a', error: 'is required' },
      { property: 'body', error: 'must be array' },
      { property: 'body', error: 'must match a schema in anyOf' },
    ]);
    expect(details({ a: 'x' })).toEqual([]);
    expect(details([{ a: 'x' }])).toEqual([]);
  });
});

describe('a client that leaves a streamed list', () => {
  it('gives the reader back and is logged as a client that left, at info, with no stack', async () => {
    const server = app.listen(0, '127.0.0.1');
    try {
      await new Promise((r) => server.once('listening', r));
      const { port } = server.address() as AddressInfo;
      stream.returned = 0;
      stream.yieldedAtClose = -1;
      let seenWaiting = -1;
      await new Promise<void>((resolve, reject) => {
        // A plain socket: the HTTP client is wrapped by nock here, which reads every answer whole.
        const client = net.connect(port, '127.0.0.1', () => client.write('GET /endless HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n'));
        client.once('data', (head) => {
          expect(head.toString('latin1')).toMatch(/^HTTP\/1\.1 200 /);
          client.pause();
          // The server fills the socket (the kernel's buffers) and waits for the client to read: no
          // batch read for 100 ms. Then the client goes away, so the close ends a wait for `drain`.
          let seen = -1;
          let still = 0;
          const look = setInterval(() => {
            still = stream.yielded === seen ? still + 1 : 0;
            seen = stream.yielded;
            if (still < 5) return;
            clearInterval(look);
            seenWaiting = seen;
            client.destroy();
            resolve();
          }, 20);
        });
        client.on('error', () => undefined);
        setTimeout(() => reject(new Error('the server never waited for the client')), 10_000).unref();
      });
      for (let i = 0; i < 100 && stream.returned === 0; i++) await new Promise((r) => setTimeout(r, 20));
      expect(stream.returned).toBe(1);
      // No batch is read after the close that ended the wait for the client (the check after drain).
      expect(stream.yieldedAtClose).toBe(seenWaiting);
      expect(stream.yielded).toBe(stream.yieldedAtClose);
      await new Promise((r) => setTimeout(r, 100));
      expect(stream.yielded).toBe(stream.yieldedAtClose);
      for (let i = 0; i < 50 && logged.length === 0; i++) await new Promise((r) => setTimeout(r, 20));
      expect(logged).toEqual([
        {
          level: 'info',
          message: 'client left before the answer ended',
          fields: { requestId: expect.any(String), method: 'GET', path: '/endless' },
        },
      ]);
    } finally {
      server.close();
    }
  });
});

describe('a route that takes a null body itself', () => {
  it('gets null unvalidated; an object is still validated and an absent body is {}', async () => {
    const send = (text: string) => request(app).post('/nullable').set('content-type', 'application/json').send(text);
    expect((await send('null').expect(200)).body).toEqual({ got: null });
    expect((await send('{}').expect(200)).body).toEqual({ got: {} });
    expect((await send('{"x":1}').expect(400)).body.validationErrors).toEqual([{ property: 'x', error: 'is not allowed' }]);
    expect((await send('[1]').expect(400)).body.code).toBe('VALIDATION_FAILED');
    expect((await request(app).post('/nullable').expect(200)).body).toEqual({ got: {} });
  });
});
