import { FakePaymentProvider } from '@tollgate/core/testing';
import { createTestWorld, purchase, seedOrganisation, type TestWorld } from '@tollgate/runtime/testing';
import { createV1App } from '../src';
import { v1 } from './helpers';

const kinds: ('pglite' | 'postgres')[] = process.env.TEST_DATABASE_URL ? ['pglite', 'postgres'] : ['pglite'];

describe.each(kinds)('100 concurrent seat changes over HTTP (%s)', (kind) => {
  let world: TestWorld;
  beforeAll(async () => {
    world = await createTestWorld({ kind, payments: new FakePaymentProvider() });
  });
  afterAll(() => world?.close());

  it('ends with the exact quantity and license count', async () => {
    const org = await seedOrganisation(world, `conc-${kind}`);
    const api = v1(createV1App(world), org.liveKey);
    const { subscription } = await purchase(world, org.keys['plans.notes.business'], 'owner', 60);
    const s = `/subscriptions/${subscription.id}/seats`;
    const changes = Array.from({ length: 100 }, (_, i) => (i % 5 < 3 ? 'inc' : 'dec'));
    const responses = await Promise.all(changes.map((c) => (c === 'inc' ? api.post(s, { increment: 1 }) : api.put(s, { decrement: 1 }))));
    expect(responses.map((r) => r.status)).toEqual(changes.map(() => 202));
    const worker = world.core.worker;
    // Two workers at once, as two instances would run them.
    await Promise.all([worker.drain(), worker.drain()]);
    const events = await Promise.all(responses.map((r) => api.get(`/events/${r.body.eventUuid}`)));
    expect(events.map((e) => e.body.status)).toEqual(changes.map(() => 'success'));
    const expected = 60 + changes.filter((c) => c === 'inc').length - changes.filter((c) => c === 'dec').length;
    expect((await api.get(`/subscriptions/${subscription.id}`)).body.quantity).toBe(expected);
    expect((await api.get(`/licenses/count?subscriptionUuid=${subscription.id}`)).body).toEqual({
      count: expected,
      assigned: 1,
      unassigned: expected - 1,
    });
    // A bound on waiting for 100 changes and two drains on a loaded machine, not a speed assertion.
  }, 120_000);
});
