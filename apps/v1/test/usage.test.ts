import { createTestWorld, purchase, seedOrganisation, type SeededOrg, type TestWorld } from '@tollgate/runtime/testing';
import { createV1App, v1Routes } from '../src';
import { expectSchema, v1 } from './helpers';

let world: TestWorld;
let app: ReturnType<typeof createV1App>;
let org: SeededOrg;
let other: SeededOrg;

beforeAll(async () => {
  world = await createTestWorld();
  app = createV1App(world);
  org = await seedOrganisation(world, 'v1-usage');
  other = await seedOrganisation(world, 'v1-usage-other');
});
afterAll(() => world?.close());

const schemaOf = (method: string, path: string) =>
  v1Routes({ ...world, config: { publicUrl: 'http://x' } } as never).find((r) => r.method === method && r.path === path)?.response
    .schema as object;

describe('v1 usage (the real SDK call shape)', () => {
  it('PUT /usage with unique-key counts once; GET /licenses/:uuid/usage shows the units', async () => {
    const { subscription } = await purchase(world, org.keys['plans.notes.team'], 'usage-grantee', 2);
    const api = v1(app, org.liveKey);
    const license = (await api.get(`/licenses?subscriptionUuid=${subscription.id}`)).body[0].uuid as string;
    const body = { licenseUuid: license, featureVariableName: 'projects', countOptions: { increment: 4 } };
    const first = await api.put('/usage', body).set('unique-key', 'u-1');
    expect(first.status).toBe(200);
    expectSchema(schemaOf('put', '/usage'), first.body);
    expect(first.body).toEqual({ licenseUuid: license, featureVariableName: 'projects', unitCount: 4 });
    expect((await api.put('/usage', body).set('unique-key', 'u-1')).body.unitCount).toBe(4);
    expect((await api.put('/usage', { ...body, countOptions: { increment: 5 } }).set('unique-key', 'u-1')).status).toBe(409);
    expect((await api.put('/usage', { ...body, countOptions: { increment: 2 } })).body.unitCount).toBe(6);
    // Without a version header too, as the real v1 clients send it.
    expect((await v1(app, org.liveKey, null).put('/usage', { ...body, countOptions: { increment: 1 } })).body.unitCount).toBe(7);
    // A client without a key sends the literal `undefined`: no key, so every such call counts, even
    // with another body. An empty key is refused.
    expect((await api.put('/usage', { ...body, countOptions: { increment: 1 } }).set('unique-key', 'undefined')).body.unitCount).toBe(8);
    expect((await api.put('/usage', { ...body, countOptions: { increment: 2 } }).set('unique-key', 'undefined')).body.unitCount).toBe(10);
    expect((await api.put('/usage', { ...body, countOptions: { increment: 1 } }).set('unique-key', '')).status).toBe(400);

    const usage = await api.get(`/licenses/${license}/usage`);
    expect(usage.status).toBe(200);
    expectSchema(schemaOf('get', '/licenses/:licenseUuid/usage'), usage.body);
    expect(usage.body).toEqual([expect.objectContaining({ licenseUuid: license, planUuid: org.keys['plans.notes.team'], unitCount: 10 })]);

    expect((await api.put('/usage', { ...body, featureVariableName: 'nope' })).status).toBe(400);
    expect((await api.put('/usage', { ...body, countOptions: { increment: 0 } })).status).toBe(400);
    expect((await v1(app, other.liveKey).put('/usage', body)).status).toBe(403);
    expect((await v1(app, other.liveKey).get(`/licenses/${license}/usage`)).status).toBe(403);
  });

  it("PUT /usage on a canceled subscription's license is refused (the subscription has ended), and counts nothing", async () => {
    const { subscription } = await purchase(world, org.keys['plans.notes.team'], 'ended-grantee', 2);
    const api = v1(app, org.liveKey);
    const license = (await api.get(`/licenses?subscriptionUuid=${subscription.id}`)).body[0].uuid as string;
    const body = { licenseUuid: license, featureVariableName: 'projects', countOptions: { increment: 3 } };
    expect((await api.put('/usage', body)).body.unitCount).toBe(3);
    await world.core.subscriptions.cancel(org.tenant, subscription.id, 'now');
    const refused = await api.put('/usage', body);
    expect([refused.status, refused.body.code ?? refused.body.error]).toEqual([400, expect.stringMatching(/LICENSE_CANCELED|canceled/)]);
    expect(await world.core.usage.balances(org.tenant, subscription.id, 'projects')).toMatchObject([{ balance: { used: 3n } }]);
  });

  it('PUT /usage takes a fractional increment on a meter with decimal places, exactly; a whole-unit meter refuses it', async () => {
    const { subscription } = await purchase(world, org.keys['plans.notes.team'], 'decimal-grantee', 2);
    const api = v1(app, org.liveKey);
    const license = (await api.get(`/licenses?subscriptionUuid=${subscription.id}`)).body[0].uuid as string;
    // The feature's meter made beforehand with two decimal places (v1 makes whole-unit ones on first use).
    await world.core.usage.createMeter(org.tenant, { slug: 'theme', name: 'Theme minutes', scale: 2 });
    const body = { licenseUuid: license, featureVariableName: 'theme', countOptions: { increment: 0.25 } };
    const first = await api.put('/usage', body).set('unique-key', 'dec-1');
    expect(first.status).toBe(200);
    expectSchema(schemaOf('put', '/usage'), first.body);
    expect(first.body.unitCount).toBe(0.25);
    expect((await api.put('/usage', { ...body, countOptions: { increment: 1.1 } })).body.unitCount).toBe(1.35);
    const refused = await api.put('/usage', { ...body, countOptions: { increment: 0.125 } });
    expect(refused.status).toBe(400);
    expect(JSON.stringify(refused.body)).toContain('countOptions.increment');
    const usage = await api.get(`/licenses/${license}/usage`);
    expectSchema(schemaOf('get', '/licenses/:licenseUuid/usage'), usage.body);
    expect(usage.body).toEqual(expect.arrayContaining([expect.objectContaining({ unitCount: 1.35 })]));
    // `projects` counts whole units (its meter was made on first use): a fraction is a 400 naming the field.
    const whole = await api.put('/usage', { ...body, featureVariableName: 'projects', countOptions: { increment: 1.5 } });
    expect(whole.status).toBe(400);
    expect(JSON.stringify(whole.body)).toContain('countOptions.increment');
  });
});
