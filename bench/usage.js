// The usage rows of `npm run bench` (acceptance 4 of #19): consume through HTTP on two instances of
// one PostgreSQL, each answer sent after its commit, beside the same run's warm capability check
// and the one-transaction-per-operation consume (USAGE_GROUP_COMMIT=off), plus the spread consume
// with an idempotency key on every request (how a careful vendor meters; not a goal row).
// `node bench/run.js --only usage` runs these rows alone.
const { createRuntime, loadConfig } = require('@tollgate/runtime');
const { purchase, seedOrganisation } = require('@tollgate/runtime/testing');
const { randomUUID } = require('node:crypto');
const { Client } = require('pg');

const OWNERS = 10_000;

/** An organisation with the sample catalog, a meter, a hot owner and 10 000 owners, each granted plenty. */
async function seedUsage(env, log) {
  const runtime = await createRuntime(loadConfig({ ...env, RUN_WORKER: 'false', LOG_REQUESTS: 'false' }), {
    logger: { info() {}, error: (m, f) => console.error(m, f) },
  });
  try {
    const { core } = runtime;
    const org = await seedOrganisation(runtime, 'bench-usage');
    await purchase(runtime, org.keys['plans.notes.business'], 'usage-checker');
    await core.usage.createMeter(org.tenant, { slug: 'tokens', name: 'Tokens' });
    const grant = (owner) => core.usage.grant(org.tenant, { owner, meterSlug: 'tokens', amount: 10n ** 12n });
    await grant('hot');
    await grant('hot-baseline');
    log(`  granting ${OWNERS} owners`);
    let next = 0;
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        while (next < OWNERS) await grant(`owner-${next++}`);
      }),
    );
    return { org, product: org.keys['products.notes'] };
  } finally {
    await runtime.close();
  }
}

/**
 * Statistics for the seeded tables, as autovacuum keeps them on a vendor's PostgreSQL (this
 * machine's server runs with autovacuum off, so a fresh database would otherwise have none).
 */
async function analyze(url) {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    await client.query('analyze');
  } finally {
    await client.end();
  }
}

/**
 * Drives both instances at once (half the connections each) and sums what they did: req/s add up,
 * latency percentiles are the worse of the two.
 */
async function both(loadOne, servers, options) {
  const parts = await Promise.all(
    servers.map((s) => loadOne(s.base, { ...options, connections: Math.max(1, Math.floor(options.connections / servers.length)) })),
  );
  return {
    requestsPerSecond: parts.reduce((n, p) => n + p.requestsPerSecond, 0),
    p50ms: Math.max(...parts.map((p) => p.p50ms)),
    p99ms: Math.max(...parts.map((p) => p.p99ms)),
    non2xx: parts.reduce((n, p) => n + p.non2xx, 0),
    errors: parts.reduce((n, p) => n + p.errors, 0),
    total: parts.reduce((n, p) => n + p.total, 0),
  };
}

/** POST load for `seconds`: `bodyOf(i)` gives the i-th request's JSON body; `keyed`: each with an idempotency key of its own. */
function postLoad(autocannon) {
  return async (base, { path, headers, bodyOf, seconds, connections, keyed = false }) => {
    let i = 0;
    const result = await autocannon({
      url: base,
      connections,
      duration: seconds,
      headers: { ...headers, 'content-type': 'application/json' },
      requests: [
        {
          method: 'POST',
          path,
          setupRequest: (req) => ({
            ...req,
            ...(keyed && { headers: { ...req.headers, 'idempotency-key': randomUUID() } }),
            body: JSON.stringify(bodyOf(i++)),
          }),
        },
      ],
    });
    return {
      requestsPerSecond: Math.round(result.requests.average),
      p50ms: result.latency.p50,
      p99ms: result.latency.p99,
      non2xx: result.non2xx,
      errors: result.errors + result.timeouts,
      total: result.requests.total,
    };
  };
}

/**
 * The usage rows on a fresh database of the server at `url`: warm check, hot consume, spread
 * consume (both with group commit), and hot consume one transaction per operation.
 */
async function usageRows({ url, secret, seconds, connections, startTollgate, load, autocannon, log }) {
  log('usage: seeding');
  const seeded = await seedUsage({ DATABASE_URL: url, TOLLGATE_SECRET: secret }, log);
  await analyze(url);
  const post = postLoad(autocannon);
  const bearer = { authorization: `Bearer ${seeded.org.liveKey}` };
  const consume = (owner) => ({
    path: '/api/usage/consume',
    headers: bearer,
    bodyOf: (i) => ({ owner: owner(i), meterSlug: 'tokens', quantity: 1 }),
  });
  const out = { settings: { seconds, connections, instances: 2, owners: OWNERS } };

  // The instances run as a vendor runs them (request logs and rate limits on, as by default); only
  // the background work is off, so that the rows measure the requests.
  const defaults = { DATABASE_URL: url, RUN_WORKER: 'false', LOG_REQUESTS: undefined, RATE_LIMIT: undefined };
  const grouped = [await startTollgate(defaults), await startTollgate(defaults)];
  try {
    const check = `/licenses/check?productUuid=${seeded.product}&granteeIds=usage-checker`;
    const headers = { 'x-api-key': seeded.org.readOnlyKey };
    await both(load, grouped, { headers, pathOf: () => check, seconds: 1, connections });
    log('  usage: warm capability check, two instances');
    out.warmCheck = await both(load, grouped, { headers, pathOf: () => check, seconds, connections });
    await both(post, grouped, { ...consume(() => 'hot'), seconds: 1, connections });
    log('  usage: consume, one hot balance, group commit');
    out.hot = await both(post, grouped, { ...consume(() => 'hot'), seconds, connections });
    log(`  usage: consume, ${OWNERS} balances spread, group commit`);
    // Owners at random, as independent customers arrive (the instances do not walk the same order).
    out.spread = await both(post, grouped, { ...consume(() => `owner-${Math.floor(Math.random() * OWNERS)}`), seconds, connections });
    // As a careful vendor meters: every consume with an idempotency key of its own (stored with its
    // answer in the same transaction). Not one of #19's goal rows: the cost of keys, measured.
    log(`  usage: consume, ${OWNERS} balances spread, each with an idempotency key, group commit`);
    out.spreadKeyed = await both(post, grouped, {
      ...consume(() => `owner-${Math.floor(Math.random() * OWNERS)}`),
      keyed: true,
      seconds,
      connections,
    });
  } finally {
    await Promise.all(grouped.map((s) => s.stop()));
  }
  const single = [
    await startTollgate({ ...defaults, USAGE_GROUP_COMMIT: 'off' }),
    await startTollgate({ ...defaults, USAGE_GROUP_COMMIT: 'off' }),
  ];
  try {
    await both(post, single, { ...consume(() => 'hot-baseline'), seconds: 1, connections });
    log('  usage: consume, one hot balance, one transaction per operation');
    out.hotOneTransaction = await both(post, single, { ...consume(() => 'hot-baseline'), seconds, connections });
  } finally {
    await Promise.all(single.map((s) => s.stop()));
  }
  const r = (a, b) => Number((a / Math.max(1, b)).toFixed(2));
  out.ratios = {
    hotVsWarmCheck: r(out.hot.requestsPerSecond, out.warmCheck.requestsPerSecond),
    hotVsOneTransaction: r(out.hot.requestsPerSecond, out.hotOneTransaction.requestsPerSecond),
    spreadVsWarmCheck: r(out.spread.requestsPerSecond, out.warmCheck.requestsPerSecond),
    spreadKeyedVsWarmCheck: r(out.spreadKeyed.requestsPerSecond, out.warmCheck.requestsPerSecond),
  };
  out.goals = {
    'hot >= 0.3x warm check': out.ratios.hotVsWarmCheck >= 0.3,
    'hot >= 3x one transaction per operation': out.ratios.hotVsOneTransaction >= 3,
    'spread >= 0.5x warm check': out.ratios.spreadVsWarmCheck >= 0.5,
    'p99 <= 50 ms (hot, spread)': out.hot.p99ms <= 50 && out.spread.p99ms <= 50,
  };
  return out;
}

function usageTable(u) {
  const row = (name, m) => `| ${name} | ${m.requestsPerSecond} | ${m.p50ms} ms | ${m.p99ms} ms | ${m.non2xx + m.errors} |`;
  return [
    `Two instances on one PostgreSQL in the default configuration (request logs and rate limits on), ${u.settings.connections} connections split between them, ${u.settings.seconds} s per row; every consume answered after its commit.`,
    '',
    '| target | req/s | p50 | p99 | non-2xx + errors |',
    '| --- | --- | --- | --- | --- |',
    row('warm capability check (same run)', u.warmCheck),
    row('consume, one hot balance (group commit)', u.hot),
    row(`consume, ${u.settings.owners} balances spread (group commit)`, u.spread),
    ...(u.spreadKeyed
      ? [row(`consume, ${u.settings.owners} balances spread, each with an idempotency key (not a goal row)`, u.spreadKeyed)]
      : []),
    row('consume, one hot balance, one transaction per operation', u.hotOneTransaction),
    '',
    `Ratios: hot / warm check ${u.ratios.hotVsWarmCheck}, hot / one transaction ${u.ratios.hotVsOneTransaction}, spread / warm check ${u.ratios.spreadVsWarmCheck}${u.ratios.spreadKeyedVsWarmCheck === undefined ? '' : `, spread with keys / warm check ${u.ratios.spreadKeyedVsWarmCheck}`}.`,
    `Goals: ${Object.entries(u.goals)
      .map(([k, v]) => `${k}: ${v ? 'met' : 'NOT met'}`)
      .join('; ')}.`,
  ].join('\n');
}

module.exports = { usageRows, usageTable, seedUsage };
