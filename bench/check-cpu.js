#!/usr/bin/env node
// CPU per answer of the capability check (`GET /licenses/check`) under a mix of grantees:
// `node bench/check-cpu.js [uniform|zipf|one]` (build first: it runs apps/server/dist).
// Seeds BENCH_LICENSES (default 1 000 000) licenses over a tenth as many grantees as bench/traffic.js
// does (bench/seed.js), into database `bench_check_cpu` (kept when KEEP_DB=1, and reused when it is
// already seeded with REUSE_DB=1), starts ONE built server in the default configuration (request
// logs on, rate limits on, the Dockerfile's heap ceiling), drives it with autocannon (100
// connections, 2 s of warm-up, then BENCH_SECONDS, default 8) with grantees drawn as the traffic
// rows draw them, and prints req/s, latency, and the CPU the server process used per answer (utime +
// stime from /proc, in microseconds), and the request log lines it wrote against the requests sent
// (none may be missing). Req/s swings with whatever else runs on this 2-core machine;
// CPU per answer much less, so compare that. PROFILE=1 writes the server's .cpuprofile into
// bench/results/profiles. To compare with other code: COMPARE_ROOT=<another checkout, built (its
// node_modules may link to this one's, but @tollgate/* must be its own)> ROUNDS=<n> measures both
// alternately (A B, then B A, ...) and prints each run and the medians.
const fs = require('node:fs');
const path = require('node:path');
const { spawn } = require('node:child_process');
const autocannon = require('autocannon');
const { seedCheck } = require('./seed');
const { zipf, uniform } = require('./traffic');

const ROOT = path.join(__dirname, '..');
const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const LICENSES = Number(process.env.BENCH_LICENSES ?? 1_000_000);
const MODE = process.argv[2] ?? 'uniform';
const CONNECTIONS = 100;
const SECRET = 'benchmark master secret, not for production';
const DB = 'bench_check_cpu';
const SEEDED_FILE = path.join(require('node:os').tmpdir(), `${DB}.json`);
const NODE_OPTIONS = /^ENV NODE_OPTIONS=(.+)$/m.exec(fs.readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8'))?.[1] ?? '';

const { freePort, cpuOf, admin, SERVER_URL } = require('./process-cpu');

async function seeded(url) {
  const exists = (await admin(`select 1 from pg_database where datname = '${DB}'`)).rowCount > 0;
  if (process.env.REUSE_DB === '1' && exists && fs.existsSync(SEEDED_FILE)) {
    const s = JSON.parse(fs.readFileSync(SEEDED_FILE, 'utf8'));
    if (s.licenses === LICENSES) return s;
  }
  await admin(`drop database if exists ${DB} with (force)`);
  await admin(`create database ${DB}`);
  const s = await seedCheck({ DATABASE_URL: url, TOLLGATE_SECRET: SECRET }, { licenses: LICENSES });
  const out = { licenses: LICENSES, grantees: s.grantees, product: s.product, key: s.org.readOnlyKey };
  fs.mkdirSync(path.dirname(SEEDED_FILE), { recursive: true });
  fs.writeFileSync(SEEDED_FILE, JSON.stringify(out));
  return out;
}

/** One server built in `root`, started on the seeded database, driven for warm-up then SECONDS: its figures. */
async function measure(root, url, s) {
  const port = await freePort();
  const args = process.env.PROFILE === '1' ? ['--cpu-prof', `--cpu-prof-dir=${path.join(__dirname, 'results', 'profiles')}`] : [];
  const env = { ...process.env, PORT: String(port), DATABASE_URL: url, TOLLGATE_SECRET: SECRET, NODE_OPTIONS };
  // The default configuration: request logs and rate limits as the server defaults them.
  delete env.LOG_REQUESTS;
  delete env.RATE_LIMIT;
  // Stdout to a file, as a deployment's log collector takes it (bench/run.js says why not a pipe).
  const logFile = path.join(require('node:os').tmpdir(), `tollgate-check-cpu-${process.pid}.log`);
  const fd = fs.openSync(logFile, 'w');
  const child = spawn(process.execPath, [...args, 'apps/server/dist/main.js'], { cwd: root, env, stdio: ['ignore', fd, 'inherit'] });
  fs.closeSync(fd);
  /** The request log's lines of the check in the file (a line per answer). */
  const logLinesOfCheck = () => fs.readFileSync(logFile, 'utf8').split('"path":"/licenses/check').length - 1;
  try {
    await new Promise((resolve, reject) => {
      const poll = setInterval(() => {
        if (/listening/.test(fs.readFileSync(logFile, 'utf8').slice(0, 65536))) {
          clearInterval(poll);
          resolve();
        }
      }, 25);
      child.on('exit', (code) => {
        clearInterval(poll);
        reject(new Error(`the server exited with ${code}`));
      });
    });
    const draws = MODE === 'zipf' ? zipf(s.grantees, 200_000) : MODE === 'one' ? Int32Array.of(1) : uniform(s.grantees, 200_000);
    const check = (g) => `/licenses/check?productUuid=${s.product}&granteeIds=user-${g}`;
    const run = (seconds) => {
      let i = 0;
      return autocannon({
        url: `http://127.0.0.1:${port}`,
        connections: CONNECTIONS,
        duration: seconds,
        headers: { 'x-api-key': s.key },
        requests: [{ method: 'GET', setupRequest: (req) => ({ ...req, path: check(draws[i++ % draws.length]) }) }],
      });
    };
    const warm = await run(2);
    const before = cpuOf(child.pid);
    const r = await run(SECONDS);
    const cpu = cpuOf(child.pid) - before;
    // The log is flushed within a second: every answer's line must have come (none dropped). An
    // answer autocannon gave up on at the end may still be logged: more lines than answers is fine.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const answered = warm.requests.total + r.requests.total;
    const logLines = logLinesOfCheck();
    if (logLines < answered) {
      console.error(`request log: ${answered - logLines} of ${answered} answers have no line`);
      process.exitCode = 1;
    }
    return {
      root,
      mode: MODE,
      licenses: s.licenses,
      grantees: s.grantees,
      reqPerSec: Math.round(r.requests.average),
      p50ms: r.latency.p50,
      p99ms: r.latency.p99,
      non2xx: r.non2xx,
      errors: r.errors + r.timeouts,
      answers: r.requests.total,
      serverCpuSeconds: Math.round(cpu * 100) / 100,
      requestLogLines: logLines,
      requestsAnswered: answered,
      serverCpuMicrosecondsPerAnswer: Math.round((cpu / Math.max(1, r.requests.total)) * 1e6),
    };
  } finally {
    child.kill('SIGTERM');
    await new Promise((resolve) => child.once('exit', resolve));
    fs.rmSync(logFile, { force: true });
  }
}

async function main() {
  const url = new URL(SERVER_URL);
  url.pathname = `/${DB}`;
  const s = await seeded(url.toString());
  // COMPARE_ROOT: another checkout, built, measured alternately with this one (A B B A ...), ROUNDS rounds.
  const roots = [ROOT, ...(process.env.COMPARE_ROOT ? [path.resolve(process.env.COMPARE_ROOT)] : [])];
  const rounds = Number(process.env.ROUNDS ?? 1);
  const results = new Map(roots.map((r) => [r, []]));
  try {
    for (let round = 0; round < rounds; round++) {
      for (const root of round % 2 === 0 ? roots : [...roots].reverse()) {
        const r = await measure(root, url.toString(), s);
        results.get(root).push(r);
        console.log(JSON.stringify(r));
      }
    }
    if (rounds > 1 || roots.length > 1) {
      const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
      for (const [root, rs] of results)
        console.log(
          JSON.stringify({
            root,
            runs: rs.length,
            medianCpuMicrosecondsPerAnswer: median(rs.map((r) => r.serverCpuMicrosecondsPerAnswer)),
            cpuMicrosecondsPerAnswer: rs.map((r) => r.serverCpuMicrosecondsPerAnswer),
            medianReqPerSec: median(rs.map((r) => r.reqPerSec)),
          }),
        );
    }
  } finally {
    if (process.env.KEEP_DB !== '1') {
      await admin(`drop database if exists ${DB} with (force)`);
      fs.rmSync(SEEDED_FILE, { force: true });
    }
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
