import request from 'supertest';
import { DomainError, ErrorCodes, type Repositories, type UnitOfWork } from '@tollgate/core';
import { createTestWorld, seedOrganisation, type SeededOrg, type TestWorld } from '@tollgate/runtime/testing';
import { createLegacyApp } from '../src';

// The bad-input audit: an object-or-array body told ajv's every branch, and a streamed list cut
// the connection when its first page failed (docs/reliability.md promises 503 in an outage).

let world: TestWorld;
let org: SeededOrg;
let app: ReturnType<typeof createLegacyApp>;

beforeAll(async () => {
  world = await createTestWorld();
  org = await seedOrganisation(world, 'bad-input');
  app = createLegacyApp(world);
});
afterAll(() => world?.close());

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

describe('POST /licenses: one object or an array, told what is wrong with the one sent', () => {
  const post = (body: string) =>
    request(app).post('/licenses').set('x-api-key', org.liveKey).set('content-type', 'application/json').send(body);
  const good = () => ({ planUuid: org.keys['plans.notes.free'], member: 'm1@x.com', granteeId: 'g1' });

  it('names the array item and field, without "must be object" or "anyOf"', async () => {
    const res = await post(JSON.stringify([good(), { ...good(), planUuid: 'nope' }])).expect(400);
    expect(res.body).toEqual({
      error: '1.planUuid must match format "uuid"',
      code: 'VALIDATION_FAILED',
      validationErrors: [{ property: '1.planUuid', error: 'must match format "uuid"' }],
    });
    const empty = await post('[]').expect(400);
    expect(empty.body.validationErrors).toEqual([{ property: 'body', error: 'must NOT have fewer than 1 items' }]);
  });

  it('names the field of a single object, without "must be array"', async () => {
    const res = await post(JSON.stringify({ ...good(), planUuid: null })).expect(400);
    expect(res.body.validationErrors).toEqual([{ property: 'planUuid', error: 'must be string' }]);
  });

  it('answers a body that is neither (null too) "must be an object or an array"', async () => {
    for (const body of ['null', '"x"', '7']) {
      const res = await post(body).expect(400);
      expect(res.body).toEqual({
        error: 'body must be an object or an array',
        code: 'VALIDATION_FAILED',
        validationErrors: [{ property: 'body', error: 'must be an object or an array' }],
      });
    }
  });

  it('still creates from an array (the audit request, an object wrapped in an array)', async () => {
    const res = await post(JSON.stringify([good()])).expect(201);
    expect(res.body).toHaveLength(1);
  });
});

describe('a streamed list whose first page fails', () => {
  it('answers GET /products 503 with Retry-After in the legacy shape (not a cut connection)', async () => {
    const queries = pagesDown(world.core.queries, 'products');
    const down = createLegacyApp({ ...world, core: { ...world.core, queries } });
    const res = await request(down).get('/products').set('x-api-key', org.liveKey).expect(503);
    expect(res.headers['retry-after']).toBe('5');
    expect(res.body).toEqual({ error: 'the database is unavailable; retry later', code: 'DATABASE_UNAVAILABLE' });
    // The same app answers the list once the database does.
    await request(app).get('/products').set('x-api-key', org.liveKey).expect(200);
  });
});
