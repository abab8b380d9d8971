/* Each generation declares each operation once: its router, the server's dispatch and its OpenAPI
   document are derived from the route table, so none can drift from the others. */
import request from 'supertest';
import express from 'express';
import { catalogOpenApi, catalogRoutes } from '@tollgate/app-catalog';
import { legacyOpenApi, legacyRoutes } from '@tollgate/app-legacy';
import { v1OpenApi, v1Routes } from '@tollgate/app-v1';
import { ERROR_STATUS, generationRouter, legacyErrorBody, legacyErrorSchema, openApiDocument, type Route } from '@tollgate/http';
import { createTestWorld, seedOrganisation, type SeededOrg, type TestWorld } from '@tollgate/runtime/testing';

let world: TestWorld;
let org: SeededOrg;
beforeAll(async () => {
  world = await createTestWorld();
  org = await seedOrganisation(world, 'routes-org');
});
afterAll(() => world?.close());

const opsOfRoutes = (routes: Route[]) => routes.map((r) => `${r.method.toUpperCase()} ${r.path.replace(/:(\w+)/g, '{$1}')}`).sort();
const opsOfDocument = (doc: Record<string, unknown>) =>
  Object.entries(doc.paths as Record<string, object>)
    .flatMap(([p, methods]) => Object.keys(methods).map((m) => `${m.toUpperCase()} ${p}`))
    .sort();

describe('route tables', () => {
  it('give every route an OpenAPI entry and every entry a route, in all three generations', () => {
    const tables = {
      legacy: [legacyRoutes(world.core), legacyOpenApi(world.core)],
      v1: [v1Routes(world), v1OpenApi(world)],
      catalog: [catalogRoutes(world.core), catalogOpenApi(world.core)],
    } as const;
    for (const [name, [routes, doc]] of Object.entries(tables)) {
      const ops = opsOfRoutes(routes);
      expect(new Set(ops).size).toBe(ops.length);
      expect({ name, ops: opsOfDocument(doc) }).toEqual({ name, ops });
    }
  });

  it('remove an operation from the router, the dispatch and the OpenAPI document at once', async () => {
    const all = legacyRoutes(world.core);
    const without = all.filter((r) => !(r.method === 'get' && r.path === '/products'));
    const build = (routes: Route[]) =>
      generationRouter(routes, {
        keySource: 'x-api-key',
        apiKeys: world.core.apiKeys,
        statusTable: ERROR_STATUS,
        errorShape: legacyErrorBody,
        logger: world.logger,
        notFound: () => 'no such operation',
      });
    const [full, cut] = [build(all), build(without)];
    expect(full.serves('GET', '/products')).toBe(true);
    expect(cut.serves('GET', '/products')).toBe(false);
    expect(cut.serves('GET', `/products/${org.keys['products.notes']}/plans`)).toBe(true);
    const app = (g: typeof full) => express().use(g.router);
    await request(app(full)).get('/products').set('x-api-key', org.liveKey).expect(200);
    await request(app(cut)).get('/products').set('x-api-key', org.liveKey).expect(404);
    const doc = (routes: Route[]) =>
      openApiDocument(routes, { title: 't', version: 'v', auth: 'x-api-key', errorSchema: legacyErrorSchema });
    expect(opsOfDocument(doc(all))).toContain('GET /products');
    expect(opsOfDocument(doc(without))).not.toContain('GET /products');
  });
});
