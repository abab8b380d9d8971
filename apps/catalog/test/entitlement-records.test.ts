import { FakePaymentProvider } from '@tollgate/core/testing';
import { ajv } from '@tollgate/http';
import { createTestWorld, purchase, seedOrganisation, type SeededOrg, type TestWorld } from '@tollgate/runtime/testing';
import { createCatalogApp } from '../src';
import { entitlementSchema, listOf, objectOf } from '../src/response-schemas';
import { catalogApi } from './helpers';

/* Entitlements as records (issue #20, published #23, #24, #26-28). Every answer is also checked
   against its route's schema by the response audit. */

let world: TestWorld;
let org: SeededOrg;
let other: SeededOrg;
let app: ReturnType<typeof createCatalogApp>;

beforeAll(async () => {
  world = await createTestWorld({ payments: new FakePaymentProvider() });
  org = await seedOrganisation(world, 'ents-org');
  other = await seedOrganisation(world, 'ents-other');
  app = createCatalogApp(world);
});
afterAll(() => world?.close());

const api = (key = org.liveKey) => catalogApi(app, key);
const expectSchema = (schema: object, body: unknown) => {
  const validate = ajv.compile(schema);
  if (!validate(body)) throw new Error(`${JSON.stringify(validate.errors)}\n${JSON.stringify(body)}`);
};
const names = (body: { data: { name: string }[] }) => body.data.map((e) => e.name).sort();
const checked = async (granteeId: string) =>
  ((await api().get(`/api/entitlements/check?granteeId=${granteeId}`).expect(200)).body.data.entitlements as { value: string }[])
    .map((e) => e.value)
    .sort();

describe('catalog entitlements', () => {
  it("lists the products' entitlements, by plan and by name, with cursors", async () => {
    const all = await api().get('/api/entitlements').expect(200);
    expectSchema(listOf(entitlementSchema), all.body);
    expect(names(all.body)).toEqual(['admin', 'edit', 'export']);
    expect(all.body.data[0]).toMatchObject({ organisation: org.tenant.organisationId });
    expect(names((await api().get(`/api/entitlements?planId=${org.keys['plans.notes.team']}`).expect(200)).body)).toEqual([
      'edit',
      'export',
    ]);
    expect(names((await api().get('/api/entitlements?search=EX').expect(200)).body)).toEqual(['export']);
    const first = (await api().get('/api/entitlements?limit=2').expect(200)).body;
    expect(first).toMatchObject({ hasMore: true, previousCursor: null });
    const rest = (await api().get(`/api/entitlements?limit=2&after=${first.nextCursor}`).expect(200)).body;
    expect(rest.data).toHaveLength(1);
    expect([...first.data, ...rest.data].map((e: { name: string }) => e.name).sort()).toEqual(['admin', 'edit', 'export']);
    await api().get(`/api/entitlements?planId=${other.keys['plans.notes.team']}`).expect(403);
    expect(names((await api(org.testKey).get('/api/entitlements').expect(200)).body)).toEqual(['admin', 'edit', 'export']);
    expect((await api(org.testKey).get('/api/entitlements').expect(200)).body.data.map((e: { id: string }) => e.id)).not.toContain(
      all.body.data[0].id,
    );
  });

  it('creates (201; digits or a taken name refused), retrieves, renames and deletes; the check follows', async () => {
    const created = await api().post('/api/entitlements', { name: 'beta_access' }).expect(201);
    expectSchema(objectOf(entitlementSchema), created.body);
    const id = created.body.data.id;
    expect((await api().post('/api/entitlements', { name: 'beta2' }).expect(400)).body.errors[0].property).toBe('name');
    await api().post('/api/entitlements', { name: '' }).expect(400);
    await api().post('/api/entitlements', { name: 'beta_access' }).expect(409);
    // Another product of the organisation: the entitlement names its product.
    const second = (await api().post('/api/products', { name: 'Second' }).expect(201)).body.data.id;
    expect((await api().post('/api/entitlements', { name: 'gamma' }).expect(400)).body.errors[0].property).toBe('productId');
    await api().post('/api/entitlements', { name: 'gamma', productId: second }).expect(201);
    await api().post('/api/entitlements', { name: 'gamma', productId: other.keys['products.notes'] }).expect(403);
    expect((await api().get(`/api/entitlements/${id}`).expect(200)).body.data).toMatchObject({ id, name: 'beta_access' });
    await api(other.liveKey).get(`/api/entitlements/${id}`).expect(403);
    await api(org.testKey).get(`/api/entitlements/${id}`).expect(404);
    await api().get('/api/entitlements/00000000-0000-4000-8000-000000000000').expect(404);
    // An entitlement a plan grants: renamed, the check answers the new name; deleted, nothing.
    await purchase(world, org.keys['plans.notes.team'], 'ent-user', 2);
    expect(await checked('ent-user')).toEqual(['edit', 'export']);
    const edit = (await api().get('/api/entitlements?search=edit').expect(200)).body.data[0].id;
    await api().put(`/api/entitlements/${edit}`, { name: 'Edit Docs' }).expect(204);
    expect(await checked('ent-user')).toEqual(['Edit Docs', 'export']);
    await api().put(`/api/entitlements/${edit}`, { name: 'export' }).expect(409);
    await api().put(`/api/entitlements/${edit}`, {}).expect(204);
    await api(other.liveKey).put(`/api/entitlements/${edit}`, { name: 'x' }).expect(403);
    await api().del(`/api/entitlements/${edit}`).expect(204);
    expect(await checked('ent-user')).toEqual(['export']);
    expect(names((await api().get(`/api/entitlements?planId=${org.keys['plans.notes.team']}`).expect(200)).body)).toEqual(['export']);
    await api().get(`/api/entitlements/${edit}`).expect(404);
    await api(org.readOnlyKey).post('/api/entitlements', { name: 'nope' }).expect(403);
  });
});
