import { seedDemoIfEmpty } from '@tollgate/runtime';
import { createTestWorld, type TestWorld } from '@tollgate/runtime/testing';

let world: TestWorld;
beforeAll(async () => {
  world = await createTestWorld();
});
afterAll(() => world?.close());

it('creates the demo organisation on an empty database only', async () => {
  const demo = await seedDemoIfEmpty(world.core);
  expect(demo?.liveKey.plaintext).toMatch(/^live_/);
  expect(demo?.testKey.plaintext).toMatch(/^test_/);
  expect(demo?.live.keys['products.notes']).toBeDefined();
  expect(await seedDemoIfEmpty(world.core)).toBeUndefined();
});

it('never adds the demo next to real organisations', async () => {
  const other = await createTestWorld();
  try {
    await other.core.apiKeys.ensureOrganisation('acme');
    expect(await seedDemoIfEmpty(other.core)).toBeUndefined();
    expect(await other.db.uow.run((r) => r.organisations.findByName('demo'))).toBeUndefined();
  } finally {
    await other.close();
  }
});
