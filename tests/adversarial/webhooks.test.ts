/* Webhooks between real processes: two instances deliver each event once; kill -9 in the middle of
   deliveries loses none (the restarted instance delivers what was committed). */
import { startWebhookReceiver, type WebhookReceiver } from '@tollgate/runtime/testing';
import { call, createDatabase, eventually, seedOrg, startInstance, type Instance, type Org } from './harness';

let db: Awaited<ReturnType<typeof createDatabase>>;
let org: Org;
const instances: Instance[] = [];
const receivers: WebhookReceiver[] = [];
// Receivers listen on 127.0.0.1; a short lease lets a restarted instance take over in-flight deliveries soon.
const env = { WEBHOOK_ALLOW_PRIVATE: 'true', WORKER_INTERVAL_MS: '100', EVENT_LEASE_SECONDS: '12' };

beforeAll(async () => {
  db = await createDatabase();
  org = await seedOrg(db.url, 'hooks');
});
afterAll(async () => {
  await Promise.all(instances.map((i) => i.stop()));
  await Promise.all(receivers.map((r) => r.close()));
  await db?.drop();
});

const start = async () => {
  const i = await startInstance(db.url, env);
  instances.push(i);
  return i;
};
const endpoint = async (base: string, url: string) => {
  const res = await call(base, 'POST', '/api/webhooks', { bearer: org.live, body: { url, events: ['license.created'] } });
  if (res.status !== 201) throw new Error(`endpoint: ${res.status} ${res.text}`);
  return (res.body as { data: { id: string } }).data.id;
};
const removeEndpoint = (base: string, id: string) => call(base, 'DELETE', `/api/webhooks/${id}`, { bearer: org.live });
const license = (base: string, granteeId: string) =>
  call(base, 'POST', '/licenses', {
    key: org.live,
    headers: { version: 'v1' },
    body: { planUuid: org.keys['plans.notes.free'], member: 'm@example.com', granteeId },
  });

it('two instances with workers deliver each event once', async () => {
  const [a, b] = [await start(), await start()];
  const rx = await startWebhookReceiver(() => ({ status: 200, delayMs: 10 }));
  receivers.push(rx);
  const hook = await endpoint(a.url, rx.url);
  const n = 40;
  const grantees: string[] = [];
  for (let i = 0; i < n; i++) {
    const res = await license(i % 2 ? a.url : b.url, `twice-${i}`);
    expect(res.status).toBe(200);
    grantees.push(`twice-${i}`);
  }
  await eventually(async () => new Set(rx.received.map((h) => h.id)).size === n, 60_000, 'every event delivered');
  // Both polled meanwhile; give them time to deliver anything twice, then count.
  await new Promise((r) => setTimeout(r, 1500));
  const ids = rx.received.map((h) => h.id);
  expect(ids).toHaveLength(n);
  expect(new Set(ids).size).toBe(n);
  expect(rx.received.map((h) => h.event.data.granteeId).sort()).toEqual([...grantees].sort());
  await removeEndpoint(a.url, hook);
  await a.stop();
  await b.stop();
});

it('loses no committed event when the delivering process is killed; the restarted one delivers the rest', async () => {
  let server = await start();
  // A slow receiver: the kill comes while deliveries are queued and one is in flight.
  const rx = await startWebhookReceiver(() => ({ status: 200, delayMs: 150 }));
  receivers.push(rx);
  await endpoint(server.url, rx.url);
  const n = 30;
  for (let i = 0; i < n; i++) expect((await license(server.url, `survivor-${i}`)).status).toBe(200);
  await eventually(async () => rx.received.length >= 3, 30_000, 'deliveries under way');
  await server.kill();
  const before = new Set(rx.received.map((h) => h.id)).size;
  expect(before).toBeLessThan(n);
  server = await start();
  await eventually(
    async () => new Set(rx.received.map((h) => h.id)).size === n,
    90_000,
    'every committed event delivered after the restart',
  );
  expect(new Set(rx.received.map((h) => h.event.data.granteeId)).size).toBe(n);
  await server.stop();
});
