/* The retention purge of webhook events racing a resend, on a PostgreSQL server (collected only with
   TEST_DATABASE_URL). A resend reads the event, then writes a new delivery of it; the purge deletes
   old events no delivery waits for. Whichever comes first, a resend either keeps its event (and its
   delivery is not deleted with it) or answers 404 for an event that is gone: never a delivery
   silently lost, never a refusal that names no cause. Each test holds one transaction open at the
   point that matters and lets the other run. */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { newDelivery, type OutboxEvent, type Tenant } from '@tollgate/core';
import { createTestCore, ScriptedWebhookSender, seedSample, type TestCore } from '@tollgate/core/testing';
import { createTestDatabase, type TestDatabase } from '../src';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase('postgres', { poolSize: 6 });
});
afterAll(() => db?.drop());

const DAY = 86_400_000;

/** An organisation with one endpoint and one delivered event, older than the retention (one day here). */
async function oldDeliveredEvent(): Promise<{ core: TestCore; tenant: Tenant; event: OutboxEvent; endpointId: string }> {
  const core = createTestCore({ uow: db.uow, webhooks: new ScriptedWebhookSender(), limits: { webhookEventRetentionMs: DAY } });
  const { tenant, keys } = await seedSample(core, `org-${randomUUID()}`);
  const { endpoint } = await core.webhooks.create(tenant, { url: 'https://vendor.example.com/hooks' });
  await core.licenses.createAdHoc(tenant, [{ planUuid: keys['plans.notes.free'], member: 'm@example.com', granteeId: 'g' }]);
  expect(await core.webhookDelivery.drain()).toBe(1);
  const [event] = (await core.webhookEvents.list(tenant, { limit: 10, types: ['license.created'] })).items;
  core.clock.set(new Date(core.clock.now().getTime() + 2 * DAY));
  return { core, tenant, event, endpointId: endpoint.id };
}

/** A gate a held transaction waits at: `opened` once it got there, `release` to let it commit. */
function gate() {
  let release = () => undefined as void;
  let reached = () => undefined as void;
  const released = new Promise<void>((r) => (release = r));
  const opened = new Promise<void>((r) => (reached = r));
  return { released, opened, release, reached };
}

it('skips an event a resend is writing a delivery for: the purge neither waits for it nor deletes the new delivery', async () => {
  const { core, event, endpointId } = await oldDeliveredEvent();
  const g = gate();
  const id = randomUUID();
  // A resend's transaction, stopped just after it wrote the new delivery.
  const resend = db.uow.run(async (r) => {
    await r.webhooks.addDeliveries([newDelivery(id, event, endpointId, core.clock.now())]);
    g.reached();
    await g.released;
  });
  await g.opened;
  const purged = await Promise.race([core.webhookEvents.purge(), sleep(1000).then(() => 'waited for the resend' as const)]);
  g.release();
  await resend;
  expect(purged).toBe(0);
  expect(await db.uow.read((r) => r.webhooks.getDelivery(id))).toMatchObject({ status: 'pending', eventId: event.id });
  expect(await db.uow.read((r) => r.outbox.get(event.id))).toBeDefined();
});

it('answers 404 to a resend (of an event or of a destination) whose event the purge deleted meanwhile', async () => {
  for (const via of ['event', 'destination'] as const) {
    const { core, tenant, event } = await oldDeliveredEvent();
    const [destination] = (await core.webhookDestinations.list(tenant, { limit: 10, eventId: event.id })).items;
    const g = gate();
    // The purge's transaction, stopped after it deleted the event (not yet committed).
    const purge = db.uow.run(async (r) => {
      const n = await r.outbox.purge(new Date(core.clock.now().getTime() - DAY), 1000);
      g.reached();
      await g.released;
      return n;
    });
    await g.opened;
    // The resend still sees the event; its new delivery waits for the purge's lock on it.
    const resend = via === 'event' ? core.webhookEvents.resend(tenant, event.id) : core.webhookDestinations.resend(tenant, destination.id);
    const outcome = resend.then(
      () => 'resent',
      (e: { code?: string }) => e.code,
    );
    await sleep(200);
    g.release();
    expect(await purge).toBeGreaterThanOrEqual(1);
    expect({ via, outcome: await outcome }).toEqual({ via, outcome: 'NOT_FOUND' });
  }
});
