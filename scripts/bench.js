#!/usr/bin/env node
// Benchmark of the hot path: GET /licenses/check over loopback HTTP, on embedded PGlite (default)
// or a PostgreSQL server (BENCH_DATABASE_URL, a server URL whose database the run may create).
// Bounded: BENCH_REQUESTS requests (default 3000) at BENCH_CONCURRENCY (default 8), then it stops.
//   npm run bench
const http = require('node:http');
const { performance } = require('node:perf_hooks');

async function main() {
  const { createTestDatabase } = require('@tollgate/adapter-postgres');
  const { createContainer, TOKENS } = require('@tollgate/runtime');
  const { testConfig, seedOrganisation, purchase } = require('@tollgate/runtime/testing');
  const { createServerApp } = require('@tollgate/app-server');

  const total = Number(process.env.BENCH_REQUESTS ?? 3000);
  const concurrency = Number(process.env.BENCH_CONCURRENCY ?? 8);
  const grantees = Number(process.env.BENCH_GRANTEES ?? 200);
  if (process.env.BENCH_DATABASE_URL) process.env.TEST_DATABASE_URL = process.env.BENCH_DATABASE_URL;
  const kind = process.env.BENCH_DATABASE_URL ? 'postgres' : 'pglite';

  const db = await createTestDatabase(kind, { poolSize: concurrency + 2 });
  const silent = {
    info() {},
    error(m, f) {
      console.error(m, f);
    },
  };
  const container = await createContainer(testConfig(), { database: db, logger: silent });
  const org = await seedOrganisation(container, 'bench');
  for (let i = 0; i < grantees; i++)
    await purchase(container, org.keys[i % 2 ? 'plans.notes.team' : 'plans.notes.business'], `user-${i}`, 2);

  const server = http.createServer(createServerApp(container));
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address();
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
  const product = org.keys['products.notes'];
  const get = (i) =>
    new Promise((resolve, reject) => {
      const started = performance.now();
      const req = http.get(
        {
          host: '127.0.0.1',
          port,
          agent,
          path: `/licenses/check?productUuid=${product}&granteeIds=user-${i % grantees},nobody`,
          headers: { 'x-api-key': org.readOnlyKey },
        },
        (res) => {
          res.resume();
          res.on('end', () =>
            res.statusCode === 200 ? resolve(performance.now() - started) : reject(new Error(`status ${res.statusCode}`)),
          );
        },
      );
      req.on('error', reject);
    });

  for (let i = 0; i < 100; i++) await get(i); // warm-up
  const latencies = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < total) latencies.push(await get(next++));
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  const pct = (p) => latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))].toFixed(2);
  const result = {
    benchmark: 'GET /licenses/check',
    database: kind,
    requests: latencies.length,
    concurrency,
    grantees,
    requestsPerSecond: Math.round(latencies.length / seconds),
    p50ms: Number(pct(50)),
    p95ms: Number(pct(95)),
    p99ms: Number(pct(99)),
    rssMiB: Math.round(process.memoryUsage().rss / 1048576),
  };
  console.log(JSON.stringify(result));
  console.log(
    `${result.benchmark} on ${kind}: ${result.requestsPerSecond} req/s, p50 ${result.p50ms} ms, p95 ${result.p95ms} ms, p99 ${result.p99ms} ms, RSS ${result.rssMiB} MiB`,
  );
  agent.destroy();
  await new Promise((r) => server.close(r));
  await db.drop();
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(e);
    process.exit(1);
  },
);
