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

  it('requires the bearer token when METRICS_TOKEN is set', async () => {
    const app = createServerApp({ ...world, config: { ...world.config, metricsToken: 'scrape-secret' } });
    const refused = await request(app).get('/metrics').expect(401);
    expect(refused.headers['www-authenticate']).toBe('Bearer');
    await request(app).get('/metrics').set('authorization', 'Bearer wrong').expect(401);
    const ok = await request(app).get('/metrics').set('authorization', 'Bearer scrape-secret').expect(200);
    expect(ok.text).toContain('tollgate_check_cache_hits');
  });
});
