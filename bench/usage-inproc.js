#!/usr/bin/env node
// CPU per consume without HTTP (docs/scaling.md): `node bench/usage-inproc.js [hot|spread]` seeds a
// fresh database as the usage rows do (bench/usage.js), builds the runtime in this process (as the
// server does, without its HTTP server) and calls `core.usage.consume` from 50 callers at once for
// BENCH_SECONDS (default 10), after a 3 s warm-up. It prints the operations a second and the CPU this
// process and PostgreSQL (every postgres process on the machine: run it alone) used per operation.
// Beside `node bench/usage-cpu.js spread 1` it splits a consume's server CPU into the usage path
// (group commit, PostgreSQL protocol) and the HTTP around it.
const { createRuntime, loadConfig } = require('@tollgate/runtime');
const { seedUsage } = require('./usage');
const { postgresCpu, admin, freshDatabase } = require('./process-cpu');

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const MODE = process.argv[2] ?? 'spread';
const CALLERS = 50;
const DB = 'bench_usage_inproc';

async function main() {
  const db = await freshDatabase(DB);
  const env = { DATABASE_URL: db.url, TOLLGATE_SECRET: 'benchmark master secret, not for production' };
  let runtime;
  try {
    const { org } = await seedUsage(env, console.error);
    await admin('analyze', db.url);
    runtime = await createRuntime(loadConfig({ ...env, RUN_WORKER: 'false', LOG_REQUESTS: 'false', RATE_LIMIT: 'off' }), {
      logger: { info() {}, error: (m, f) => console.error(m, f) },
    });
    const { usage } = runtime.core;
    const owner = () => (MODE === 'hot' ? 'hot' : `owner-${Math.floor(Math.random() * 10_000)}`);
    const run = async (seconds) => {
      let ops = 0;
      const end = Date.now() + seconds * 1000;
      await Promise.all(
        Array.from({ length: CALLERS }, async () => {
          for (; Date.now() < end; ops++) await usage.consume(org.tenant, { owner: owner(), meterSlug: 'tokens', quantity: 1 });
        }),
      );
      return ops;
    };
    await run(3);
    console.error(`measuring for ${SECONDS} s`);
    const before = { self: process.cpuUsage(), pg: postgresCpu() };
    const ops = await run(SECONDS);
    const self = process.cpuUsage(before.self);
    const pg = postgresCpu() - before.pg;
    console.log(
      JSON.stringify({
        mode: MODE,
        opsPerSec: Math.round(ops / SECONDS),
        cpuMicrosecondsPerOperation: { process: Math.round((self.user + self.system) / ops), postgres: Math.round((pg * 1e6) / ops) },
      }),
    );
  } finally {
    await runtime?.close();
    await db.drop();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
