import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { createTestWorld, seedOrganisation, type SeededOrg, type TestWorld } from '@tollgate/runtime/testing';
import { catalogOpenApi, createCatalogApp } from '../src';
import { commerceOperations } from './published/commerce';

// Every operation of this lane's table is an operation of the catalog generation: none answers the
// router's "no such catalog operation"; the dashboard's and assistant's own endpoints answer 404
// saying why they are not served.
let world: TestWorld;
let org: SeededOrg;
let app: ReturnType<typeof createCatalogApp>;
/** The catalog's OpenAPI operations: `METHOD /path` to operationId. */
let operationIds: Map<string, string>;

beforeAll(async () => {
  world = await createTestWorld();
  org = await seedOrganisation(world, 'published-commerce');
  app = createCatalogApp(world);
  const doc = catalogOpenApi(world.core) as { paths: Record<string, Record<string, { operationId: string }>> };
  operationIds = new Map(
    Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.entries(ops).map(([m, op]) => [`${m.toUpperCase()} ${path}`, op.operationId] as const),
    ),
  );
});
afterAll(() => world?.close());

describe("the published commerce and operations resources (this lane's table)", () => {
  it.each(commerceOperations.map((op) => [`${op.method} ${op.path}`, op] as const))('%s is answered', async (_name, op) => {
    const path = op.path.replace(/\{id\}/g, randomUUID());
    const res = await request(app)
      [op.method.toLowerCase() as 'get' | 'post' | 'put' | 'patch' | 'delete'](path)
      .set('authorization', `Bearer ${org.testKey}`)
      .send(op.method === 'GET' || op.method === 'DELETE' ? undefined : {});
    expect(res.body?.detail ?? '').not.toBe('no such catalog operation');
    if (!op.notServed) expect(operationIds.get(`${op.method} ${op.path}`)).toBe(op.operationId);
    if (op.notServed) {
      expect(res.status).toBe(404);
      expect(res.body.detail).toMatch(/not (part of|served)/);
    }
  });

  it('answers an unknown path with "no such catalog operation" (what the table is checked against)', async () => {
    const res = await request(app).get('/api/nothing-here').set('authorization', `Bearer ${org.testKey}`).expect(404);
    expect(res.body.detail).toBe('no such catalog operation');
  });
});
