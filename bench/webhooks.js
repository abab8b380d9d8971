// Webhook delivery rows of `npm run bench` (BENCH_ONLY=webhooks runs only these): deliveries per
// second to a local receiver (16 POSTs at once against 1 at a time, measured in the same run), and
// how long a quiet tenant's delivery waits beside a tenant with 2 000 endpoints and beside an
// endpoint that never answers. Runs the real runtime (PostgreSQL, node:http sender) in-process.
const { createServer } = require('node:http');

const ENDPOINTS = Number(process.env.BENCH_WEBHOOK_ENDPOINTS ?? 2000);
const THROUGHPUT_EVENTS = Number(process.env.BENCH_WEBHOOK_EVENTS ?? 2000);

async function receiver(answer = (_req, res) => res.end('ok')) {
  const arrivals = [];
  const open = new Set();
  const server = createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      arrivals.push({ at: performance.now(), url: req.url });
      answer(req, res);
    });
  });
  server.on('connection', (s) => {
    open.add(s);
    s.on('close', () => open.delete(s));
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${server.address().port}`;
  return {
    base,
    arrivals,
    close: () => {
      for (const s of open) s.destroy();
      return new Promise((r) => server.close(r));
    },
  };
}

async function world(config) {
  process.env.TEST_DATABASE_URL ??= process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const { createTestWorld, seedOrganisation } = require('@tollgate/runtime/testing');
  const w = await createTestWorld({ kind: 'postgres', config });
  return { w, seed: (name) => seedOrganisation(w, name) };
}

/** One product.updated per call, delivered to every endpoint of the tenant. */
async function touch(w, tenant, n) {
  const [product] = await w.core.queries.listProducts(tenant);
  for (let i = 0; i < n; i++) await w.core.products.updateProduct(tenant, product.id, { name: `Edit ${i}` });
}

/** Deliveries per second: `events` events, one endpoint per 10 events' worth of keys, drained at `concurrency`. */
async function throughput(concurrency) {
  const { w, seed } = await world({ webhookConcurrency: concurrency });
  const r = await receiver();
  try {
    const org = await seed('throughput');
    // 20 endpoints: per-endpoint caps leave room for the concurrency; every product edit goes to each.
    for (let i = 0; i < 20; i++) await w.core.webhooks.create(org.tenant, { url: `${r.base}/${i}`, events: ['product.updated'] });
    await touch(w, org.tenant, Math.ceil(THROUGHPUT_EVENTS / 20));
    const started = performance.now();
    const n = await w.core.webhookDelivery.drain(1_000_000);
    const seconds = (performance.now() - started) / 1000;
    return { deliveries: n, perSecond: Math.round(n / seconds) };
  } finally {
    await r.close();
    await w.close();
  }
}

/** How long a quiet tenant's one delivery takes while a crowded tenant's `endpoints` deliveries (written first) go out. */
async function quietBesideCrowded() {
  const { w, seed } = await world({});
  const r = await receiver();
  try {
    const crowded = await seed('crowded');
    const quiet = await seed('quiet');
    for (let i = 0; i < ENDPOINTS; i++)
      await w.core.webhooks.create(crowded.tenant, { url: `${r.base}/crowded/${i}`, events: ['product.updated'] });
    await w.core.webhooks.create(quiet.tenant, { url: `${r.base}/quiet`, events: ['product.updated'] });
    await touch(w, crowded.tenant, 1);
    await touch(w, quiet.tenant, 1);
    const started = performance.now();
    await w.core.webhookDelivery.drain(1_000_000);
    const quietAt = r.arrivals.find((a) => a.url === '/quiet').at - started;
    const allAt = Math.max(...r.arrivals.map((a) => a.at)) - started;
    return { quietMs: Math.round(quietAt), allMs: Math.round(allAt), deliveries: r.arrivals.length };
  } finally {
    await r.close();
    await w.close();
  }
}

/** How long a quiet tenant's 5 deliveries take while another tenant's endpoint never answers (12 events). */
async function quietBesideStalled() {
  const { w, seed } = await world({});
  const r = await receiver((req, res) => (req.url === '/stalled' ? undefined : res.end('ok')));
  try {
    const stalled = await seed('stalled');
    const quiet = await seed('quiet');
    await w.core.webhooks.create(stalled.tenant, { url: `${r.base}/stalled`, events: ['product.updated'] });
    await w.core.webhooks.create(quiet.tenant, { url: `${r.base}/quiet`, events: ['product.updated'] });
    await touch(w, stalled.tenant, 12);
    await touch(w, quiet.tenant, 5);
    const started = performance.now();
    const draining = w.core.webhookDelivery.drain(1_000_000);
    while (r.arrivals.filter((a) => a.url === '/quiet').length < 5) await new Promise((res) => setTimeout(res, 5));
    const quietMs = Math.round(Math.max(...r.arrivals.filter((a) => a.url === '/quiet').map((a) => a.at)) - started);
    await draining; // the stalled POST times out after 10 s; its retry is not due yet
    return { quietMs, timeoutMs: 10_000 };
  } finally {
    await r.close();
    await w.close();
  }
}

async function webhookRows(log = console.error) {
  log('webhooks: throughput, 1 at a time');
  const serial = await throughput(1);
  log('webhooks: throughput, 16 at a time');
  const concurrent = await throughput(16);
  log(`webhooks: a quiet tenant beside ${ENDPOINTS} endpoints`);
  const crowded = await quietBesideCrowded();
  log('webhooks: a quiet tenant beside an endpoint that never answers');
  const stalled = await quietBesideStalled();
  return {
    serial,
    concurrent,
    ratio: Number((concurrent.perSecond / serial.perSecond).toFixed(2)),
    crowded,
    stalled,
    endpoints: ENDPOINTS,
  };
}

function webhookTable(r) {
  return [
    '| webhook delivery (one instance, PostgreSQL, local receiver) | value |',
    '| --- | --- |',
    `| deliveries per second, 16 POSTs at once (${r.concurrent.deliveries} deliveries) | ${r.concurrent.perSecond} /s |`,
    `| deliveries per second, 1 at a time (the baseline, same run) | ${r.serial.perSecond} /s (ratio ${r.ratio}) |`,
    `| a quiet tenant's delivery beside a tenant's ${r.endpoints} endpoints written before it | ${r.crowded.quietMs} ms (all ${r.crowded.deliveries}: ${r.crowded.allMs} ms) |`,
    `| a quiet tenant's 5 deliveries beside an endpoint that never answers (12 events, ${r.stalled.timeoutMs / 1000} s timeout) | ${r.stalled.quietMs} ms |`,
  ].join('\n');
}

module.exports = { webhookRows, webhookTable };
