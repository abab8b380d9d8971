import type { IncomingMessage, ServerResponse } from 'node:http';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { CacheStats, MeterRelayStats } from '@tollgate/core';
import type { CheckFastPathStats } from './check';

/** Where the metrics read what they report (DESIGN section 13). */
export interface MetricSources {
  checkCache(): CacheStats;
  /** The check's fast path (the combined server); absent: no fast path in this app. */
  fastPath?(): CheckFastPathStats;
  /** The usage consume/record fast path (the combined server); absent: none in this app. */
  usageFastPath?(): CheckFastPathStats;
  /** Unfinished events (seat changes) of every organisation (a database read: see DATABASE_READ_DEADLINE_MS). */
  eventQueue?(): Promise<{ queued: number; pending: number }>;
  /** Webhook deliveries not yet done (pending, retrying included; a database read). */
  webhookQueue?(): Promise<number>;
  /** Connections of the database pool (server only). */
  pool?(): { total: number; idle: number; waiting: number };
  /** The usage meter-event relay of this process (absent: the payment provider takes no meter events). */
  meterRelay?(): MeterRelayStats;
  /** Log lines this process dropped because stdout's reader fell behind (absent: a logger that never drops). */
  logLinesDropped?(): number;
}

/**
 * How long a scrape waits for one database read (the queue depths) before it reports what it
 * last read: a database that refuses or hangs never fails nor stalls the scrape (Prometheus'
 * default scrape timeout is 10 s; the pool waits 10 s for a connection), so the process's other
 * metrics (the check cache's liveness, the pool, the process) stay visible during an outage.
 */
export const DATABASE_READ_DEADLINE_MS = 1_000;

/** Request latency buckets (seconds): up to 15 s, since a request can wait 10 s for a pool connection. */
export const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15];

/**
 * One database read of the scrape, with a deadline: the last value it answered is kept when it
 * fails or does not answer in time. At most one read is under way: a scrape while the previous
 * read still hangs (past its deadline) starts no other one, so a hung database does not collect
 * a query per scrape in the pool.
 */
class DatabaseRead<T> {
  last: T | undefined;
  private pending: Promise<boolean> | undefined;

  constructor(
    private readonly read: () => Promise<T>,
    private readonly deadlineMs: number,
  ) {}

  /** Reads (or joins the read under way): true when it answered within the deadline. */
  async refresh(): Promise<boolean> {
    if (!this.pending) {
      let started: Promise<T>;
      try {
        started = this.read();
      } catch (e) {
        started = Promise.reject(e);
      }
      this.pending = started.then(
        (v) => {
          this.last = v;
          return true;
        },
        () => false,
      );
      void this.pending.then(() => (this.pending = undefined));
    }
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), this.deadlineMs)));
    try {
      return await Promise.race([this.pending, late]);
    } finally {
      clearTimeout(timer);
    }
  }
}

/**
 * The process's Prometheus metrics (prom-client): requests by route and status, their latency,
 * the check's cache and fast path, the database pool, and Node's own process metrics. Each server
 * app has its own registry, so tests and several apps in one process never share counters.
 */
export class ServerMetrics {
  readonly registry = new Registry();
  private readonly requests: Counter<'method' | 'route' | 'status'>;
  private readonly latency: Histogram<'method' | 'route'>;

  constructor(sources: MetricSources, options: { databaseDeadlineMs?: number } = {}) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });
    // The pool first: a scrape collects every metric at once, in the order they were registered,
    // and the queue depths' reads below take pool connections; read after them, the pool would
    // show the scrape's own reads as clients waiting.
    if (sources.pool) {
      const pool = sources.pool;
      new Gauge({
        name: 'tollgate_db_pool_connections',
        help: "Database pool connections by state (total, idle, waiting clients), read before the scrape's own database reads",
        labelNames: ['state'],
        registers,
        collect() {
          const p = pool();
          this.set({ state: 'total' }, p.total);
          this.set({ state: 'idle' }, p.idle);
          this.set({ state: 'waiting' }, p.waiting);
        },
      });
    }
    this.requests = new Counter({
      name: 'tollgate_http_requests_total',
      help: 'HTTP requests answered, by route (the declared path) and status',
      labelNames: ['method', 'route', 'status'],
      registers,
    });
    this.latency = new Histogram({
      name: 'tollgate_http_request_duration_seconds',
      help: 'Time from request to the end of the answer, by route',
      labelNames: ['method', 'route'],
      buckets: LATENCY_BUCKETS,
      registers,
    });
    const cache = (name: string, help: string, read: (s: CacheStats) => number) =>
      new Gauge({
        name,
        help,
        registers,
        collect() {
          this.set(read(sources.checkCache()));
        },
      });
    cache('tollgate_check_cache_hits', 'Entitlement snapshots answered from memory since the start', (s) => s.hits);
    cache('tollgate_check_cache_misses', 'Entitlement snapshots loaded from the database since the start', (s) => s.misses);
    cache('tollgate_check_cache_entries', 'Entitlement snapshots held now', (s) => s.entries);
    cache(
      'tollgate_check_index_licenses',
      "Licenses (one per grantee, product and plan) the check's in-memory index holds now",
      (s) => s.indexedLicenses,
    );
    cache(
      'tollgate_check_index_in_use',
      "1 while the check's in-memory index answers (filled, within CHECK_INDEX_MAX_LICENSES), 0 while the LRU does",
      (s) => (s.indexed ? 1 : 0),
    );
    cache('tollgate_check_cache_live', '1 while the change feed is listening (caches trusted), 0 while checks read the database', (s) =>
      s.live ? 1 : 0,
    );
    cache(
      'tollgate_check_answered_from_memory',
      'Checks answered from memory while the database did not answer (the outage grace), since the start',
      (s) => s.fromMemory,
    );
    const fastPath = sources.fastPath;
    if (fastPath)
      new Gauge({
        name: 'tollgate_check_fast_path',
        help: 'Checks the fast path answered itself (served) or left to the routers (passed), since the start',
        labelNames: ['outcome'],
        registers,
        collect() {
          const s = fastPath();
          this.set({ outcome: 'served' }, s.served);
          this.set({ outcome: 'passed' }, s.passed);
        },
      });
    const usageFastPath = sources.usageFastPath;
    if (usageFastPath)
      new Gauge({
        name: 'tollgate_usage_fast_path',
        help: 'Usage consumes and records the fast path answered itself (served) or left to the routers (passed), since the start',
        labelNames: ['outcome'],
        registers,
        collect() {
          const s = usageFastPath();
          this.set({ outcome: 'served' }, s.served);
          this.set({ outcome: 'passed' }, s.passed);
        },
      });
    // The database reads of a scrape: each with a deadline, keeping its last value when it fails.
    const deadlineMs = options.databaseDeadlineMs ?? DATABASE_READ_DEADLINE_MS;
    const events = sources.eventQueue && new DatabaseRead(sources.eventQueue, deadlineMs);
    const webhooks = sources.webhookQueue && new DatabaseRead(sources.webhookQueue, deadlineMs);
    const reads = [events, webhooks].filter((r) => r !== undefined);
    if (events) {
      new Gauge({
        name: 'tollgate_events_open',
        help: 'Accepted changes (seat events) not yet applied, by status (queued: not tried yet; pending: retrying); the last value read while tollgate_db_up is 0',
        labelNames: ['status'],
        registers,
        async collect() {
          await events.refresh();
          if (!events.last) return;
          this.set({ status: 'queued' }, events.last.queued);
          this.set({ status: 'pending' }, events.last.pending);
        },
      });
    }
    if (webhooks) {
      new Gauge({
        name: 'tollgate_webhook_deliveries_pending',
        help: 'Webhook deliveries not yet delivered or given up (first tries and retries); the last value read while tollgate_db_up is 0',
        registers,
        async collect() {
          await webhooks.refresh();
          if (webhooks.last !== undefined) this.set(webhooks.last);
        },
      });
    }
    if (reads.length)
      new Gauge({
        name: 'tollgate_db_up',
        help: `1 when the database answered this scrape's reads within ${deadlineMs} ms, 0 when it refused or did not answer in time (down, hung, or every pool connection in use)`,
        registers,
        async collect() {
          // Joins the reads the gauges above started for this scrape (or starts them).
          const answered = await Promise.all(reads.map((r) => r.refresh()));
          this.set(answered.every(Boolean) ? 1 : 0);
        },
      });
    if (sources.logLinesDropped) {
      const droppedLines = sources.logLinesDropped;
      new Counter({
        name: 'tollgate_log_lines_dropped_total',
        help: "Log lines dropped because stdout's reader fell more than 8 MiB behind (alert above 0: the log pipeline is too slow)",
        registers,
        collect() {
          this.reset();
          this.inc(droppedLines());
        },
      });
    }
    if (sources.meterRelay) {
      const relay = sources.meterRelay;
      new Gauge({
        name: 'tollgate_usage_meter_events',
        help: 'Usage meter events since the start, by outcome (sent: the provider took it; retried: a retryable failure stopped a pass; refused: refused for good, kept in usage_meter_event_failures)',
        labelNames: ['outcome'],
        registers,
        collect() {
          const s = relay();
          this.set({ outcome: 'sent' }, s.sent);
          this.set({ outcome: 'retried' }, s.retried);
          this.set({ outcome: 'refused' }, s.refused);
        },
      });
      new Gauge({
        name: 'tollgate_usage_meter_relay_lag_seconds',
        help: 'Age of the oldest usage not yet sent as a meter event, at the end of the last relay pass of this instance (0: caught up)',
        registers,
        collect() {
          this.set(relay().lagSeconds);
        },
      });
      new Gauge({
        name: 'tollgate_usage_meter_relay_failing',
        help: 'Retryable meter-event failures in a row (0: healthy; the relay backs off 1 s doubling to 5 min)',
        registers,
        collect() {
          this.set(relay().failingFor);
        },
      });
    }
  }

  /** Counts the request when its answer is finished; `route` is read then (express sets it while routing). */
  observe(req: IncomingMessage, res: ServerResponse, fixedRoute?: string): void {
    // A number, not prom-client's timer (a closure, an hrtime pair and a merged label object per request).
    const start = performance.now();
    res.once('finish', () => {
      const route = fixedRoute ?? routeOf(req);
      const method = req.method ?? 'GET';
      this.latency.observe({ method, route }, (performance.now() - start) / 1000);
      this.requests.inc({ method, route, status: String(res.statusCode) });
    });
  }
}

/** The declared path of the route that answered (never the raw path: ids would explode the label set). */
function routeOf(req: IncomingMessage): string {
  const r = (req as IncomingMessage & { route?: { path?: unknown }; baseUrl?: string }).route;
  if (r && typeof r.path === 'string') return `${(req as { baseUrl?: string }).baseUrl ?? ''}${r.path}`;
  return 'unmatched';
}
