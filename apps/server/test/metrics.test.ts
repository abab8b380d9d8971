import request from 'supertest';
import { createTestWorld, purchase, seedOrganisation, type SeededOrg, type TestWorld } from '@tollgate/runtime/testing';
import { createServerApp } from '../src';

let world: TestWorld;
let org: SeededOrg;

beforeAll(async () => {
  world = await createTestWorld();
  org = await seedOrganisation(world, 'metrics-org');
  // An endpoint that nothing delivers to here: the purchase's three events wait for it.
  await world.core.webhooks.create(org.tenant, { url: 'http://127.0.0.1:9/hooks', events: ['subscription.created', 'license.created'] });
  const { subscription } = await purchase(world, org.keys['plans.notes.team'], 'measured', 2);
  // One accepted seat change that no worker applies here (the test world runs none).
  await world.core.seats.request(org.tenant, subscription.id, { type: 'seats.increment', count: 1, proration: 'none' });
});
afterAll(() => world?.close());

/** The value of one sample line of the Prometheus text (`name{labels} value`). */
function sample(text: string, line: string): number | undefined {
  const found = text.split('\n').find((l) => l.startsWith(`${line} `));
  return found === undefined ? undefined : Number(found.slice(line.length + 1));
}

describe('GET /metrics', () => {
  it('reports requests by declared route and status, latency, and the check cache and fast path', async () => {
    const app = createServerApp(world);
    const check = `/licenses/check?productUuid=${org.keys['products.notes']}&granteeIds=measured`;
    for (let i = 0; i < 3; i++) await request(app).get(check).set('x-api-key', org.liveKey).expect(200);
    await request(app).get(`/products/${org.keys['products.notes']}`).set('x-api-key', org.liveKey).expect(200);
    await request(app).get('/products').expect(401);

    const res = await request(app).get('/metrics').expect(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = res.text;
    expect(sample(text, 'tollgate_http_requests_total{method="GET",route="/licenses/check",status="200"}')).toBe(3);
    expect(sample(text, 'tollgate_http_requests_total{method="GET",route="/products/:productUuid",status="200"}')).toBe(1);
    expect(sample(text, 'tollgate_http_requests_total{method="GET",route="/products",status="401"}')).toBe(1);
    expect(sample(text, 'tollgate_http_request_duration_seconds_count{method="GET",route="/licenses/check"}')).toBe(3);
    // In seconds: three answers in process take well under a second in all, and some time.
    const seconds = sample(text, 'tollgate_http_request_duration_seconds_sum{method="GET",route="/licenses/check"}');
    expect(seconds).toBeGreaterThan(0);
    expect(seconds).toBeLessThan(1);
    expect(sample(text, 'tollgate_check_fast_path{outcome="served"}')).toBe(3);
    // The first check loaded the snapshot (a miss), the next two were answered from memory.
    expect(sample(text, 'tollgate_check_cache_hits')).toBeGreaterThanOrEqual(2);
    expect(sample(text, 'tollgate_check_cache_misses')).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'tollgate_check_cache_live')).toBe(1);
    expect(sample(text, 'tollgate_check_cache_entries')).toBeGreaterThanOrEqual(1);
    expect(text).toContain('process_resident_memory_bytes');
    expect(sample(text, 'tollgate_log_lines_dropped_total')).toBe(0);
    expect(sample(text, 'tollgate_events_open{status="queued"}')).toBe(1);
    expect(sample(text, 'tollgate_events_open{status="pending"}')).toBe(0);
    expect(sample(text, 'tollgate_webhook_deliveries_pending')).toBe(3);
  });

  it('reports the usage meter-event relay where the payment provider takes meter events', async () => {
    expect((await request(createServerApp(world)).get('/metrics').expect(200)).text).not.toContain('tollgate_usage_meter');
    const stats = { sent: 5, retried: 2, refused: 1, lagSeconds: 3.5, failingFor: 2 };
    const meterRelay = { stats: () => stats } as unknown as NonNullable<typeof world.core.meterRelay>;
    const text = (
      await request(createServerApp({ ...world, core: { ...world.core, meterRelay } }))
        .get('/metrics')
        .expect(200)
    ).text;
    expect(sample(text, 'tollgate_usage_meter_events{outcome="sent"}')).toBe(5);
    expect(sample(text, 'tollgate_usage_meter_events{outcome="retried"}')).toBe(2);
    expect(sample(text, 'tollgate_usage_meter_events{outcome="refused"}')).toBe(1);
    expect(sample(text, 'tollgate_usage_meter_relay_lag_seconds')).toBe(3.5);
    expect(sample(text, 'tollgate_usage_meter_relay_failing')).toBe(2);
  });

  it("exports the usage fast path's counts and latency buckets up to 15 s (a request can wait 10 s for a pool connection)", async () => {
    const app = createServerApp(world);
    await request(app).post('/api/usage/consume').send({});
    const text = (await request(app).get('/metrics').expect(200)).text;
    const served = sample(text, 'tollgate_usage_fast_path{outcome="served"}');
    const passed = sample(text, 'tollgate_usage_fast_path{outcome="passed"}');
    expect((served ?? NaN) + (passed ?? NaN)).toBe(1);
    for (const le of ['2.5', '5', '10', '15']) expect(text).toContain(`tollgate_http_request_duration_seconds_bucket{le="${le}",`);
  });

  it('requires the bearer token when METRICS_TOKEN is set', async () => {
    const app = createServerApp({ ...world, config: { ...world.config, metricsToken: 'scrape-secret' } });
    const refused = await request(app).get('/metrics').expect(401);
    expect(refused.headers['www-authenticate']).toBe('Bearer');
    await request(app).get('/metrics').set('authorization', 'Bearer wrong').expect(401);
    const ok = await request(app).get('/metrics').set('authorization', 'Bearer scrape-secret').expect(200);
    expect(ok.text).toContain('tollgate_check_cache_hits');
  });
});

describe('GET /metrics while the database fails', () => {
  /** The world with its queue depths (the scrape's database reads) answered by `depth`. */
  const withDepths = (events: () => Promise<{ queued: number; pending: number }>, webhooks: () => Promise<number>, pool?: () => number) =>
    createServerApp({
      ...world,
      core: {
        ...world.core,
        worker: { ...world.core.worker, depth: events } as unknown as typeof world.core.worker,
        webhookEvents: { ...world.core.webhookEvents, depth: webhooks } as unknown as typeof world.core.webhookEvents,
      },
      ...(pool ? { database: { kind: 'postgres', poolStats: () => ({ total: 2, idle: 2 - pool(), waiting: pool() }) } } : {}),
    });
  const refused = () => Promise.reject(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }));
  const hangs = () => new Promise<never>(() => undefined);

  it('answers 200 with every other metric, and tollgate_db_up 0, when the database refuses (a read that throws)', async () => {
    const app = withDepths(refused, () => {
      throw new Error('the repository threw');
    });
    const res = await request(app).get('/metrics').expect(200);
    expect(sample(res.text, 'tollgate_db_up')).toBe(0);
    expect(sample(res.text, 'tollgate_check_cache_live')).toBe(1);
    expect(res.text).toContain('process_resident_memory_bytes');
    // Never read: no made-up numbers of open events.
    expect(res.text).not.toContain('tollgate_events_open{');
  });

  it('answers within about a second when the database hangs, keeping the last values read (tollgate_db_up 0)', async () => {
    let hung = false;
    const app = withDepths(
      () => (hung ? hangs() : Promise.resolve({ queued: 4, pending: 1 })),
      () => (hung ? hangs() : Promise.resolve(7)),
    );
    const healthy = (await request(app).get('/metrics').expect(200)).text;
    expect(sample(healthy, 'tollgate_db_up')).toBe(1);
    hung = true;
    const started = Date.now();
    const text = (await request(app).get('/metrics').expect(200)).text;
    expect(Date.now() - started).toBeLessThan(2_500);
    expect(sample(text, 'tollgate_db_up')).toBe(0);
    expect(sample(text, 'tollgate_events_open{status="queued"}')).toBe(4);
    expect(sample(text, 'tollgate_events_open{status="pending"}')).toBe(1);
    expect(sample(text, 'tollgate_webhook_deliveries_pending')).toBe(7);
    expect(sample(text, 'tollgate_check_cache_live')).toBe(1);
  });

  it("reads the pool before the scrape's own database reads take connections (no waiting clients at rest)", async () => {
    let waiting = 0;
    // Each read waits for a connection from the moment it starts, like a query queued in the pool.
    const queued = <T>(value: T) => {
      waiting++;
      return new Promise<T>((resolve) => setTimeout(() => (waiting--, resolve(value)), 5));
    };
    const app = withDepths(
      () => queued({ queued: 0, pending: 0 }),
      () => queued(0),
      () => waiting,
    );
    const text = (await request(app).get('/metrics').expect(200)).text;
    expect(sample(text, 'tollgate_db_pool_connections{state="waiting"}')).toBe(0);
    expect(sample(text, 'tollgate_db_up')).toBe(1);
  });
});
