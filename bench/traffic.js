// The check under real traffic (issue 22; `node bench/run.js --only check-traffic`, or BENCH_ONLY=check-traffic):
// 1 000 000 licenses over 100 000 grantees on one PostgreSQL, two instances (A and B) in their
// DEFAULT configuration (request logs on, rate limits on), 100 connections, one load generator
// (autocannon) for every row: raw node:http and bare Express 5 answering the same bytes, one
// grantee, grantees drawn Zipf(1.0) over all 100 000, drawn uniformly, and Zipf while licenses are
// created on B. Staleness under that load: a license committed on B (its 201), then A's check asked
// again and again until it grants: median and p99 of the wait, and any stale answer after a fresh
// one. Also each instance's start-to-ready time and peak RSS.

const GRANTEES_SAMPLE = 200_000;

/** A deterministic generator (mulberry32): the same mix on every run. */
function random(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** `count` grantee numbers drawn Zipf(s) over 0..n-1 (rank r has weight 1/(r+1)^s), ranks shuffled over the numbers. */
function zipf(n, count, s = 1, seed = 7) {
  const rnd = random(seed);
  const cdf = new Float64Array(n);
  let sum = 0;
  for (let r = 0; r < n; r++) cdf[r] = sum += 1 / (r + 1) ** s;
  // Which grantee has which rank: a shuffle, so the hot ones are not user-0, user-1, ...
  const who = Array.from({ length: n }, (_, i) => i);
  for (let i = n - 1; i > 0; i--) {
    const j = Math.floor(rnd() * (i + 1));
    [who[i], who[j]] = [who[j], who[i]];
  }
  const out = new Int32Array(count);
  for (let k = 0; k < count; k++) {
    const x = rnd() * sum;
    let lo = 0;
    let hi = n - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cdf[mid] < x) lo = mid + 1;
      else hi = mid;
    }
    out[k] = who[lo];
  }
  return out;
}

function uniform(n, count, seed = 11) {
  const rnd = random(seed);
  return Int32Array.from({ length: count }, () => Math.floor(rnd() * n));
}

const quantile = (xs, q) => {
  if (xs.length === 0) return null;
  const s = [...xs].sort((a, b) => a - b);
  return Math.round(s[Math.min(s.length - 1, Math.floor(q * s.length))] * 10) / 10;
};

/**
 * Licenses created on B one after another (each for a grantee nobody asked about yet); after each
 * 201, A's check for that grantee is asked until it grants. Runs until `until()`.
 */
async function writesAndStaleness({ a, b, seeded, fetchText, until, keyA, keyB, plan }) {
  const waits = [];
  // Per license: how long the check that first granted took itself (sent to answered).
  const lastChecks = [];
  let created = 0;
  let staleAfterFresh = 0;
  let failures = 0;
  for (let n = 0; !until(); n++) {
    const grantee = `fresh-${process.pid}-${n}`;
    const check = `${a.base}/licenses/check?productUuid=${seeded.product}&granteeIds=${grantee}`;
    // A has answered "nothing" for this grantee (cached), so seeing the license needs the feed.
    const before = await fetchText(check, { headers: { 'x-api-key': keyA } });
    if (before.status !== 204) throw new Error(`a fresh grantee's check answered ${before.status}`);
    const res = await fetchText(`${b.base}/licenses`, {
      method: 'POST',
      headers: { 'x-api-key': keyB, 'content-type': 'application/json' },
      body: JSON.stringify({ planUuid: plan, member: `${grantee}@example.com`, granteeId: grantee }),
    });
    const committed = performance.now();
    if (res.status !== 201) {
      failures++;
      if (failures > 5) throw new Error(`creating a license on B answered ${res.status}: ${res.text}`);
      continue;
    }
    created++;
    for (;;) {
      const sent = performance.now();
      const r = await fetchText(check, { headers: { 'x-api-key': keyA } });
      if (r.status === 200) {
        lastChecks.push(performance.now() - sent);
        break;
      }
      if (performance.now() - committed > 10_000) throw new Error(`A did not see ${grantee}'s license within 10 s`);
    }
    waits.push(performance.now() - committed);
    // Never a stale answer after the fresh one.
    for (let i = 0; i < 3; i++) if ((await fetchText(check, { headers: { 'x-api-key': keyA } })).status !== 200) staleAfterFresh++;
    await new Promise((r) => setTimeout(r, 20));
  }
  return { created, waits, lastChecks, staleAfterFresh };
}

/** Runs `writesAndStaleness` in a child process for `seconds`; resolves with its result. */
function probeProcess(args) {
  const { spawn } = require('node:child_process');
  const child = spawn(process.execPath, [__filename, 'probe', JSON.stringify(args)], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  return new Promise((resolve, reject) =>
    child.on('exit', (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`the staleness probe exited with ${code}`)))),
  );
}

async function trafficRows(h) {
  const { startTollgate, startBaseline, load, fetchText, log, withServerDb, seedCheck, SECRET, SECONDS, LICENSES } = h;
  const out = { settings: { seconds: SECONDS, licenses: LICENSES, grantees: Math.floor(LICENSES / 10), connections: 100 } };
  await withServerDb(`tollgate_bench_traffic_${process.pid}`, async (url) => {
    log(`PostgreSQL server: seeding ${LICENSES} licenses over ${LICENSES / 10} grantees`);
    const seeded = await seedCheck({ DATABASE_URL: url, TOLLGATE_SECRET: SECRET }, { licenses: LICENSES });
    out.seedingSeconds = seeded.licenseSeconds;
    // The default configuration: request logs on, rate limits on (only the secret and the database given).
    const defaults = { DATABASE_URL: url, LOG_REQUESTS: undefined, RATE_LIMIT: undefined };
    const a = await startTollgate(defaults);
    const b = await startTollgate(defaults);
    out.readyMs = { a: Math.round(a.readyMs), b: Math.round(b.readyMs) };
    out.rssAtReadyMiB = { a: Math.round(a.rss() / 1048576), b: Math.round(b.rss() / 1048576) };
    try {
      const headers = { 'x-api-key': seeded.org.readOnlyKey };
      const check = (g) => `/licenses/check?productUuid=${seeded.product}&granteeIds=user-${g}`;
      const sample = await fetchText(`${a.base}${check(1)}`, { headers });
      if (sample.status !== 200) throw new Error(`the sample check answered ${sample.status}: ${sample.text}`);
      const bodyFile = require('node:path').join(require('node:os').tmpdir(), `tollgate-bench-traffic-${process.pid}.json`);
      require('node:fs').writeFileSync(bodyFile, sample.text);
      out.bodyBytes = Buffer.byteLength(sample.text);
      for (const kind of ['raw', 'express']) {
        log(`  baseline: ${kind}`);
        const s = await startBaseline(kind, bodyFile);
        try {
          await load(s.base, { seconds: 2, pathOf: () => '/licenses/check?x' });
          out[kind] = await load(s.base, { pathOf: () => '/licenses/check?x' });
        } finally {
          await s.stop();
        }
      }
      const grantees = seeded.grantees;
      const mixes = { zipf: zipf(grantees, GRANTEES_SAMPLE), uniform: uniform(grantees, GRANTEES_SAMPLE) };
      const mixed =
        (draws, offset = 0) =>
        (i) =>
          check(draws[(i + offset) % draws.length]);
      a.resetPeak();
      b.resetPeak();
      const row = async (name, pathOf) => {
        log(`  A: ${name}`);
        await load(a.base, { headers, seconds: 2, pathOf });
        return load(a.base, { headers, pathOf });
      };
      out.oneGrantee = await row('one grantee', () => check(1));
      out.zipf = await row('Zipf(1.0) over all grantees', mixed(mixes.zipf));
      out.uniform = await row('uniform over all grantees', mixed(mixes.uniform));
      log('  A: Zipf while licenses are created on B (and staleness)');
      const writer = await fetchText(`${b.base}/licenses/check?productUuid=${seeded.product}&granteeIds=user-1`, { headers });
      if (writer.status !== 200) throw new Error('B does not answer');
      // The writer and prober is a process of its own: the load generator's event loop must not delay its clock.
      const probe = probeProcess({
        a: a.base,
        b: b.base,
        product: seeded.product,
        keyA: seeded.org.readOnlyKey,
        keyB: seeded.org.liveKey,
        plan: seeded.org.keys['plans.notes.team'],
        seconds: SECONDS,
      });
      out.zipfWhileWriting = await load(a.base, { headers, pathOf: mixed(mixes.zipf, 7919) });
      const w = await probe;
      out.staleness = {
        created: w.created,
        medianMs: quantile(w.waits, 0.5),
        p90Ms: quantile(w.waits, 0.9),
        p99Ms: quantile(w.waits, 0.99),
        maxMs: quantile(w.waits, 1),
        staleAfterFresh: w.staleAfterFresh,
        waitsMs: w.waits.map((x) => Math.round(x * 10) / 10),
        lastCheckMedianMs: quantile(w.lastChecks, 0.5),
        lastCheckP99Ms: quantile(w.lastChecks, 0.99),
        lastChecksMs: w.lastChecks.map((x) => Math.round(x * 10) / 10),
      };
      out.peakRssMiB = { a: Math.round(a.peakRss() / 1048576), b: Math.round(b.peakRss() / 1048576) };
    } finally {
      await a.stop();
      await b.stop();
    }
  });
  return out;
}

const r2 = (a, b) => (a / b).toFixed(2);

function trafficTable(r) {
  const ex = r.express;
  const raw = r.raw;
  const row = (name, m) =>
    `| ${name} | ${m.requestsPerSecond} | ${m.p50ms} ms | ${m.p99ms} ms | ${r2(m.requestsPerSecond, ex.requestsPerSecond)} | ${r2(m.p99ms, Math.max(1, ex.p99ms))} | ${r2(m.requestsPerSecond, raw.requestsPerSecond)} | ${m.non2xx + m.errors} |`;
  return [
    `Run of ${r.date.slice(0, 10)}: ${r.settings.licenses} licenses over ${r.settings.grantees} grantees on one PostgreSQL, two instances in the default configuration` +
      ` (request logs on), autocannon, ${r.settings.connections} connections, ${r.settings.seconds} s per row (after 2 s of the same mix); check body ${r.bodyBytes} bytes.`,
    '',
    '| row | req/s | p50 | p99 | vs bare Express | p99 vs Express | vs raw node:http | non-2xx + errors |',
    '| --- | --- | --- | --- | --- | --- | --- | --- |',
    row('raw node:http, same bytes', r.raw),
    row('bare Express 5, same bytes', r.express),
    row('one grantee asked again and again', r.oneGrantee),
    row(`grantees drawn Zipf(1.0) over all ${r.settings.grantees}`, r.zipf),
    row('grantees drawn uniformly', r.uniform),
    row('Zipf while licenses are created on the other instance', r.zipfWhileWriting),
    '',
    '| measure | value |',
    '| --- | --- |',
    `| a license committed on B, seen by A's check (under the Zipf load; ${r.staleness.created} licenses) | median ${r.staleness.medianMs} ms, p90 ${r.staleness.p90Ms} ms, p99 ${r.staleness.p99Ms} ms, max ${r.staleness.maxMs} ms; stale answers after a fresh one: ${r.staleness.staleAfterFresh} |`,
    `| of which the granting check's own round trip (sent to answered) | median ${r.staleness.lastCheckMedianMs} ms, p99 ${r.staleness.lastCheckP99Ms} ms |`,
    `| start to ready (process spawned to listening), A / B | ${r.readyMs.a} ms / ${r.readyMs.b} ms |`,
    `| RSS when ready, A / B | ${r.rssAtReadyMiB.a} MiB / ${r.rssAtReadyMiB.b} MiB |`,
    `| peak RSS over the rows, A / B | ${r.peakRssMiB.a} MiB / ${r.peakRssMiB.b} MiB |`,
    `| seeding ${r.settings.licenses} licenses | ${r.seedingSeconds.toFixed(1)} s |`,
  ].join('\n');
}

module.exports = { trafficRows, trafficTable, zipf, uniform };

if (require.main === module && process.argv[2] === 'probe') {
  const o = JSON.parse(process.argv[3]);
  const fetchText = async (url, init) => {
    const res = await fetch(url, init);
    return { status: res.status, text: await res.text() };
  };
  const end = performance.now() + o.seconds * 1000;
  writesAndStaleness({
    a: { base: o.a },
    b: { base: o.b },
    seeded: { product: o.product },
    fetchText,
    until: () => performance.now() > end,
    keyA: o.keyA,
    keyB: o.keyB,
    plan: o.plan,
  }).then(
    (r) => {
      process.stdout.write(JSON.stringify(r));
      process.exit(0);
    },
    (e) => {
      console.error(e);
      process.exit(1);
    },
  );
}
