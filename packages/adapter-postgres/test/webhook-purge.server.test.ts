/* The retention purge of webhook events racing a resend, on a PostgreSQL server (collected only with
   TEST_DATABASE_URL). A resend reads the event, then writes a new delivery of it; the purge deletes
   old events no delivery waits for. Whichever comes first, a resend either keeps its event (and its
   delivery is not deleted with it) or answers 404 for an event that is gone: never a delivery
   silently lost, never a refusal that names no cause. Each test holds one transaction open at the
   point that matters and lets the other run. */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'kysely';
import { newDelivery, type OutboxEvent, type Repositories, type Tenant, type UnitOfWork } from '@tollgate/core';
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

/** A unit of work whose transactions stop at `g` once they locked a delivery (`getDeliveryForUpdate`), until released. */
class StopAfterDeliveryLock implements UnitOfWork {
  constructor(
    private readonly inner: UnitOfWork,
    private readonly g: ReturnType<typeof gate>,
  ) {}
  read<T>(work: (repos: Repositories) => Promise<T>): Promise<T> {
    return this.inner.read(work);
  }
  run<T>(work: (repos: Repositories) => Promise<T>): Promise<T> {
    return this.inner.run((r) =>
      work({
        ...r,
        webhooks: {
          ...r.webhooks,
          getDeliveryForUpdate: async (id) => {
            const d = await r.webhooks.getDeliveryForUpdate(id);
            this.g.reached();
            await this.g.released;
            return d;
          },
        },
      }),
    );
  }
}

it('never deadlocks a destination resend with the purge: both lock the event before its deliveries', async () => {
  const { core, tenant, event } = await oldDeliveredEvent();
  const [destination] = (await core.webhookDestinations.list(tenant, { limit: 10, eventId: event.id })).items;
  const g = gate();
  const resender = createTestCore({ uow: new StopAfterDeliveryLock(db.uow, g), webhooks: new ScriptedWebhookSender() });
  resender.clock.set(core.clock.now());
  // The resend's transaction, stopped once it holds the finished delivery's lock.
  const resend = resender.webhookDestinations.resend(tenant, destination.id).then(
    () => 'resent',
    (e: { code?: string; message?: string }) => e.code ?? e.message,
  );
  await g.opened;
  const purge = core.webhookEvents.purge().then(
    (n) => n,
    (e: { code?: string; message?: string }) => e.code ?? e.message,
  );
  // Let the purge go as far as it can: done, or waiting for a lock the resend holds (the cascade to its delivery).
  let settled = false;
  void purge.then(() => (settled = true));
  for (let i = 0; i < 100 && !settled; i++) {
    const { rows } = await sql<{ n: number }>`select count(*)::int as n from pg_stat_activity
      where datname = current_database() and wait_event_type = 'Lock'`.execute(db.db);
    if (rows[0].n > 0) break;
    await sleep(20);
  }
  g.release();
  // Before: the purge locked the event and waited for the delivery; the resend, holding the
  // delivery, then waited for the event (its insert's key-share lock): PostgreSQL killed one.
  expect({ resend: await resend, purge: await purge }).toEqual({ resend: 'resent', purge: 0 });
  const deliveries = (await core.webhookDestinations.list(tenant, { limit: 10, eventId: event.id })).items;
  expect(deliveries.map((d) => d.status).sort()).toEqual(['delivered', 'pending']);
  expect(await db.uow.read((r) => r.outbox.get(event.id))).toBeDefined();
});
