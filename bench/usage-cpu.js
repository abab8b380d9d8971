#!/usr/bin/env node
// CPU per operation of the usage consume (docs/scaling.md): `node bench/usage-cpu.js [hot|spread|check] [instances]`
// seeds a fresh database as the usage rows do (bench/usage.js), starts the built server
// (apps/server/dist), drives it with autocannon (50 connections, BENCH_SECONDS, default 8) and
// prints req/s, latency and the CPU seconds the server processes, PostgreSQL's processes (all of
// them on this machine: run it alone) and autocannon used, per operation. Req/s swings with
// whatever else runs; CPU per operation much less, so compare those. PROFILE=1 writes a
// .cpuprofile of the first instance into bench/results/profiles.
const path = require('node:path');
const { spawn } = require('node:child_process');
const autocannon = require('autocannon');
const { seedUsage } = require('./usage');

const ROOT = path.join(__dirname, '..');
const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const MODE = process.argv[2] ?? 'hot';
const INSTANCES = Number(process.argv[3] ?? 1);
const CONNECTIONS = 50;
const SECRET = 'benchmark master secret, not for production';
const DB = 'bench_usage_cpu';

const { freePort, cpuOf, postgresCpu, admin, freshDatabase } = require('./process-cpu');

async function main() {
  const db = await freshDatabase(DB);
  const servers = [];
  try {
    const seeded = await seedUsage({ DATABASE_URL: db.url, TOLLGATE_SECRET: SECRET }, console.error);
    await admin(`analyze`, db.url);
    for (let n = 0; n < INSTANCES; n++) {
      const port = await freePort();
      const args =
        process.env.PROFILE === '1' && n === 0 ? ['--cpu-prof', `--cpu-prof-dir=${path.join(__dirname, 'results', 'profiles')}`] : [];
      const child = spawn(process.execPath, [...args, 'apps/server/dist/main.js'], {
        cwd: ROOT,
        env: {
          ...process.env,
          PORT: String(port),
          DATABASE_URL: db.url,
          TOLLGATE_SECRET: SECRET,
          RATE_LIMIT: 'off',
          LOG_REQUESTS: 'false',
          RUN_WORKER: 'false',
        },
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      servers.push({ child, base: `http://127.0.0.1:${port}` });
      await new Promise((resolve, reject) => {
        child.stdout.on('data', (d) => /listening/.test(String(d)) && resolve());
        child.on('exit', (code) => reject(new Error(`the server exited with ${code}`)));
      });
    }
    const run = (seconds) =>
      Promise.all(
        servers.map((s) =>
          autocannon(
            MODE === 'check'
              ? {
                  url: s.base,
                  connections: CONNECTIONS / INSTANCES,
                  duration: seconds,
                  headers: { 'x-api-key': seeded.org.readOnlyKey },
                  requests: [{ method: 'GET', path: `/licenses/check?productUuid=${seeded.product}&granteeIds=usage-checker` }],
                }
              : {
                  url: s.base,
                  connections: CONNECTIONS / INSTANCES,
                  duration: seconds,
                  headers: { authorization: `Bearer ${seeded.org.liveKey}`, 'content-type': 'application/json' },
                  requests: [
                    {
                      method: 'POST',
                      path: '/api/usage/consume',
                      setupRequest: (req) => ({
                        ...req,
                        body: JSON.stringify({
                          owner: MODE === 'hot' ? 'hot' : `owner-${Math.floor(Math.random() * 10_000)}`,
                          meterSlug: 'tokens',
                          quantity: 1,
                        }),
                      }),
                    },
                  ],
                },
          ),
        ),
      );
    await run(1);
    console.error(`measuring for ${SECONDS} s`);
    const before = { pg: postgresCpu(), node: servers.map((s) => cpuOf(s.child.pid)), self: process.cpuUsage() };
    const parts = await run(SECONDS);
    const pg = postgresCpu() - before.pg;
    const node = servers.reduce((n, s, i) => n + cpuOf(s.child.pid) - before.node[i], 0);
    const self = process.cpuUsage(before.self);
    const bench = (self.user + self.system) / 1e6;
    const rps = parts.reduce((n, p) => n + p.requests.average, 0);
    const ops = parts.reduce((n, p) => n + p.requests.total, 0);
    const us = (s) => Math.round((s / Math.max(1, ops)) * 1e6);
    console.log(
      JSON.stringify({
        mode: MODE,
        instances: INSTANCES,
        reqPerSec: Math.round(rps),
        p50ms: Math.max(...parts.map((p) => p.latency.p50)),
        p99ms: Math.max(...parts.map((p) => p.latency.p99)),
        non2xx: parts.reduce((n, p) => n + p.non2xx, 0),
        cpuMicrosecondsPerOperation: { server: us(node), postgres: us(pg), autocannon: us(bench) },
      }),
    );
  } finally {
    for (const s of servers) {
      s.child.kill('SIGTERM');
      await new Promise((resolve) => s.child.once('exit', resolve));
    }
    await db.drop();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
