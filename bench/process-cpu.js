// Helpers of the CPU-per-operation scripts (bench/usage-cpu.js, bench/usage-inproc.js,
// bench/check-cpu.js): a free port to start a server on, CPU times read from Linux /proc, and a fresh
// database on the benchmarks' PostgreSQL server (BENCH_DATABASE_URL).
const fs = require('node:fs');
const net = require('node:net');
const { Client } = require('pg');

const SERVER_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/** Runs one statement on the server's maintenance database, or on the database at `on`. */
async function admin(sql, on = SERVER_URL) {
  const c = new Client({ connectionString: on });
  await c.connect();
  try {
    return await c.query(sql);
  } finally {
    await c.end();
  }
}

/** The database `name`, dropped if it was there and created empty: its URL, and `drop()`. */
async function freshDatabase(name) {
  await admin(`drop database if exists ${name} with (force)`);
  await admin(`create database ${name}`);
  const url = new URL(SERVER_URL);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => admin(`drop database if exists ${name} with (force)`) };
}

/** A TCP port free on 127.0.0.1 now (another process may still take it before the server binds it). */
const freePort = () =>
  new Promise((resolve) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });

/** utime + stime of a process, in seconds (Linux /proc). */
function cpuOf(pid) {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) / 100;
}

/** CPU seconds of every PostgreSQL process on this machine (run the script alone). */
function postgresCpu() {
  let total = 0;
  for (const pid of fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
      if (stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')).startsWith('postgres')) total += cpuOf(pid);
    } catch {
      // gone meanwhile
    }
  }
  return total;
}

module.exports = { freePort, cpuOf, postgresCpu, admin, freshDatabase, SERVER_URL };
