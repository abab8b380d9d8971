import { createTestWorld, seedOrganisation, type SeededOrg, type TestWorld } from '@tollgate/runtime/testing';
import request from 'supertest';
import { catalogOpenApi, createCatalogApp } from '../src';

// The catalog app alone (its own port): an error no router answers (a fault of its operations
// routes) comes in the catalog's error shape, logged once; the import documents an object body
// though a `null` one is still answered "file not provided".

const errors: { message: string; fields?: Record<string, unknown> }[] = [];
const logger = {
  info: () => undefined,
  error: (message: string, fields?: Record<string, unknown>) => void errors.push({ message, fields }),
};
let world: TestWorld;
let org: SeededOrg;

beforeAll(async () => {
  world = await createTestWorld({ logger });
  org = await seedOrganisation(world, 'catalog-app-errors');
});
afterAll(() => world?.close());
beforeEach(() => void (errors.length = 0));

describe('the catalog app alone', () => {
  it('answers a fault outside the catalog router 500 in the catalog error shape, logged once with its stack', async () => {
    const app = createCatalogApp({
      ...world,
      readiness: () => Promise.reject(new Error('readiness probe broke at /work/secret.ts')),
    });
    const res = await request(app).get('/readyz').expect(500);
    expect(res.headers['content-type']).toBe('application/json');
    expect(res.body).toStrictEqual({ title: 'Internal Server Error', detail: 'internal error', errors: null });
    expect(res.text).not.toMatch(/secret|\bat \w/);
    expect(errors).toHaveLength(1);
    expect(String(errors[0].fields?.error)).toMatch(/readiness probe broke[\s\S]*\n\s+at /);
  });

  it('documents the import body as an object, and still answers a null body 400 naming file', async () => {
    const op = (catalogOpenApi(world.core) as { paths: Record<string, Record<string, { requestBody: unknown }>> }).paths[
      '/api/products/import'
    ].post;
    expect(op.requestBody).toMatchObject({ content: { 'application/json': { schema: { type: 'object' } } } });
    const app = createCatalogApp(world);
    const res = await request(app)
      .post('/api/products/import')
      .set('authorization', `Bearer ${org.liveKey}`)
      .set('content-type', 'application/json')
      .send('null')
      .expect(400);
    expect(res.body.errors).toEqual([expect.objectContaining({ property: 'file' })]);
  });
});
