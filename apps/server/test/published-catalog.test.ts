/* Issue #20, acceptance 1: every operation of the real service's published catalog document (our own
   table of its 110, apps/server/test/published/operations.ts) is an operation of this server. Each is
   called through the combined server with a test key: none answers the catalog router's "no such
   catalog operation" (nor 405); the six endpoints of the hosted service's own dashboard and
   assistant answer 404 saying why they are not served. The real bodies and the shapes of the
   answers are asserted per operation by the catalog's own tests (docs/api/catalog.md names them);
   the lanes' tables (apps/catalog/test/published/*.ts) must be rows of this one. */
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { createTestWorld, seedOrganisation, type SeededOrg, type TestWorld } from '@tollgate/runtime/testing';
import { catalogOpenApi } from '@tollgate/app-catalog';
import { createServerApp } from '../src';
import { PUBLISHED_OPERATIONS } from './published/operations';
import { commerceOperations } from '../../catalog/test/published/commerce';
import { peopleOperations } from '../../catalog/test/published/people';

let world: TestWorld;
let org: SeededOrg;
let app: ReturnType<typeof createServerApp>;
let served: Set<string>;

beforeAll(async () => {
  world = await createTestWorld();
  org = await seedOrganisation(world, 'published-catalog');
  app = createServerApp(world);
  const doc = catalogOpenApi(world.core) as { paths: Record<string, Record<string, unknown>> };
  served = new Set(Object.entries(doc.paths).flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`)));
});
afterAll(() => world?.close());

const key = (op: { method: string; path: string }) => `${op.method} ${op.path}`;

describe('the published catalog API, every operation', () => {
  it('has 110 operations, 104 of them served and 6 of the hosted dashboard and assistant', () => {
    expect(PUBLISHED_OPERATIONS).toHaveLength(110);
    expect(new Set(PUBLISHED_OPERATIONS.map(key)).size).toBe(110);
    expect(PUBLISHED_OPERATIONS.filter((op) => op.dashboard)).toHaveLength(6);
  });

  it("lists every row of the lanes' tables", () => {
    const all = new Set(PUBLISHED_OPERATIONS.map(key));
    for (const op of [...commerceOperations, ...peopleOperations]) expect(all).toContain(key(op));
  });

  it.each(PUBLISHED_OPERATIONS.filter((op) => !op.dashboard).map((op) => [key(op), op] as const))(
    '%s is an operation of the server and of its OpenAPI document',
    async (_name, op) => {
      expect(served).toContain(key(op));
      const path = op.path.replace(/\{id\}/g, randomUUID());
      const call = request(app)[op.method.toLowerCase() as 'get' | 'post' | 'put' | 'patch' | 'delete'](path);
      const res = await call
        .set('authorization', `Bearer ${org.testKey}`)
        .send(op.method === 'GET' || op.method === 'DELETE' ? undefined : {});
      expect(res.body?.detail ?? '').not.toBe('no such catalog operation');
      expect(res.status).not.toBe(405);
      expect(res.status).toBeLessThan(500);
    },
  );

  it.each(PUBLISHED_OPERATIONS.filter((op) => op.dashboard).map((op) => [key(op), op] as const))(
    '%s (the hosted dashboard or assistant) answers 404 saying why',
    async (_name, op) => {
      const path = op.path.replace(/\{id\}/g, randomUUID());
      const call = request(app)[op.method.toLowerCase() as 'get' | 'post'](path);
      const res = await call.set('authorization', `Bearer ${org.testKey}`).send(op.method === 'GET' ? undefined : {});
      expect(res.status).toBe(404);
      expect(res.body.detail).toMatch(/not (part of|served)/);
    },
  );
});
