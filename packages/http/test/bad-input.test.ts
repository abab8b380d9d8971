import { gzipSync } from 'node:zlib';
import express from 'express';
import request from 'supertest';
import { DomainError, ErrorCodes, type ApiKeyService } from '@tollgate/core';
import { createHttpApp, ERROR_STATUS, generationRouter, legacyErrorBody, resource, route, type ErrorBodyShape } from '../src';

// The bad-input audit (24 700 requests): errors no router answered reached Express's own HTML page
// (a stack with file paths), a streamed list cut the connection on a failure before its first byte,
// path parameters escaped the clean-text guard, a JSON `null` body passed as `{}`, and an
// object-or-array body answered ajv's raw wording.

const logged: { message: string; fields?: Record<string, unknown> }[] = [];
const logger = {
  info: () => undefined,
  error: (message: string, fields?: Record<string, unknown>) => void logged.push({ message, fields }),
};
beforeEach(() => void (logged.length = 0));

/** A second shape, as the catalog's (`/api`) differs from the others'. */
const apiShape: ErrorBodyShape = (e) => ({ title: String(e.status), detail: e.message, errors: e.details.length ? e.details : null });

async function* pages(mode: string): AsyncGenerator<number[]> {
  if (mode === 'down') throw new DomainError(ErrorCodes.DATABASE_UNAVAILABLE, 'the database is unavailable');
  if (mode === 'empty') return;
  yield [1, 2];
  if (mode === 'late') throw new DomainError(ErrorCodes.DATABASE_UNAVAILABLE, 'the database is unavailable');
  yield [];
  yield [3];
}

const item = { type: 'object', properties: { a: { type: 'string', format: 'uuid' } }, required: ['a'], additionalProperties: false };
const routes = resource({ name: 'things', description: 'test routes' }, [
  route({
    method: 'get',
    path: '/names/:name',
    operationId: 'getName',
    summary: '',
    description: '',
    textParams: ['name'],
    response: { status: 200, schema: {} },
    handle: ({ params }) => ({ status: 200, body: { name: params.name } }),
  }),
  route({
    method: 'get',
    path: '/lists/:mode',
    operationId: 'list',
    summary: '',
    description: '',
    textParams: ['mode'],
    response: { status: 200, schema: { type: 'array', items: { type: 'integer' } } },
    handle: ({ params }) => ({ status: 200, stream: pages(params.mode), headers: { 'x-next-cursor': 'c' } }),
  }),
  route({
    method: 'put',
    path: '/things',
    operationId: 'putThing',
    summary: '',
    description: '',
    body: { type: 'object', properties: { owner: { type: 'string' } }, additionalProperties: false },
    response: { status: 200, schema: {} },
    handle: ({ body }) => ({ status: 200, body }),
  }),
  route({
    method: 'post',
    path: '/either',
    operationId: 'postEither',
    summary: '',
    description: '',
    body: { anyOf: [item, { type: 'array', minItems: 1, maxItems: 2, items: item }] },
    response: { status: 200, schema: {} },
    handle: ({ body }) => ({ status: 200, body }),
  }),
]);

const app = createHttpApp(
  { logger, logRequests: false, errorShape: (path) => (path.startsWith('/api/') ? apiShape : legacyErrorBody) },
  (a) => {
    a.get('/plain/:p', (_req, res) => void res.end('x'));
    a.get('/boom', () => {
      throw new Error('secret at /work/main/packages/x.ts');
    });
    a.get('/api/boom', () => {
      throw new Error('secret');
    });
    a.get('/teapot', () => {
      throw Object.assign(new Error('library wording'), { statusCode: 418, expose: true });
    });
    a.post('/raw', express.raw({ type: () => true, limit: 10 }), (_req, res) => void res.end('ok'));
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
  },
);

const noStack = (res: request.Response) => {
  expect(res.headers['content-type']).toBe('application/json');
  expect(res.text).not.toMatch(/<pre>|\bat \w|node_modules|\/work\//);
};

describe('errors no router answered: JSON in the shape of the path, never a stack', () => {
  it('answers a path that does not decode 400 naming the path', async () => {
    const res = await request(app).get('/plain/%ff').expect(400);
    noStack(res);
    expect(res.body).toEqual({
      error: 'the path is not valid: a percent-escape in it does not decode',
      code: 'VALIDATION_FAILED',
      validationErrors: [{ property: 'path', error: 'has a percent-escape that does not decode' }],
    });
    expect(logged).toEqual([]);
  });

  it('answers a body its parser refuses with the parser error status (413, 415, 400)', async () => {
    noStack(await request(app).post('/raw').send('x'.repeat(100)).expect(413));
    expect((await request(app).post('/raw').set('content-encoding', 'identityx').send('x').expect(415)).body.code).toBe(
      'UNSUPPORTED_MEDIA_TYPE',
    );
    const gz = await request(app).post('/raw').set('content-encoding', 'gzip').send('x').expect(400);
    noStack(gz);
    expect(gz.body).toEqual({ error: 'the request is not valid', code: 'VALIDATION_FAILED' });
    await request(app).post('/raw').set('content-encoding', 'gzip').send(gzipSync('ok')).expect(200);
    expect(logged).toEqual([]);
  });

  it('uses statusCode as well as status for a 4xx a library says may be shown', async () => {
    noStack(await request(app).get('/teapot').expect(418));
  });

  it('answers an unexpected fault 500 in the path generation shape and logs its stack once', async () => {
    const res = await request(app).get('/boom').expect(500);
    noStack(res);
    expect(res.body).toEqual({ error: 'internal error', code: 'INTERNAL' });
    expect(logged).toHaveLength(1);
    expect(String(logged[0].fields?.error)).toMatch(/secret at[\s\S]*\n\s+at /);
    const api = await request(app).get('/api/boom').expect(500);
    expect(api.body).toEqual({ title: '500', detail: 'internal error', errors: null });
    expect(logged).toHaveLength(2);
  });
});

describe('path parameters are clean text, named themselves', () => {
  it('answers 400 naming the parameter for a NUL or a broken escape', async () => {
    for (const bad of ['a%00b', '%00']) {
      const res = await request(app).get(`/names/${bad}`);
      expect(res.status).toBe(400);
      expect(res.body.validationErrors).toEqual([{ property: 'name', error: 'contains a NUL character or broken UTF-16' }]);
    }
    // A lone surrogate's bytes are not UTF-8: the escape does not decode.
    expect((await request(app).get('/names/%ED%A0%80').expect(400)).body.validationErrors[0].property).toBe('path');
    expect((await request(app).get('/names/caf%C3%A9').expect(200)).body).toEqual({ name: 'café' });
  });

  it('answers a streamed list whose path parameter is not clean text 400 (the connection was cut)', async () => {
    const res = await request(app).get('/lists/a%00b').expect(400);
    expect(res.body.validationErrors[0].property).toBe('mode');
  });
});

describe('streamed lists read their first page before answering', () => {
  it('answers 503 with Retry-After in the generation shape when the first page fails', async () => {
    const res = await request(app).get('/lists/down').expect(503);
    expect(res.headers['retry-after']).toBe('5');
    expect(res.headers['x-next-cursor']).toBeUndefined();
    expect(res.body).toEqual({ error: 'the database is unavailable', code: 'DATABASE_UNAVAILABLE' });
  });

  it('streams every batch, an empty list too', async () => {
    const res = await request(app).get('/lists/ok').expect(200);
    expect(res.text).toBe('[1,2,3]');
    expect(res.headers['x-next-cursor']).toBe('c');
    expect((await request(app).get('/lists/empty').expect(200)).text).toBe('[]');
  });

  it('still cuts the connection when a later page fails (never a well-formed partial list)', async () => {
    await expect(request(app).get('/lists/late')).rejects.toThrow();
  });
});

describe('a JSON body that is not what the route takes', () => {
  it('refuses null where an object is wanted, naming body; an absent or empty body is still {}', async () => {
    const res = await request(app).put('/things').set('content-type', 'application/json').send('null').expect(400);
    expect(res.body.validationErrors).toEqual([{ property: 'body', error: 'must be object' }]);
    expect((await request(app).put('/things').expect(200)).body).toEqual({});
    expect((await request(app).put('/things').set('content-type', 'application/json').send('').expect(200)).body).toEqual({});
    expect((await request(app).put('/things').send({ owner: 'o' }).expect(200)).body).toEqual({ owner: 'o' });
  });

  it('tells an object-or-array body what is wrong with the one it sent, not every branch', async () => {
    const arr = await request(app)
      .post('/either')
      .send([{ a: 'x' }])
      .expect(400);
    expect(arr.body.error).toBe('0.a must match format "uuid"');
    expect(arr.body.validationErrors).toEqual([{ property: '0.a', error: 'must match format "uuid"' }]);
    const obj = await request(app).post('/either').send({}).expect(400);
    expect(obj.body.validationErrors).toEqual([{ property: 'a', error: 'is required' }]);
    const many = await request(app).post('/either').send([{}, {}, {}]).expect(400);
    expect(many.body.error).not.toMatch(/anyOf|must be object/);
    for (const body of ['null', '"text"', '5']) {
      const res = await request(app).post('/either').set('content-type', 'application/json').send(body).expect(400);
      expect(res.body.validationErrors).toEqual([{ property: 'body', error: 'must be an object or an array' }]);
    }
    const ok = [{ a: '3f1c2b9e-8a47-4d2b-9c3e-5b7a1d2e4f60' }];
    expect((await request(app).post('/either').send(ok).expect(200)).body).toEqual(ok);
  });
});
