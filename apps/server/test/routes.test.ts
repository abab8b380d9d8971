/* Each generation declares each operation once: its router, the server's dispatch and its OpenAPI
   document are derived from the route table, so none can drift from the others. */
import request from 'supertest';
import express from 'express';
import { catalogOpenApi, catalogRoutes } from '@tollgate/app-catalog';
import { legacyOpenApi, legacyRoutes } from '@tollgate/app-legacy';
import { v1OpenApi, v1Routes } from '@tollgate/app-v1';
import {
  ajv,
  ERROR_STATUS,
  generationRouter,
  installResponseAudit,
  legacyErrorBody,
  legacyErrorSchema,
  openApiDocument,
  type ResponseAuditSink,
  type Route,
} from '@tollgate/http';
import { createTestWorld, seedOrganisation, type SeededOrg, type TestWorld } from '@tollgate/runtime/testing';
import { createServerApp } from '../src';

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

type Operation = {
  operationId?: string;
  tags?: string[];
  description?: string;
  parameters?: { example?: unknown }[];
  requestBody?: { content: Record<string, { schema: object; example?: unknown }> };
  responses: Record<string, { content?: Record<string, { schema: object; example?: unknown }> }>;
};

describe('the served OpenAPI documents', () => {
  it('give every operation an operationId, a tag of its resource, a description, an example and a success schema', async () => {
    const app = createServerApp(world);
    for (const generation of ['legacy', 'v1', 'catalog']) {
      const doc = (await request(app).get(`/openapi/${generation}.json`).expect(200)).body;
      const tags = new Set((doc.tags as { name: string; description: string }[]).map((t) => t.name));
      const ids: string[] = [];
      for (const [path, methods] of Object.entries(doc.paths as Record<string, Record<string, Operation>>)) {
        for (const [method, op] of Object.entries(methods)) {
          const where = `${generation} ${method.toUpperCase()} ${path}`;
          expect({ where, operationId: typeof op.operationId }).toEqual({ where, operationId: 'string' });
          ids.push(op.operationId as string);
          expect({ where, tags: op.tags?.length, known: tags.has(op.tags?.[0] ?? '') }).toEqual({ where, tags: 1, known: true });
          expect({ where, description: (op.description ?? '').length > 10 }).toEqual({ where, description: true });
          const statuses = Object.keys(op.responses).filter((st) => /^2/.test(st));
          expect({ where, success: statuses.length > 0 }).toEqual({ where, success: true });
          // A 2xx with a body has a schema (202 and 204 may have none); each example is valid against its schema.
          const examples: unknown[] = [];
          for (const st of statuses) {
            const content = op.responses[st].content;
            if (!content)
              expect({ where, st, bodiless: st === '204' || st === '202' || st === '303' }).toEqual({ where, st, bodiless: true });
            for (const media of Object.values(content ?? {})) {
              expect({ where, st, example: media.example !== undefined }).toEqual({ where, st, example: true });
              const valid = ajv.validate(media.schema, media.example);
              expect({ where, st, valid, errors: ajv.errorsText(ajv.errors) }).toEqual({ where, st, valid: true, errors: 'No errors' });
              examples.push(media.example);
            }
          }
          for (const media of Object.values(op.requestBody?.content ?? {})) {
            expect({ where, valid: ajv.validate(media.schema, media.example), errors: ajv.errorsText(ajv.errors) }).toEqual({
              where,
              valid: true,
              errors: 'No errors',
            });
            examples.push(media.example);
          }
          examples.push(...(op.parameters ?? []).filter((p) => p.example !== undefined).map((p) => p.example));
          expect({ where, examples: examples.length > 0 }).toEqual({ where, examples: true });
        }
      }
      expect({ generation, unique: new Set(ids).size }).toEqual({ generation, unique: ids.length });
      // Every tag is a resource that has operations (`/docs` shows one group per tag).
      expect([...tags].sort()).toEqual(
        [
          ...new Set(
            Object.values(doc.paths as Record<string, Record<string, Operation>>).flatMap((m) => Object.values(m).map((o) => o.tags?.[0])),
          ),
        ].sort(),
      );
    }
  });
});

describe('the response audit', () => {
  const build = (routes: Route[]) =>
    express().use(
      generationRouter(routes, {
        keySource: 'x-api-key',
        apiKeys: world.core.apiKeys,
        statusTable: ERROR_STATUS,
        errorShape: legacyErrorBody,
        errorSchema: legacyErrorSchema,
        logger: world.logger,
        notFound: () => 'no such operation',
      }).router,
    );
  /** Runs `work` with a sink of its own (the test run's sink would fail this test for the mismatches it provokes). */
  async function audited(work: () => Promise<unknown>): Promise<ResponseAuditSink['violations']> {
    const sink: ResponseAuditSink = { violations: [] };
    const before = installResponseAudit(sink);
    try {
      await work();
    } finally {
      installResponseAudit(before);
    }
    return sink.violations;
  }
  const plansPath = () => `/products/${org.keys['products.notes']}/plans`;
  /** The legacy table with the presenter of `GET /products/:uuid/plans` changed by `change`. */
  const withPlansPresenter = (change: (body: unknown) => unknown) =>
    legacyRoutes(world.core).map((r) =>
      r.path === '/products/:uuid/plans'
        ? {
            ...r,
            handle: async (ctx: Parameters<Route['handle']>[0]) => {
              const a = await r.handle(ctx);
              return { ...a, body: change(a.body) };
            },
          }
        : r,
    );

  it('finds nothing while presenters and schemas agree', async () => {
    const app = build(legacyRoutes(world.core));
    const violations = await audited(async () => {
      await request(app).get(plansPath()).set('x-api-key', org.liveKey).expect(200);
      await request(app).get('/products').set('x-api-key', org.liveKey).expect(200);
      await request(app).get('/nowhere').set('x-api-key', org.liveKey).expect(404);
    });
    expect(violations).toEqual([]);
  });

  it('records a presenter that adds a member, drops one or changes its type, and a streamed item that does not match', async () => {
    const extra = build(withPlansPresenter((b) => (b as object[]).map((p) => ({ ...p, secretNotes: 'x' }))));
    const dropped = build(withPlansPresenter((b) => (b as { uuid: string }[]).map(({ uuid: _u, ...p }) => p)));
    const retyped = build(withPlansPresenter((b) => (b as object[]).map((p) => ({ ...p, length: 'twelve' }))));
    const streamed = build(
      legacyRoutes(world.core).map((r) =>
        r.path === '/products'
          ? {
              ...r,
              handle: () => ({
                status: 200,
                stream: (async function* () {
                  yield [{ uuid: 'not a product' }];
                })(),
              }),
            }
          : r,
      ),
    );
    const violations = await audited(async () => {
      for (const app of [extra, dropped, retyped]) await request(app).get(plansPath()).set('x-api-key', org.liveKey).expect(200);
      await request(streamed).get('/products').set('x-api-key', org.liveKey).expect(200);
    });
    expect(violations.map((v) => [v.route, v.status])).toEqual([
      ['GET /products/:uuid/plans', 200],
      ['GET /products/:uuid/plans', 200],
      ['GET /products/:uuid/plans', 200],
      ['GET /products', 200],
    ]);
    expect(violations[0].problem).toMatch(/must NOT have additional properties/);
    expect(violations[1].problem).toMatch(/must have required property 'uuid'/);
    expect(violations[2].problem).toMatch(/length must be integer/);
  });

  it('records an undeclared status, a body where none is declared, and an error body off the error schema of the generation', async () => {
    const app = build(
      legacyRoutes(world.core).map((r) =>
        r.path === '/products/:uuid/plans'
          ? { ...r, handle: () => ({ status: 202, body: [] }) }
          : r.path === '/products/:uuid/features'
            ? { ...r, response: { status: 200 } }
            : r.method === 'post'
              ? { ...r, handle: () => ({ status: 409, body: { message: 'not the legacy shape' } }) }
              : r,
      ),
    );
    const violations = await audited(async () => {
      await request(app).get(plansPath()).set('x-api-key', org.liveKey).expect(202);
      await request(app).get(`/products/${org.keys['products.notes']}/features`).set('x-api-key', org.liveKey).expect(200);
      await request(app)
        .post('/licenses')
        .set('x-api-key', org.liveKey)
        .send({ planUuid: org.keys['plans.notes.team'], member: 'm', granteeId: null })
        .expect(409);
    });
    expect(violations.map((v) => v.problem)).toEqual([
      'status 202 is not one the route declares',
      'a body where the route declares none',
      expect.stringMatching(/must have required property 'error'/),
    ]);
  });
});
