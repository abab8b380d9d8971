import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { DEFAULT_MAX_SEATS, WEBHOOK_MIN_LEASE_MS, WEBHOOK_TIMEOUT_MS } from '@tollgate/core';
import { DEFAULT_HTTP_SERVER_LIMITS, DEFAULT_USAGE_WRITES_PER_MINUTE, type HttpServerLimits } from '@tollgate/http';
import { stripeKeyMode } from '@tollgate/adapter-stripe';
import { LOG_LEVELS, type LogLevel } from './logger';

export interface Config {
  port: number;
  /** Address customers and vendors reach the service at (links, hosted pages). */
  publicUrl: string;
  /** A PostgreSQL server; unset: embedded PGlite in `dataDir`. */
  databaseUrl: string | undefined;
  /** A read replica for the check's snapshot loads (`DATABASE_READ_URL`, optional, server only). */
  databaseReadUrl: string | undefined;
  /**
   * A bearer token `/metrics` requires (`METRICS_TOKEN`); absent: `/metrics` is open (keep it off the
   * public network). Set but blank is refused at start: it would leave `/metrics` open unnoticed.
   */
  metricsToken?: string;
  /** Entitlement snapshots one instance keeps (`CHECK_CACHE_ENTRIES`). */
  checkCacheEntries: number;
  /** Licenses (one per grantee, product and plan) the check's in-memory index may hold (`CHECK_INDEX_MAX_LICENSES`; 0: no index). */
  checkIndexMaxLicenses: number;
  /**
   * How long a revoked key or changed license may still be honoured from memory at most
   * (`CHANGE_FEED_BOUND_MS`): the change feed must prove it is alive within it (heartbeats every
   * fifth of it), and cached keys are re-validated against the database every half of it.
   */
  changeFeedBoundMs: number;
  /** How long checks are answered from memory while the database does not answer (`CHECK_OUTAGE_GRACE_SECONDS`; 0: never). */
  checkOutageGraceSeconds: number;
  dataDir: string;
  signer: 'ecdsa' | 'hmac';
  /** Encrypts signing keys at rest. */
  masterSecret: string;
  /** How often the event worker and the period-end sweep look for work when not woken. */
  workerIntervalMs: number;
  /**
   * How long a shutdown (SIGTERM, SIGINT) may take before the process exits 1 with its log flushed
   * (`SHUTDOWN_TIMEOUT_MS`, 8000: under Docker's 10 s); unset: that default.
   */
  shutdownTimeoutMs?: number;
  /** Run the event worker and sweep in this process. */
  runWorker: boolean;
  /** Deliver webhooks to loopback and private addresses (`WEBHOOK_ALLOW_PRIVATE`). */
  webhookAllowPrivate: boolean;
  /** Days outgoing webhook events are kept once delivered or given up (`WEBHOOK_EVENT_RETENTION_DAYS`). */
  webhookEventRetentionDays: number;
  /** Months of the usage ledger kept (`USAGE_LEDGER_RETENTION_MONTHS`); 0: all. */
  usageLedgerRetentionMonths: number;
  /** Group commit of usage operations (`USAGE_GROUP_COMMIT`, on; off only to benchmark the one-transaction path). */
  usageGroupCommit: boolean;
  /** How old usage waits before the Stripe meter-event relay sums it into events (`USAGE_METER_WINDOW_SECONDS`, 60; 0: no waiting). */
  usageMeterWindowSeconds: number;
  /** How often a usage balance may tell its usage by a `usage.recorded` event (`USAGE_EVENT_WINDOW_SECONDS`, 60; 0: every write). */
  usageEventWindowSeconds: number;
  logRequests: boolean;
  /** pino's level (`LOG_LEVEL`): fatal, error, warn, info, debug, trace or silent. */
  logLevel: LogLevel;
  /**
   * Stripe: with both set, payments go to Stripe instead of the sandbox. The key's prefix tells its
   * mode: a live key bills live mode only (test mode: the test keys below, else the sandbox); a
   * test key alone bills both modes (a staging deployment).
   */
  stripeSecretKey: string | undefined;
  stripeWebhookSecret: string | undefined;
  /** Test mode's own Stripe keys (`STRIPE_TEST_SECRET_KEY`, `STRIPE_TEST_WEBHOOK_SECRET`), beside a live `stripeSecretKey`. */
  stripeTestSecretKey?: string;
  stripeTestWebhookSecret?: string;
  /** Seats one subscription may hold (`MAX_SEATS`). */
  maxSeats: number;
  /** How long a worker holds an event before another may take it over (`EVENT_LEASE_SECONDS`). */
  eventLeaseSeconds: number;
  /** Failed-authentication and write limits per instance (`RATE_LIMIT`, `RATE_LIMIT_AUTH_FAILURES`, `RATE_LIMIT_WRITES`, `RATE_LIMIT_USAGE_WRITES`). */
  rateLimits: {
    enabled: boolean;
    authFailuresPerMinute: number;
    writesPerMinute: number;
    usageWritesPerMinute?: number;
    trustProxy: number;
  };
  /** Webhook POSTs one instance makes at once (`WEBHOOK_CONCURRENCY`). */
  webhookConcurrency: number;
  /** Client timeouts and the per-address connection cap of the HTTP server (`HTTP_*`). */
  http: HttpServerLimits;
}

/** Every bad variable of the environment, one message each (`problems`); the message lists them all. */
export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(problems.join('\n'));
  }
}

/**
 * The configuration from the environment (docs/configuration.md). Every variable is checked and
 * every problem reported at once (a `ConfigError` listing one message per bad variable). PGlite
 * needs nothing: a master secret is generated once and kept in the data directory; with a server
 * the secret must be given, since every instance must share it.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const problems: string[] = [];
  const bad = (message: string) => problems.push(message);
  const text = (name: string): string | undefined => env[name] || undefined;
  const whole = (name: string, fallback: number, min: number, max = Number.MAX_SAFE_INTEGER): number => {
    const raw = env[name];
    if (raw === undefined || raw === '') return fallback;
    const v = Number(raw);
    if (!/^\d+$/.test(raw.trim()) || !Number.isSafeInteger(v) || v < min || v > max) {
      bad(`${name} must be a whole number from ${min}${max === Number.MAX_SAFE_INTEGER ? ' up' : ` to ${max}`}, got ${raw}`);
      return fallback;
    }
    return v;
  };
  const choice = <T extends string>(name: string, allowed: readonly T[], fallback: T): T => {
    const raw = env[name];
    if (raw === undefined || raw === '') return fallback;
    const v = raw.trim().toLowerCase() as T;
    if (!allowed.includes(v)) {
      bad(`${name} must be one of ${allowed.join(', ')}, got ${raw}`);
      return fallback;
    }
    return v;
  };
  const url = (name: string, protocols: string[]): string | undefined => {
    const raw = text(name);
    if (raw === undefined) return undefined;
    try {
      const u = new URL(raw);
      if (!protocols.includes(u.protocol)) throw new Error('protocol');
      return raw;
    } catch {
      bad(`${name} must be a ${protocols.map((p) => p.replace(':', '')).join(' or ')} URL, got ${redactDatabaseUrl(raw)}`);
      return undefined;
    }
  };

  // TRUST_PROXY: how many reverse proxies stand in front (true: one); client addresses come from
  // X-Forwarded-For only then, since any client can write that header.
  const proxies = (): number => {
    const raw = (env.TRUST_PROXY ?? '').trim().toLowerCase();
    if (raw === '' || raw === 'false') return 0;
    if (raw === 'true') return 1;
    if (/^\d+$/.test(raw) && Number(raw) <= 10) return Number(raw);
    bad(`TRUST_PROXY must be true, false or the number of proxies in front (0 to 10), got ${env.TRUST_PROXY}`);
    return 0;
  };
  // EVENT_LEASE_SECONDS: queued seat changes may use a short lease (tests do), webhook deliveries
  // may not (a lease shorter than a POST lets another worker send it again meanwhile): below what
  // a delivery needs, webhooks are leased for that instead, and start-up says so in one line.
  const eventLease = (): number => {
    const seconds = whole('EVENT_LEASE_SECONDS', 120, 1);
    const floor = WEBHOOK_MIN_LEASE_MS / 1000;
    if (seconds < floor)
      process.emitWarning(
        `EVENT_LEASE_SECONDS=${seconds} is below the ${floor} s a webhook delivery needs (its ${WEBHOOK_TIMEOUT_MS / 1000} s timeout and recording): webhook deliveries are leased for ${floor} s, queued seat changes for ${seconds} s`,
        { code: 'TOLLGATE_EVENT_LEASE' },
      );
    return seconds;
  };
  const port = whole('PORT', 3000, 0, 65535);
  // Empty counts as unset, as for every other variable (`path.resolve('')` is the current directory).
  const dataDir = path.resolve(text('DATA_DIR') ?? './data');
  const databaseUrl = url('DATABASE_URL', ['postgres:', 'postgresql:']);
  const databaseReadUrl = url('DATABASE_READ_URL', ['postgres:', 'postgresql:']);
  if (databaseReadUrl && !env.DATABASE_URL) bad('DATABASE_READ_URL needs DATABASE_URL (a replica of that server)');
  const publicUrl = (url('PUBLIC_URL', ['http:', 'https:']) ?? `http://localhost:${port}`).replace(/\/$/, '');
  const signer = choice('SIGNER', ['ecdsa', 'hmac'] as const, 'ecdsa');
  const logLevel = choice('LOG_LEVEL', LOG_LEVELS, 'info');
  const flag = (name: string, fallback: boolean) => choice(name, ['true', 'false'] as const, fallback ? 'true' : 'false') === 'true';
  const rateLimit = choice('RATE_LIMIT', ['on', 'off'] as const, 'on');
  // Other empty variables count as unset, which fails closed (no Stripe: the sandbox; no secret: one
  // generated, or refused with DATABASE_URL). An unset METRICS_TOKEN leaves /metrics open, so a set
  // but blank one (`METRICS_TOKEN=` of a secret that did not arrive) is a mistake to stop at.
  if (env.METRICS_TOKEN !== undefined && env.METRICS_TOKEN.trim() === '')
    bad('METRICS_TOKEN is set but blank, which would leave /metrics open: give it a token, or leave it unset for an open /metrics');
  const masterSecret = text('TOLLGATE_SECRET');
  if (masterSecret !== undefined && masterSecret.length < MIN_SECRET_LENGTH)
    bad(`TOLLGATE_SECRET must be at least ${MIN_SECRET_LENGTH} characters`);
  if (!masterSecret && env.DATABASE_URL)
    bad('TOLLGATE_SECRET is required with DATABASE_URL (every instance must share it; at least 16 characters)');
  if (!!env.STRIPE_SECRET_KEY !== !!env.STRIPE_WEBHOOK_SECRET)
    bad('set both STRIPE_SECRET_KEY and STRIPE_WEBHOOK_SECRET to use Stripe (or neither for the sandbox)');
  // The key's mode decides which tenants it bills: it must say it (a test-mode tenant never reaches a live key).
  const stripeMode = env.STRIPE_SECRET_KEY ? stripeKeyMode(env.STRIPE_SECRET_KEY) : undefined;
  if (env.STRIPE_SECRET_KEY && !stripeMode)
    bad('STRIPE_SECRET_KEY must be a Stripe secret or restricted key (sk_live_, sk_test_, rk_live_ or rk_test_)');
  if (!!env.STRIPE_TEST_SECRET_KEY !== !!env.STRIPE_TEST_WEBHOOK_SECRET)
    bad('set both STRIPE_TEST_SECRET_KEY and STRIPE_TEST_WEBHOOK_SECRET to give test mode its own Stripe keys (or neither)');
  if (env.STRIPE_TEST_SECRET_KEY) {
    if (stripeKeyMode(env.STRIPE_TEST_SECRET_KEY) !== 'test') bad('STRIPE_TEST_SECRET_KEY must be a test-mode key (sk_test_ or rk_test_)');
    if (stripeMode !== 'live')
      bad('STRIPE_TEST_SECRET_KEY goes beside a live STRIPE_SECRET_KEY (a test STRIPE_SECRET_KEY alone bills both modes)');
  }
  const config = {
    port,
    publicUrl,
    databaseUrl,
    databaseReadUrl,
    checkCacheEntries: whole('CHECK_CACHE_ENTRIES', 200_000, 1),
    checkIndexMaxLicenses: whole('CHECK_INDEX_MAX_LICENSES', 1_000_000, 0),
    changeFeedBoundMs: whole('CHANGE_FEED_BOUND_MS', 1000, 100, 60_000),
    checkOutageGraceSeconds: whole('CHECK_OUTAGE_GRACE_SECONDS', 60, 0, 86_400),
    metricsToken: text('METRICS_TOKEN'),
    dataDir,
    signer,
    masterSecret: '',
    workerIntervalMs: whole('WORKER_INTERVAL_MS', 1000, 10),
    shutdownTimeoutMs: whole('SHUTDOWN_TIMEOUT_MS', 8000, 100, 3_600_000),
    runWorker: flag('RUN_WORKER', true),
    webhookAllowPrivate: flag('WEBHOOK_ALLOW_PRIVATE', false),
    webhookEventRetentionDays: whole('WEBHOOK_EVENT_RETENTION_DAYS', 30, 1, 3650),
    usageLedgerRetentionMonths: whole('USAGE_LEDGER_RETENTION_MONTHS', 0, 0, 1200),
    usageGroupCommit: choice('USAGE_GROUP_COMMIT', ['on', 'off'] as const, 'on') === 'on',
    usageMeterWindowSeconds: whole('USAGE_METER_WINDOW_SECONDS', 60, 0, 3600),
    usageEventWindowSeconds: whole('USAGE_EVENT_WINDOW_SECONDS', 60, 0, 3600),
    webhookConcurrency: whole('WEBHOOK_CONCURRENCY', 16, 1, 256),
    logRequests: flag('LOG_REQUESTS', true),
    logLevel,
    stripeSecretKey: text('STRIPE_SECRET_KEY'),
    stripeWebhookSecret: text('STRIPE_WEBHOOK_SECRET'),
    stripeTestSecretKey: text('STRIPE_TEST_SECRET_KEY'),
    stripeTestWebhookSecret: text('STRIPE_TEST_WEBHOOK_SECRET'),
    maxSeats: whole('MAX_SEATS', DEFAULT_MAX_SEATS, 1, 1_000_000),
    eventLeaseSeconds: eventLease(),
    rateLimits: {
      enabled: rateLimit === 'on',
      authFailuresPerMinute: whole('RATE_LIMIT_AUTH_FAILURES', 30, 1),
      writesPerMinute: whole('RATE_LIMIT_WRITES', 1200, 1),
      usageWritesPerMinute: whole('RATE_LIMIT_USAGE_WRITES', DEFAULT_USAGE_WRITES_PER_MINUTE, 1),
      trustProxy: proxies(),
    },
    http: {
      ...DEFAULT_HTTP_SERVER_LIMITS,
      headersTimeoutMs: whole('HTTP_HEADERS_TIMEOUT_MS', DEFAULT_HTTP_SERVER_LIMITS.headersTimeoutMs, 1000),
      requestTimeoutMs: whole('HTTP_REQUEST_TIMEOUT_MS', DEFAULT_HTTP_SERVER_LIMITS.requestTimeoutMs, 1000),
      idleTimeoutMs: whole('HTTP_IDLE_TIMEOUT_MS', DEFAULT_HTTP_SERVER_LIMITS.idleTimeoutMs, 1000),
      maxConnectionsPerAddress: whole('HTTP_MAX_CONNECTIONS_PER_ADDRESS', DEFAULT_HTTP_SERVER_LIMITS.maxConnectionsPerAddress, 0),
    },
  } satisfies Config;
  if (problems.length) throw new ConfigError(problems);
  // Only a valid configuration touches the disk (the embedded database's generated secret).
  config.masterSecret = masterSecret ?? persistedSecret(dataDir);
  return config;
}

/** A generated master secret: 32 random bytes, 64 hex characters. */
const SECRET_BYTES = 32;
/** The shortest master secret taken, given (`TOLLGATE_SECRET`) or stored (`DATA_DIR/secret`). */
const MIN_SECRET_LENGTH = 16;

/**
 * The embedded database's master secret, kept in `DATA_DIR/secret`: read, or generated once. The
 * new secret is written whole to a file of its own, flushed to the disk, and then linked into place
 * (the directory flushed after), which fails if the file is there: a write that fails half-way (a
 * full disk) or a power cut leaves no short secret behind, and of two processes starting on a fresh
 * directory the second reads the first's instead of writing its own over it. A stored secret
 * shorter than a secret may be (an empty file) is refused, never used; one written this instant (by
 * a process beside this one, on a file system without hard links) is read again for a second first.
 */
function persistedSecret(dataDir: string): string {
  const file = path.join(dataDir, 'secret');
  ensureDataDir(dataDir);
  removeAbandonedTemps(dataDir);
  let stored = readSecret(dataDir, file);
  let lost = false;
  if (stored === undefined) {
    lost = !createSecret(dataDir, file);
    stored = readSecret(dataDir, file);
  }
  // Another process's secret being written in place (no hard links): it is whole within moments.
  for (const until = Date.now() + SECRET_WRITE_WAIT_MS; isShort(stored) && (lost || isFresh(file)) && Date.now() < until;) {
    sleepSync(20);
    stored = readSecret(dataDir, file);
  }
  if (stored === undefined) throw dataDirError(dataDir, `cannot read ${file}`, 'it was removed as it was made');
  if (stored.length < MIN_SECRET_LENGTH)
    throw dataDirError(
      dataDir,
      `${file} holds ${stored ? `only ${stored.length} characters` : 'nothing'}, not a master secret (${MIN_SECRET_LENGTH} at least)`,
      'restore it from a backup, or set TOLLGATE_SECRET; if no database was started in this directory, delete the file and a new secret is made',
    );
  return stored;
}

/** How long a short stored secret that may be being written is read again before it is refused. */
const SECRET_WRITE_WAIT_MS = 1000;
/** A temporary secret file older than this was left by a process that died (a kill, a power cut). */
const ABANDONED_TEMP_MS = 60_000;
/** `secret.<pid>.<random>.new`: the temporary files `createSecret` makes, and nothing else. */
const SECRET_TEMP = /^secret\.\d+\.[0-9a-f]{8}\.new$/;

const isShort = (stored: string | undefined): stored is string => stored !== undefined && stored.length < MIN_SECRET_LENGTH;

/** Whether `file` was changed within the last couple of seconds (a write may be under way). */
function isFresh(file: string): boolean {
  try {
    return Math.abs(Date.now() - fs.statSync(file).mtimeMs) < 2 * SECRET_WRITE_WAIT_MS;
  } catch {
    return false;
  }
}

/** Blocks the thread for `ms` (start-up only: waiting for another process's file write). */
export function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/**
 * Removes the temporary secret files a process killed between writing and removing one left in
 * `DATA_DIR` (only `secret.<pid>.<random>.new`, only older than a minute: a live process's lasts
 * moments). Best effort: one that cannot be removed is left.
 */
function removeAbandonedTemps(dataDir: string): void {
  let names: string[];
  try {
    names = fs.readdirSync(dataDir);
  } catch {
    return;
  }
  for (const name of names) {
    if (!SECRET_TEMP.test(name)) continue;
    const temp = path.join(dataDir, name);
    try {
      const stat = fs.lstatSync(temp);
      if (stat.isFile() && Date.now() - stat.mtimeMs > ABANDONED_TEMP_MS) fs.rmSync(temp);
    } catch {
      // Removed meanwhile (another process starting beside this one), or not removable: left.
    }
  }
}

/** The stored secret, trimmed; undefined when there is no file. */
function readSecret(dataDir: string, file: string): string | undefined {
  try {
    return fs.readFileSync(file, 'utf8').trim();
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw dataDirError(dataDir, `cannot read ${file}`, e);
  }
}

/**
 * Puts a new secret in `file` unless one is there (made meanwhile by another process: kept).
 * Returns whether this process made it.
 */
function createSecret(dataDir: string, file: string): boolean {
  const secret = randomBytes(SECRET_BYTES).toString('hex');
  const temp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.new`;
  const code = (e: unknown) => (e as NodeJS.ErrnoException).code;
  try {
    writeDurably(temp, secret);
    try {
      fs.linkSync(temp, file);
    } catch (e) {
      if (code(e) === 'EEXIST') return false;
      // A file system without hard links: the exclusive write itself (removed again if it fails).
      if (!['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS'].includes(code(e) ?? '')) throw e;
      if (!writeExclusively(file, secret)) return false;
    }
    syncDirectory(dataDir);
    return true;
  } catch (e) {
    throw dataDirError(dataDir, `cannot write ${file}`, e);
  } finally {
    fs.rmSync(temp, { force: true });
  }
}

/** Writes `secret` to the new file `file` (`wx`, 0600), flushed to the disk before it is closed. */
function writeDurably(file: string, secret: string): void {
  writeAndClose(fs.openSync(file, 'wx', 0o600), secret);
}

function writeAndClose(fd: number, secret: string): void {
  try {
    const bytes = Buffer.from(secret);
    for (let at = 0; at < bytes.length;) at += fs.writeSync(fd, bytes, at, bytes.length - at);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/** `writeDurably` in place: false when the file is there (another process's); removed if the write fails. */
function writeExclusively(file: string, secret: string): boolean {
  let fd: number;
  try {
    fd = fs.openSync(file, 'wx', 0o600);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw e;
  }
  try {
    writeAndClose(fd, secret);
  } catch (e) {
    fs.rmSync(file, { force: true });
    throw e;
  }
  return true;
}

/**
 * Flushes a directory's entries (a file just linked into it) to the disk. Best effort: where a
 * directory cannot be opened or flushed (Windows, some file systems) the file's own flush is all.
 */
function syncDirectory(dir: string): void {
  let fd: number;
  try {
    fd = fs.openSync(dir, 'r');
  } catch {
    return;
  }
  try {
    fs.fsyncSync(fd);
  } catch {
    // EINVAL/EISDIR/EPERM: a directory that cannot be flushed.
  } finally {
    fs.closeSync(fd);
  }
}

/** What an errno means to the person who chose `DATA_DIR`. */
const DIR_ERRORS: Record<string, string> = {
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  EROFS: 'the file system is read-only',
  ENOSPC: 'no space left on the device',
  EDQUOT: 'the disk quota is used up',
  ENOENT: 'the file system does not allow a directory there',
  ENOTDIR: 'a part of the path is a file, not a directory',
  EISDIR: 'it is a directory',
  ELOOP: 'too many symbolic links',
  ENAMETOOLONG: 'the path is too long',
};

/** `DATA_DIR` cannot be used: one line naming the variable, what failed and why (never the raw errno alone). */
export function dataDirError(dataDir: string, what: string, e: unknown): ConfigError {
  const code = (e as NodeJS.ErrnoException | undefined)?.code;
  const why = (code && DIR_ERRORS[code]) ?? String((e as Error | undefined)?.message ?? e).split('\n')[0];
  return new ConfigError([`DATA_DIR ${dataDir} cannot be used: ${what}: ${why}${code ? ` (${code})` : ''}`]);
}

/**
 * Makes the embedded database's directory (`DATA_DIR`) and any missing parent, one level at a
 * time: Node's recursive mkdir never returns under `/proc` (it retries the ENOENT there forever).
 * A path that cannot be a directory (a file, a symbolic link to nothing) is a `ConfigError` naming
 * `DATA_DIR`.
 */
export function ensureDataDir(dataDir: string): void {
  const missing: string[] = [];
  for (let at = path.resolve(dataDir); ;) {
    let stat: fs.Stats;
    try {
      stat = fs.statSync(at);
    } catch (e) {
      const parent = path.dirname(at);
      // ENOTDIR: a file on the way up, which the walk reaches and names.
      const code = (e as NodeJS.ErrnoException).code;
      if ((code !== 'ENOENT' && code !== 'ENOTDIR') || parent === at) throw dataDirError(dataDir, `cannot look at ${at}`, e);
      // A symbolic link whose target does not exist: there is something there, which no mkdir replaces.
      const target = danglingLink(at);
      if (target !== undefined)
        throw new ConfigError([`DATA_DIR ${dataDir} cannot be used: ${at} is a symbolic link to nothing (${target} does not exist)`]);
      missing.unshift(at);
      at = parent;
      continue;
    }
    if (!stat.isDirectory()) throw new ConfigError([`DATA_DIR ${dataDir} cannot be used: ${at} is a file, not a directory`]);
    break;
  }
  for (const dir of missing) {
    try {
      fs.mkdirSync(dir);
    } catch (e) {
      // Made meanwhile by another process starting beside this one: as good.
      if ((e as NodeJS.ErrnoException).code === 'EEXIST' && isDirectory(dir)) continue;
      throw dataDirError(dataDir, `cannot create ${dir}`, e);
    }
  }
}

/** Where the symbolic link `at` points, when that does not exist; undefined for anything else. */
function danglingLink(at: string): string | undefined {
  try {
    return fs.lstatSync(at).isSymbolicLink() ? fs.readlinkSync(at) : undefined;
  } catch {
    return undefined;
  }
}

const isDirectory = (at: string): boolean => {
  try {
    return fs.statSync(at).isDirectory();
  } catch {
    return false;
  }
};

/** `host`, `host:5432`, `[::1]:5432`, `h1:5432,h2:5433`: an authority without a user part. */
const HOSTS_AND_PORTS = /^(?:\[[^\]]*\]|[^:,[\]]*)(?::\d*)?(?:,(?:\[[^\]]*\]|[^:,[\]]*)(?::\d*)?)*$/;

/**
 * A database URL to show (which database a command used, a URL refused at start): the password
 * masked, the rest as given. Read as text, not parsed: a password holding `/`, `?`, `#` or `@` ends
 * a URL parser's user part early (or makes the URL not parse), so everything from `//` to the last
 * `@` is the user part here, and all of it after the first `:` is masked (all of it, if the user
 * does not look like one). Without an `@`, whatever follows the first `:` is masked unless the part
 * before the path is hosts and ports (`host:5432`, `h1:5432,h2:5433`, `[::1]:5432`): `user:secret`
 * alone is a password. Query and fragment parameters named like a password (`pass`, `pwd`; after
 * `?`, `&`, `#` or `;`) are masked up to the next `&` (a `#` in the value is the value's). A value without `scheme://` is not shown at all.
 */
export function redactDatabaseUrl(raw: string): string {
  const scheme = /^[a-z][a-z0-9+.-]*:\/\//i.exec(raw)?.[0];
  if (!scheme) return '(not shown: not a URL, and it may hold a password)';
  let rest = raw.slice(scheme.length);
  const at = rest.lastIndexOf('@');
  const colon = rest.slice(0, Math.max(at, 0)).indexOf(':');
  if (at >= 0 && colon >= 0) {
    const user = rest.slice(0, colon);
    rest = `${/^[^/?#]*$/.test(user) ? `${user}:` : ''}***${rest.slice(at)}`;
  } else if (at < 0 && !HOSTS_AND_PORTS.test(/^[^/?#]*/.exec(rest)?.[0] ?? '')) {
    const first = rest.indexOf(':');
    if (first >= 0) rest = `${rest.slice(0, first + 1)}***`;
  }
  return scheme + rest.replace(/([?&#;][^=&#;]*(?:pass|pwd)[^=&#;]*=)[^&]*/gi, '$1***');
}
