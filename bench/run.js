#!/usr/bin/env node
// `npm run bench`: the capability check against its baselines, all in one run on this machine
// (docs/benchmarks.md). Seeds PostgreSQL (1 000 000 and 10 000 licenses, 1 000 000 catalog
// products) and PGlite (1 000 000 licenses), starts the real server as a separate process per
// database, drives it with autocannon (100 connections), and writes bench/results/latest.json and
// the table in docs/benchmarks.md.
//
// Environment: BENCH_DATABASE_URL (a server URL whose databases the run may create and drop;
// default postgres://postgres@127.0.0.1:5432/postgres), BENCH_SECONDS (per measurement, default 10),
// BENCH_LICENSES (default 1000000), BENCH_SKIP_PGLITE=1, BENCH_ONLY=webhooks|usage|check-traffic
// (only those rows; `--only usage` and `--only check-traffic` likewise).
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const net = require('node:net');
const { execFileSync, spawn } = require('node:child_process');
const autocannon = require('autocannon');
const { Client } = require('pg');
const { seedCheck } = require('./seed');
const { webhookRows, webhookTable } = require('./webhooks');
const { trafficRows, trafficTable } = require('./traffic');
const { usageRows, usageTable } = require('./usage');

const ROOT = path.join(__dirname, '..');
const SERVER_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const LICENSES = Number(process.env.BENCH_LICENSES ?? 1_000_000);
const SMALL = 10_000;
const CONNECTIONS = 100;
const SECRET = 'benchmark master secret, not for production';

const log = (...a) => console.error(...a);
const ONLY = process.argv.includes('--only') ? process.argv[process.argv.indexOf('--only') + 1] : process.env.BENCH_ONLY;

function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

async function withServerDb(name, fn) {
  const admin = new Client({ connectionString: SERVER_URL });
  await admin.connect();
  try {
    await admin.query(`drop database if exists ${name}`);
    await admin.query(`create database ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(SERVER_URL);
  url.pathname = `/${name}`;
  try {
    return await fn(url.toString());
  } finally {
    const again = new Client({ connectionString: SERVER_URL });
    await again.connect();
    await again.query(`drop database if exists ${name} with (force)`).catch(() => undefined);
    await again.end();
  }
}

/**
 * A child process that prints a line once it listens; resolves with it and a peak-RSS sampler.
 * Its stdout goes to a file, as a deployment's log collector takes it (docker's default driver
 * writes the container's output to a file from a process of its own): a pipe read by this
 * process, which is busy driving the load, falls behind the servers' request logs and the lines
 * wait in the servers' memory (bounded there, then dropped: docs/decisions.md).
 */
let processes = 0;
/** Children still running: killed if this process ends first (a failed row must not leave servers behind). */
const running = new Set();
process.on('exit', () => {
  for (const c of running) c.kill('SIGKILL');
});
async function startProcess(args, env, ready) {
  // An `undefined` in `env` removes the variable (the server's default applies).
  const merged = Object.fromEntries(Object.entries({ ...process.env, ...env }).filter(([, v]) => v !== undefined));
  const spawned = performance.now();
  const logFile = path.join(os.tmpdir(), `tollgate-bench-${process.pid}-${processes++}.log`);
  const fd = fs.openSync(logFile, 'w');
  const child = spawn(process.execPath, args, { cwd: ROOT, env: merged, stdio: ['ignore', fd, 'pipe'] });
  fs.closeSync(fd);
  running.add(child);
  child.once('exit', () => running.delete(child));
  let errors = '';
  // Stderr is kept until the process is ready (what a failed start said), then dropped.
  let keep = true;
  child.stderr.on('data', (d) => keep && (errors += d));
  const line = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      clearInterval(poll);
      reject(new Error(`${args.join(' ')} did not start:\n${errors}`));
    }, 120_000);
    // The ready line is among the first lines of the file.
    const poll = setInterval(() => {
      const head = Buffer.alloc(65536);
      const f = fs.openSync(logFile, 'r');
      const n = fs.readSync(f, head, 0, head.length, 0);
      fs.closeSync(f);
      const m = ready.exec(head.subarray(0, n).toString());
      if (m) {
        clearTimeout(timer);
        clearInterval(poll);
        keep = false;
        resolve(m);
      }
    }, 25);
    child.on('exit', (code) => {
      clearInterval(poll);
      reject(new Error(`${args.join(' ')} exited with ${code}:\n${errors}`));
    });
  });
  const readyMs = performance.now() - spawned;
  let peak = 0;
  const rss = () => {
    try {
      const kb = Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${child.pid}/status`, 'utf8'))?.[1] ?? 0);
      peak = Math.max(peak, kb * 1024);
      return kb * 1024;
    } catch {
      return 0;
    }
  };
  const sampler = setInterval(rss, 100);
  return {
    match: line,
    readyMs,
    rss,
    peakRss: () => peak,
    resetPeak: () => (peak = rss()),
    stop: () =>
      new Promise((resolve) => {
        clearInterval(sampler);
        child.once('exit', () => {
          fs.rmSync(logFile, { force: true });
          resolve();
        });
        child.kill('SIGTERM');
        setTimeout(() => child.kill('SIGKILL'), 10_000).unref();
      }),
  };
}

/**
 * The service's default Node options (the heap ceiling), read from the Dockerfile's `ENV NODE_OPTIONS`
 * (`npm start` sets the same): the bench starts instances as a vendor does. The caller's own
 * NODE_OPTIONS come after, so they win.
 */
const SERVICE_NODE_OPTIONS = [
  /^ENV NODE_OPTIONS=(.+)$/m.exec(fs.readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8'))?.[1] ?? '',
  process.env.NODE_OPTIONS ?? '',
]
  .join(' ')
  .trim();

async function startTollgate(env) {
  const port = await freePort();
  const proc = await startProcess(
    ['apps/server/dist/main.js'],
    { PORT: String(port), TOLLGATE_SECRET: SECRET, RATE_LIMIT: 'off', LOG_REQUESTS: 'false', NODE_OPTIONS: SERVICE_NODE_OPTIONS, ...env },
    /Tollgate listening/,
  );
  return { ...proc, base: `http://127.0.0.1:${port}` };
}

async function startBaseline(kind, bodyFile) {
  const proc = await startProcess([path.join(__dirname, 'baseline-server.js'), kind, bodyFile], {}, /listening (\d+)/);
  return { ...proc, base: `http://127.0.0.1:${proc.match[1]}` };
}

/** autocannon for SECONDS with 100 connections; `pathOf(i)` gives the i-th request's path. */
async function load(base, { pathOf, headers = {}, seconds = SECONDS, connections = CONNECTIONS, amount }) {
  let i = 0;
  const result = await autocannon({
    url: base,
    connections,
    ...(amount ? { amount } : { duration: seconds }),
    headers,
    requests: [{ method: 'GET', setupRequest: (req) => ({ ...req, path: pathOf(i++) }) }],
  });
  return {
    requestsPerSecond: Math.round(result.requests.average),
    p50ms: result.latency.p50,
    p99ms: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
    total: result.requests.total,
  };
}

async function fetchText(url, init) {
  const res = await fetch(url, init);
  return { status: res.status, text: await res.text() };
}

/** The check scenarios against one running server. */
/** Grantees of the warm rows: the same set on every data set (the 10 000-license set has 1 000). */
const WARM_SET = 1000;

async function checkScenarios(server, seeded, label, { cold = true, wide = false, v2 = false } = {}) {
  const headers = { 'x-api-key': seeded.org.readOnlyKey };
  const check = (grantee) => `/licenses/check?productUuid=${seeded.product}&granteeIds=${grantee}`;
  const warmSet = Math.min(seeded.grantees, WARM_SET);
  const out = {};
  server.resetPeak();
  if (cold) {
    log(`  ${label}: cold, grantees with licenses (each grantee's first check)`);
    out.licensedCold = await load(server.base, { headers, pathOf: (i) => check(`user-${i % seeded.grantees}`) });
  }
  log(`  ${label}: warm, grantees with licenses (${warmSet} grantees, each asked once before)`);
  await load(server.base, { headers, amount: warmSet, pathOf: (i) => check(`user-${i % warmSet}`) });
  out.licensedWarm = await load(server.base, { headers, pathOf: (i) => check(`user-${i % warmSet}`) });
  if (v2) {
    // The same warm check as SDK 5 (`@salable/node-sdk@5`) asks it: `version: v2`, SDK 5's shape.
    const sdk5 = { ...headers, version: 'v2', 'content-type': 'application/json' };
    log(`  ${label}: warm, grantees with licenses (${warmSet} grantees), v2 (SDK 5's call)`);
    await load(server.base, { headers: sdk5, amount: warmSet, pathOf: (i) => check(`user-${i % warmSet}`) });
    out.licensedWarmV2 = await load(server.base, { headers: sdk5, pathOf: (i) => check(`user-${i % warmSet}`) });
  }
  if (wide) {
    const many = Math.min(seeded.grantees, 10 * WARM_SET);
    log(`  ${label}: warm, grantees with licenses (${many} grantees, each asked once before)`);
    await load(server.base, { headers, amount: many, pathOf: (i) => check(`user-${i % many}`) });
    out.licensedWarmWide = await load(server.base, { headers, pathOf: (i) => check(`user-${i % many}`) });
  }
  if (cold) {
    log(`  ${label}: cold, grantees without licenses`);
    out.unlicensedCold = await load(server.base, { headers, pathOf: (i) => check(`nobody-${i}`) });
    log(`  ${label}: warm, grantees without licenses (${warmSet} grantees, each asked once before)`);
    await load(server.base, { headers, amount: warmSet, pathOf: (i) => check(`nobody-${i % warmSet}`) });
    out.unlicensedWarm = await load(server.base, { headers, pathOf: (i) => check(`nobody-${i % warmSet}`) });
  }
  out.peakRssMiB = Math.round(server.peakRss() / 1048576);
  return out;
}

/**
 * The same warm check on both data sets, alternating for PAIRED_ROUNDS rounds (the machine's noise
 * hits both alike): the medians and their ratio (10 000 licenses / 1 000 000).
 */
const PAIRED_ROUNDS = 3;

/** The middle item of a few (by `by`, default the items themselves). */
const median = (xs, by = (x) => x) => [...xs].sort((a, b) => by(a) - by(b))[Math.floor(xs.length / 2)];
async function pairedSizes(large, largeSeeded, small, smallSeeded) {
  const warm = (server, seeded) => {
    const headers = { 'x-api-key': seeded.org.readOnlyKey };
    const set = Math.min(seeded.grantees, WARM_SET);
    return load(server.base, {
      headers,
      seconds: Math.max(3, SECONDS / 2),
      pathOf: (i) => `/licenses/check?productUuid=${seeded.product}&granteeIds=user-${i % set}`,
    });
  };
  for (const [server, seeded] of [
    [large, largeSeeded],
    [small, smallSeeded],
  ]) {
    const set = Math.min(seeded.grantees, WARM_SET);
    await load(server.base, {
      headers: { 'x-api-key': seeded.org.readOnlyKey },
      amount: set,
      pathOf: (i) => `/licenses/check?productUuid=${seeded.product}&granteeIds=user-${i % set}`,
    });
    await warm(server, seeded);
  }
  const rounds = { large: [], small: [] };
  for (let i = 0; i < PAIRED_ROUNDS; i++) {
    log(`  paired round ${i + 1}/${PAIRED_ROUNDS}: ${LICENSES} then ${SMALL} licenses`);
    rounds.large.push((await warm(large, largeSeeded)).requestsPerSecond);
    rounds.small.push((await warm(small, smallSeeded)).requestsPerSecond);
  }
  return {
    rounds,
    largeMedian: median(rounds.large),
    smallMedian: median(rounds.small),
    ratio: ratio(median(rounds.small), median(rounds.large)),
  };
}

/** 1 000 seats on a subscription: the time from the 202 to the event's `success`. */
async function seats(server, seeded) {
  const headers = { 'x-api-key': seeded.org.liveKey, version: 'v1', 'content-type': 'application/json' };
  const started = performance.now();
  const accepted = await fetchText(`${server.base}/subscriptions/${seeded.subscriptionId}/seats`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ increment: 1000, proration: 'none' }),
  });
  if (accepted.status !== 202) throw new Error(`increment answered ${accepted.status}: ${accepted.text}`);
  const acceptedMs = performance.now() - started;
  const { eventUuid } = JSON.parse(accepted.text);
  for (;;) {
    const e = JSON.parse((await fetchText(`${server.base}/events/${eventUuid}`, { headers })).text);
    if (e.status === 'success') break;
    if (e.status === 'failed') throw new Error(`the seat event failed: ${JSON.stringify(e)}`);
    await new Promise((r) => setTimeout(r, 10));
  }
  const doneMs = performance.now() - started;
  return { seats: 1000, acceptedMs: Math.round(acceptedMs), afterAcceptedMs: Math.round(doneMs - acceptedMs) };
}

/** The catalog product list: the first page vs a page 999 000 products deep (keyset cursor). */
async function catalogPages(server, catalog) {
  const headers = { authorization: `Bearer ${catalog.key}` };
  const page = (path) => load(server.base, { headers, seconds: Math.max(3, SECONDS / 2), connections: 10, pathOf: () => path });
  const firstPath = '/api/products?limit=100';
  const deepPath = `/api/products?limit=100&after=${catalog.deepCursor}`;
  await page(firstPath);
  await page(deepPath);
  // Alternating rounds, medians: the machine's noise hits both pages alike.
  const runs = { first: [], deep: [] };
  for (let i = 0; i < PAIRED_ROUNDS; i++) {
    runs.first.push(await page(firstPath));
    runs.deep.push(await page(deepPath));
  }
  const first = median(runs.first, (r) => r.requestsPerSecond);
  const deep = median(runs.deep, (r) => r.requestsPerSecond);
  return {
    first,
    deep,
    rounds: { first: runs.first.map((r) => r.requestsPerSecond), deep: runs.deep.map((r) => r.requestsPerSecond) },
    ratio: Number((first.requestsPerSecond / Math.max(1, deep.requestsPerSecond)).toFixed(2)),
  };
}

/** Only the webhook delivery rows: written to their own section of docs/benchmarks.md. */
async function webhooksOnly() {
  const r = await webhookRows(log);
  const file = path.join(__dirname, 'results', 'webhooks.json');
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, `${JSON.stringify({ date: new Date().toISOString(), ...r }, null, 2)}\n`);
  writeSection('bench-webhooks', webhookTable(r));
  console.log(webhookTable(r));
}

/** The check under real traffic (issue 22): two default-configured instances, long-tailed mixes, staleness. */
async function checkTraffic() {
  const r = await trafficRows({ startTollgate, startBaseline, load, fetchText, log, withServerDb, seedCheck, SECRET, SECONDS, LICENSES });
  return { date: new Date().toISOString(), ...r };
}

function writeTraffic(r) {
  const file = path.join(__dirname, 'results', 'check-traffic.json');
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, `${JSON.stringify(r, null, 2)}\n`);
  writeSection('bench-check-traffic', trafficTable(r));
  console.log(trafficTable(r));
}

/** The usage rows on a database of their own (bench/usage.js). */
const usageBench = () =>
  withServerDb(`tollgate_bench_usage_${process.pid}`, (url) =>
    usageRows({ url, secret: SECRET, seconds: SECONDS, connections: CONNECTIONS, startTollgate, load, autocannon, log }),
  );

/** Only the usage rows: written to their own section of docs/benchmarks.md. */
async function usageOnly() {
  const u = await usageBench();
  const file = path.join(__dirname, 'results', 'usage.json');
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, `${JSON.stringify({ date: new Date().toISOString(), ...u }, null, 2)}\n`);
  writeSection('bench-usage', usageTable(u));
  console.log(usageTable(u));
}

async function main() {
  if (ONLY === 'webhooks') return webhooksOnly();
  if (ONLY === 'check-traffic') return writeTraffic(await checkTraffic());
  if (ONLY === 'usage') return usageOnly();
  const started = Date.now();
  const results = {
    date: new Date().toISOString(),
    machine: { cpus: os.cpus().length, cpu: os.cpus()[0]?.model, memoryGiB: Math.round(os.totalmem() / 2 ** 30), node: process.version },
    settings: { seconds: SECONDS, connections: CONNECTIONS, licenses: LICENSES },
  };
  const suffix = process.pid;

  await withServerDb(`tollgate_bench_large_${suffix}`, (url) =>
    withServerDb(`tollgate_bench_small_${suffix}`, async (smallUrl) => {
      log(`PostgreSQL server: seeding ${LICENSES} licenses and ${LICENSES} catalog products`);
      const seeded = await seedCheck({ DATABASE_URL: url, TOLLGATE_SECRET: SECRET }, { licenses: LICENSES, products: LICENSES });
      results.seeding = { licenses: LICENSES, licenseSeconds: seeded.licenseSeconds, productSeconds: seeded.catalog.seconds };
      log(`PostgreSQL server: seeding ${SMALL} licenses`);
      const small = await seedCheck({ DATABASE_URL: smallUrl, TOLLGATE_SECRET: SECRET }, { licenses: SMALL });
      const server = await startTollgate({ DATABASE_URL: url });
      let smallServer;
      try {
        // The baselines answer with the bytes of a real check answer of this data set.
        const sample = await fetchText(`${server.base}/licenses/check?productUuid=${seeded.product}&granteeIds=user-1`, {
          headers: { 'x-api-key': seeded.org.readOnlyKey },
        });
        if (sample.status !== 200) throw new Error(`the sample check answered ${sample.status}: ${sample.text}`);
        const bodyFile = path.join(os.tmpdir(), `tollgate-bench-body-${suffix}.json`);
        fs.writeFileSync(bodyFile, sample.text);
        results.body = { bytes: Buffer.byteLength(sample.text) };
        for (const kind of ['express', 'raw']) {
          log(`baseline: ${kind}`);
          const b = await startBaseline(kind, bodyFile);
          try {
            await load(b.base, { seconds: 2, pathOf: () => '/licenses/check?x' });
            results[kind === 'express' ? 'bareExpress' : 'rawNode'] = await load(b.base, { pathOf: () => '/licenses/check?x' });
          } finally {
            await b.stop();
          }
        }
        log(`PostgreSQL server, ${LICENSES} licenses:`);
        results.postgresLarge = await checkScenarios(server, seeded, `${LICENSES}`, { wide: true, v2: true });
        log('  catalog pages');
        results.catalog = await catalogPages(server, seeded.catalog);
        log('  1000 seats');
        results.seats = await seats(server, seeded);

        smallServer = await startTollgate({ DATABASE_URL: smallUrl });
        log(`PostgreSQL server, ${SMALL} licenses:`);
        results.postgresSmall = await checkScenarios(smallServer, small, `${SMALL}`);
      } finally {
        await server.stop();
        await smallServer?.stop();
      }
      // Data size alone: two fresh servers (caches holding only the warm set), the same warm check.
      const freshLarge = await startTollgate({ DATABASE_URL: url });
      const freshSmall = await startTollgate({ DATABASE_URL: smallUrl });
      try {
        results.sizes = await pairedSizes(freshLarge, seeded, freshSmall, small);
      } finally {
        await freshLarge.stop();
        await freshSmall.stop();
      }
    }),
  );

  if (process.env.BENCH_SKIP_PGLITE !== '1') {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tollgate-bench-pglite-'));
    try {
      log(`PGlite: seeding ${LICENSES} licenses`);
      const seeded = await seedCheck({ DATA_DIR: dir, TOLLGATE_SECRET: SECRET }, { licenses: LICENSES });
      results.seeding.pgliteLicenseSeconds = seeded.licenseSeconds;
      const server = await startTollgate({ DATA_DIR: dir });
      try {
        log(`PGlite, ${LICENSES} licenses:`);
        results.pglite = await checkScenarios(server, seeded, 'PGlite');
      } finally {
        await server.stop();
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }

  log('webhook delivery:');
  results.webhooks = await webhookRows(log);
  log('the check under real traffic:');
  const traffic = await checkTraffic();
  log('usage:');
  results.usage = await usageBench();
  results.ratios = ratios(results);
  results.seconds = Math.round((Date.now() - started) / 1000);
  fs.mkdirSync(path.join(__dirname, 'results'), { recursive: true });
  fs.writeFileSync(path.join(__dirname, 'results', 'latest.json'), `${JSON.stringify(results, null, 2)}\n`);
  writeTable(results);
  writeSection('bench-webhooks', webhookTable(results.webhooks));
  writeSection('bench-usage', usageTable(results.usage));
  console.log(table(results));
  console.log(webhookTable(results.webhooks));
  writeTraffic(traffic);
  console.log(usageTable(results.usage));
}

const ratio = (a, b) => Number((a / b).toFixed(2));

function ratios(r) {
  const base = r.bareExpress;
  const out = {
    checkWarmVsExpress: ratio(r.postgresLarge.licensedWarm.requestsPerSecond, base.requestsPerSecond),
    checkWarmP99VsExpress: ratio(r.postgresLarge.licensedWarm.p99ms, Math.max(1, base.p99ms)),
    checkWarmV2VsExpress: r.postgresLarge.licensedWarmV2
      ? ratio(r.postgresLarge.licensedWarmV2.requestsPerSecond, base.requestsPerSecond)
      : undefined,
    checkWarmWideVsExpress: r.postgresLarge.licensedWarmWide
      ? ratio(r.postgresLarge.licensedWarmWide.requestsPerSecond, base.requestsPerSecond)
      : undefined,
    smallVsLarge: r.sizes.ratio,
    deepPageCost: r.catalog.ratio,
  };
  if (r.pglite) out.pgliteWarmVsExpress = ratio(r.pglite.licensedWarm.requestsPerSecond, base.requestsPerSecond);
  return out;
}

function rows(r) {
  const base = r.bareExpress.requestsPerSecond;
  const row = (name, m) => [
    name,
    m.requestsPerSecond,
    `${m.p50ms} ms`,
    `${m.p99ms} ms`,
    ratio(m.requestsPerSecond, base).toFixed(2),
    m.non2xx + m.errors,
  ];
  const out = [row('bare Express 5 route, same bytes', r.bareExpress), row('raw node:http, same bytes', r.rawNode)];
  const set = (label, s) => {
    if (!s) return;
    if (s.licensedCold) out.push(row(`${label}: with licenses, cold`, s.licensedCold));
    out.push(row(`${label}: with licenses, warm (${WARM_SET} grantees)`, s.licensedWarm));
    if (s.licensedWarmV2) out.push(row(`${label}: warm check, v2 (SDK 5's call, ${WARM_SET} grantees)`, s.licensedWarmV2));
    if (s.licensedWarmWide) out.push(row(`${label}: with licenses, warm (${10 * WARM_SET} grantees)`, s.licensedWarmWide));
    if (s.unlicensedCold) out.push(row(`${label}: without licenses, cold`, s.unlicensedCold));
    if (s.unlicensedWarm) out.push(row(`${label}: without licenses, warm (${WARM_SET} grantees)`, s.unlicensedWarm));
  };
  set(`check, PostgreSQL, ${r.settings.licenses} licenses`, r.postgresLarge);
  set(`check, PostgreSQL, ${SMALL} licenses`, r.postgresSmall);
  set(`check, PGlite, ${r.settings.licenses} licenses`, r.pglite);
  return out;
}

function table(r) {
  const lines = [
    `Run of ${r.date.slice(0, 10)} on ${r.machine.cpus} x ${r.machine.cpu}, ${r.machine.memoryGiB} GiB, Node ${r.machine.node};` +
      ` autocannon, ${r.settings.connections} connections, ${r.settings.seconds} s per row; check body ${r.body.bytes} bytes.`,
    '',
    '| target | req/s | p50 | p99 | ratio to bare Express | non-2xx + errors |',
    '| --- | --- | --- | --- | --- | --- |',
    ...rows(r).map((c) => `| ${c.join(' | ')} |`),
    '',
    '| measure | value |',
    '| --- | --- |',
    `| server peak RSS under check load (PostgreSQL, ${r.settings.licenses} licenses) | ${r.postgresLarge.peakRssMiB} MiB |`,
    ...(r.pglite ? [`| server peak RSS under check load (PGlite, ${r.settings.licenses} licenses) | ${r.pglite.peakRssMiB} MiB |`] : []),
    `| 1 000 seats: the 202 / then until the event is \`success\` | ${r.seats.acceptedMs} ms / ${r.seats.afterAcceptedMs} ms |`,
    `| catalog products, first page (10 connections; median of ${PAIRED_ROUNDS} rounds alternating with the deep page: ${r.catalog.rounds.first.join(' / ')}) | ${r.catalog.first.requestsPerSecond} req/s, p99 ${r.catalog.first.p99ms} ms |`,
    `| catalog products, the page after product ${(r.settings.licenses - 1000).toLocaleString('en')} of ${r.settings.licenses} (${r.catalog.rounds.deep.join(' / ')}) | ${r.catalog.deep.requestsPerSecond} req/s, p99 ${r.catalog.deep.p99ms} ms (cost ${r.catalog.ratio}x the first page) |`,
    `| warm check, same ${WARM_SET} grantees, ${r.settings.licenses} vs ${SMALL} licenses, fresh servers, ${PAIRED_ROUNDS} alternating rounds (req/s) | ${r.sizes.rounds.large.join(' / ')} vs ${r.sizes.rounds.small.join(' / ')}: medians ${r.sizes.largeMedian} vs ${r.sizes.smallMedian}, ratio ${r.sizes.ratio} |`,
    `| seeding ${r.settings.licenses} licenses (PostgreSQL${r.seeding.pgliteLicenseSeconds ? ' / PGlite' : ''}) | ${r.seeding.licenseSeconds.toFixed(1)} s${r.seeding.pgliteLicenseSeconds ? ` / ${r.seeding.pgliteLicenseSeconds.toFixed(1)} s` : ''} |`,
    '',
    `Ratios: ${Object.entries(r.ratios)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')}. Whole run: ${r.seconds} s.`,
  ];
  return lines.join('\n');
}

/** Replaces the generated part of docs/benchmarks.md (between its markers). */
function writeTable(r) {
  writeSection('bench', table(r));
}

/** Replaces one generated section of docs/benchmarks.md (between `<!-- NAME:begin ... -->` and `<!-- NAME:end -->`). */
function writeSection(name, body) {
  const file = path.join(ROOT, 'docs', 'benchmarks.md');
  const text = fs.readFileSync(file, 'utf8');
  const begin = `<!-- ${name}:begin (written by npm run bench) -->`;
  const end = `<!-- ${name}:end -->`;
  const at = text.indexOf(begin);
  const until = text.indexOf(end);
  if (at < 0 || until < 0) throw new Error(`docs/benchmarks.md lacks the ${name} markers`);
  fs.writeFileSync(file, `${text.slice(0, at + begin.length)}\n${body}\n${text.slice(until)}`);
  // The tables as the repository's formatter writes them (lint checks docs too).
  execFileSync(process.execPath, [require.resolve('prettier/bin/prettier.cjs'), '--write', file], { stdio: 'ignore' });
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(e);
    process.exit(1);
  },
);
