/* Starts Tollgate as separate processes on a fresh PostgreSQL database and talks to it over HTTP
   and through its command line, as a vendor (or an attacker) would. Needs `npm run build`. */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Client } from 'pg';
import { freePort } from '@tollgate/runtime/testing';

const ROOT = path.join(__dirname, '..', '..');
const SERVER = path.join(ROOT, 'apps/server/dist/main.js');
const CLI = path.join(ROOT, 'packages/cli/dist/bin.js');
const run = promisify(execFile);

export const SECRET = 'adversarial suite secret, not for production';

export function serverUrl(): string {
  const url = process.env.TEST_DATABASE_URL;
  if (!url) throw new Error('the adversarial suite needs TEST_DATABASE_URL (a PostgreSQL server)');
  if (!fs.existsSync(SERVER) || !fs.existsSync(CLI)) throw new Error('run npm run build first');
  return url;
}

/** A new, empty database on the server; `drop()` removes it. */
export async function createDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const admin = serverUrl();
  const name = `tollgate_adv_${randomUUID().replace(/-/g, '').slice(0, 16)}`;
  const c = new Client({ connectionString: admin });
  await c.connect();
  await c.query(`create database ${name}`);
  await c.end();
  const url = new URL(admin);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const d = new Client({ connectionString: admin });
      await d.connect();
      await d.query(`drop database if exists ${name} with (force)`);
      await d.end();
    },
  };
}

/** SQL against the database of a run (for seeding volume and for checking invariants). */
export async function sql<T = Record<string, unknown>>(dbUrl: string, text: string, params: unknown[] = []): Promise<T[]> {
  const c = new Client({ connectionString: dbUrl });
  await c.connect();
  try {
    return (await c.query(text, params)).rows as T[];
  } finally {
    await c.end();
  }
}

export interface Instance {
  url: string;
  process: ChildProcess;
  /** The server's resident memory in bytes (Linux /proc). */
  rss(): number;
  /** SIGTERM and wait. */
  stop(): Promise<void>;
  /** SIGKILL: no shutdown at all. */
  kill(): Promise<void>;
  /** What it wrote to stderr so far (for failure messages). */
  errors(): string;
}

/** One Tollgate server process on the database. */
export async function startInstance(dbUrl: string, env: Record<string, string> = {}): Promise<Instance> {
  // A port found free may be taken by another process before the server binds it: try another.
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOn(await freePort(), dbUrl, env);
    } catch (e) {
      if (attempt === 3 || !/EADDRINUSE|already in use/i.test(String(e))) throw e;
    }
  }
}

async function startOn(port: number, dbUrl: string, env: Record<string, string>): Promise<Instance> {
  let stderr = '';
  const child = spawn(process.execPath, [SERVER], {
    cwd: ROOT,
    env: {
      ...process.env,
      PORT: String(port),
      PUBLIC_URL: `http://127.0.0.1:${port}`,
      DATABASE_URL: dbUrl,
      TOLLGATE_SECRET: SECRET,
      LOG_REQUESTS: 'false',
      RUN_WORKER: 'true',
      WORKER_INTERVAL_MS: '200',
      RATE_LIMIT: 'off',
      // This one test process stands for many clients, all from 127.0.0.1: the per-address cap (256)
      // would cut its bursts of 300 concurrent requests (ECONNRESET, "other side closed").
      HTTP_MAX_CONNECTIONS_PER_ADDRESS: '1000',
      ...env,
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  child.stderr?.on('data', (d) => (stderr += d.toString()));
  const url = `http://127.0.0.1:${port}`;
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  for (const started = Date.now(); ;) {
    if (child.exitCode !== null) throw new Error(`server exited: ${stderr}`);
    try {
      if ((await fetch(`${url}/healthz`)).ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() - started > 60_000) throw new Error(`server did not start: ${stderr}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  const stopWith = async (signal: NodeJS.Signals) => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    await exited;
  };
  return {
    url,
    process: child,
    rss: () => {
      const status = fs.readFileSync(`/proc/${child.pid}/status`, 'utf8');
      return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) * 1024;
    },
    stop: () => stopWith('SIGTERM'),
    kill: () => stopWith('SIGKILL'),
    errors: () => stderr,
  };
}

/** Runs the command line on the database; its stdout. */
export async function cli(dbUrl: string, args: string[]): Promise<string> {
  const { stdout } = await run(process.execPath, [CLI, ...args], {
    cwd: ROOT,
    env: { ...process.env, DATABASE_URL: dbUrl, TOLLGATE_SECRET: SECRET },
  });
  return stdout;
}

export interface Org {
  name: string;
  /** catalog-file keys -> ids, live and test. */
  keys: Record<string, string>;
  testKeys: Record<string, string>;
  /** API keys: full live, full test, read-only live, one without licenses/subscriptions scopes, one revoked. */
  live: string;
  test: string;
  readOnly: string;
  productsOnly: string;
  licensesOnly: string;
  revoked: string;
}

/** An organisation with the sample catalog (live and test) and keys of every kind, made through the CLI. */
export async function seedOrg(dbUrl: string, name: string): Promise<Org> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { sampleCatalog } = require('@tollgate/core/testing') as typeof import('@tollgate/core/testing');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'adv-'));
  const file = (test: boolean) => {
    const f = path.join(dir, `${name}-${test ? 'test' : 'live'}.json`);
    fs.writeFileSync(f, JSON.stringify(sampleCatalog(name, test)));
    return f;
  };
  await cli(dbUrl, ['orgs', 'create', name]);
  const keys = JSON.parse(await cli(dbUrl, ['import', file(false), '--json']));
  const testKeys = JSON.parse(await cli(dbUrl, ['import', file(true), '--json']));
  fs.rmSync(dir, { recursive: true, force: true });
  const key = async (...args: string[]) =>
    JSON.parse(await cli(dbUrl, ['keys', 'create', '--org', name, '--json', ...args])) as { id: string; key: string };
  const revoked = await key();
  await cli(dbUrl, ['keys', 'revoke', revoked.id]);
  return {
    name,
    keys,
    testKeys,
    live: (await key()).key,
    test: (await key('--test')).key,
    readOnly: (await key('--scopes', 'products:read,plans:read,pricing-tables:read,licenses:read')).key,
    productsOnly: (await key('--scopes', 'products:read')).key,
    licensesOnly: (await key('--scopes', 'licenses:read')).key,
    revoked: revoked.key,
  };
}

const repeatable = (method: string, headers: Record<string, string>) =>
  ['GET', 'HEAD', 'OPTIONS'].includes(method.toUpperCase()) || Object.keys(headers).some((h) => h.toLowerCase() === 'idempotency-key');

/** A JSON request; the status, headers and parsed body (or the text when it is not JSON). */
export async function call(
  base: string,
  method: string,
  path: string,
  options: { key?: string; bearer?: string; body?: unknown; raw?: string; headers?: Record<string, string> } = {},
): Promise<{ status: number; body: unknown; text: string; headers: Headers }> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.key !== undefined) headers['x-api-key'] = options.key;
  if (options.bearer !== undefined) headers.authorization = `Bearer ${options.bearer}`;
  let body: string | undefined;
  if (options.raw !== undefined) body = options.raw;
  else if (options.body !== undefined) body = JSON.stringify(options.body);
  if (body !== undefined) headers['content-type'] ??= 'application/json';
  const send = () => fetch(`${base}${path}`, { method, headers, body, redirect: 'manual' });
  let res: Response;
  try {
    res = await send();
  } catch (e) {
    // A kept-alive connection the server closed as idle just as this request reused it (a lagging
    // event loop on a loaded machine): no byte of an answer came, so a request that is safe to
    // repeat is sent once more, on a new connection. Anything else is the test's to see.
    if (!repeatable(method, headers) || (e as { cause?: { code?: unknown } }).cause?.code !== 'UND_ERR_SOCKET') throw e;
    res = await send();
  }
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    // not JSON
  }
  return { status: res.status, body: parsed, text, headers: res.headers };
}

/** Waits for a condition, polling; fails after `ms` (a bound on waiting, not a speed assertion). */
export async function eventually(check: () => Promise<boolean>, ms = 60_000, what = 'condition'): Promise<void> {
  for (const until = Date.now() + ms; ;) {
    if (await check()) return;
    if (Date.now() > until) throw new Error(`${what} not met within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Buys a per-seat plan through the sandbox checkout (link, then pay); the subscription id. */
export async function buySeats(base: string, dbUrl: string, org: Org, quantity: number, grantee: string): Promise<string> {
  const q = `successUrl=https://vendor.example.com/ok&cancelUrl=https://vendor.example.com/no&granteeId=${grantee}&member=buyer@example.com&quantity=${quantity}`;
  const link = await call(base, 'GET', `/plans/${org.keys['plans.notes.business']}/checkoutlink?${q}`, { key: org.live });
  if (link.status !== 200) throw new Error(`checkout link: ${link.status} ${link.text}`);
  const page = new URL((link.body as { checkoutUrl: string }).checkoutUrl).pathname;
  const pay = await fetch(`${base}${page}/pay`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: '',
    redirect: 'manual',
  });
  if (pay.status !== 303) throw new Error(`pay: ${pay.status} ${await pay.text()}`);
  const [row] = await sql<{ subscription_id: string }>(dbUrl, 'select subscription_id from licenses where grantee_id = $1', [grantee]);
  if (!row) throw new Error('the purchase made no license for the grantee');
  return row.subscription_id;
}
