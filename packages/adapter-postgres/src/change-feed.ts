import type { PGlite } from '@electric-sql/pglite';
import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import type { CacheInvalidation, ChangeFeed, ChangeFeedHandlers } from '@tollgate/core';

/** The channel the triggers of migration 2026-11-22T05 notify on. */
export const CHANGE_CHANNEL = 'tollgate_cache';

/** A NOTIFY payload (`l|product|grantee`, `p|product`, `k|keyHash`, `s|organisation`) as an invalidation. */
export function parseChange(payload: string): CacheInvalidation | undefined {
  const [kind, first] = payload.split('|', 2);
  const rest = payload.slice(kind.length + 1);
  switch (kind) {
    case 'l': {
      const cut = rest.indexOf('|');
      return cut > 0 ? { kind: 'license', productId: rest.slice(0, cut), granteeId: rest.slice(cut + 1) } : undefined;
    }
    case 'p':
      return { kind: 'product', productId: first };
    case 'k':
      return { kind: 'apiKey', keyHash: first };
    case 's':
      return { kind: 'signingKey', organisationId: first };
    default:
      return undefined;
  }
}

/** How often the feed proves it is alive, and how long it may go unproven before caches are distrusted. */
export interface ChangeFeedTiming {
  /** A heartbeat is sent this often (default 200 ms). */
  heartbeatMs?: number;
  /** No heartbeat heard back for this long: the feed is lost (default 1 000 ms; the revocation bound). */
  boundMs?: number;
  /** The first reconnection waits this long, doubling to 5 s; back to it after every success (default 250 ms). */
  retryMs?: number;
}

/**
 * A PostgreSQL server's change feed: one connection of its own (outside the pool) that LISTENs.
 *
 * It proves it is alive: every `heartbeatMs` it NOTIFYs a channel of its own through the same
 * connection. PostgreSQL delivers notifications in commit order through one queue, so hearing a
 * heartbeat back confirms every change committed before it was sent has been heard too. When no
 * heartbeat came back within `boundMs` (a connection that stopped forwarding without closing, a
 * stalled server), or the connection drops, the instance is told at once (`onGap`: caches
 * distrusted), the connection is destroyed and the feed reconnects with backoff; once LISTEN works
 * and a first heartbeat is heard, `onResume`. The backoff starts again from `retryMs` after every
 * successful connection.
 */
export class PostgresChangeFeed implements ChangeFeed {
  private client: Client | undefined;
  private handlers: ChangeFeedHandlers | undefined;
  private connected = false;
  private stopped = false;
  private retry: NodeJS.Timeout | undefined;
  private ticker: NodeJS.Timeout | undefined;
  private backoff: number;
  private readonly heartbeatMs: number;
  private readonly boundMs: number;
  private readonly beatChannel = `tollgate_beat_${randomBytes(8).toString('hex')}`;
  /**
   * When the last heartbeat heard back was sent: everything committed before it has been heard.
   * Times are the monotonic clock's (`performance.now()`): a wall-clock step must neither keep a
   * stalled feed trusted nor declare a healthy one lost, and only this process reads the payload.
   */
  private confirmedAt = 0;
  private lastSentAt = 0;
  /**
   * When this process was found to have stalled (its ticker ran late by more than the bound, or every
   * heartbeat was answered and none sent): proof starts again from there.
   */
  private stalledAt = 0;
  private confirming = false;
  /** When the ticker last ran (monotonic): a gap longer than the bound means this process stalled. */
  private lastTickAt = 0;

  constructor(
    private readonly url: string,
    private readonly options: { onError?: (e: unknown) => void; applicationName?: string } & ChangeFeedTiming = {},
  ) {
    this.backoff = options.retryMs ?? 250;
    this.heartbeatMs = options.heartbeatMs ?? 200;
    this.boundMs = options.boundMs ?? 1000;
  }

  async start(handlers: ChangeFeedHandlers): Promise<void> {
    this.handlers = handlers;
    this.stopped = false;
    this.ticker = setInterval(() => this.tick(), Math.max(10, Math.min(this.heartbeatMs, this.boundMs / 4)));
    this.ticker.unref();
    await this.connect();
  }

  listening(): boolean {
    return this.connected;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.retry) clearTimeout(this.retry);
    if (this.ticker) clearInterval(this.ticker);
    this.connected = false;
    const c = this.client;
    this.client = undefined;
    await c?.end().catch(() => undefined);
  }

  /** Sends a heartbeat when one is due; declares the feed lost when none came back within the bound. */
  private tick(): void {
    const client = this.client;
    const now = performance.now();
    const stalled = this.lastTickAt > 0 && now - this.lastTickAt > this.boundMs;
    this.lastTickAt = now;
    if (!client || this.stopped) return;
    if (stalled && this.connected) {
      // This process did not run for longer than the bound (an event-loop stall): it heard nothing
      // meanwhile, and a heartbeat sent just before may not even have left (or come back) yet. It is
      // not evidence against the feed: the proof starts again now, and a fresh heartbeat must come
      // back within the bound (a dead feed is still declared lost, one bound after the stall).
      this.stalledAt = now;
      this.beat(client);
      return;
    }
    if (this.connected && this.overdue(now)) {
      // After an event-loop stall the timer fires before the socket's queued heartbeats are read:
      // read them first (setImmediate runs after the poll phase), then judge.
      if (!this.confirming) {
        this.confirming = true;
        setImmediate(() => this.confirm(client));
      }
      return;
    }
    if (now - this.lastSentAt >= this.heartbeatMs) this.beat(client);
  }

  private overdue(now: number): boolean {
    return now - Math.max(this.confirmedAt, this.stalledAt) > this.boundMs;
  }

  private confirm(client: Client): void {
    this.confirming = false;
    if (this.client !== client || !this.connected || this.stopped) return;
    const now = performance.now();
    if (!this.overdue(now)) return;
    if (this.lastSentAt <= this.confirmedAt) {
      // Every heartbeat sent came back: this process stalled (it sent none), not the feed. Prove it again from now.
      this.stalledAt = now;
      this.beat(client);
      return;
    }
    this.lose(client, new Error(`no heartbeat heard back within ${this.boundMs} ms`));
  }

  private beat(client: Client): void {
    const sentAt = performance.now();
    this.lastSentAt = sentAt;
    client.query(`NOTIFY ${this.beatChannel}, '${sentAt}'`).catch(() => undefined);
  }

  /** The connection cannot be trusted: tell the instance, destroy it (it may hang rather than close), reconnect. */
  private lose(client: Client, e?: unknown): void {
    if (this.client !== client) return;
    this.client = undefined;
    if (e) this.options.onError?.(e);
    if (this.connected) {
      this.connected = false;
      this.handlers?.onGap();
    }
    // end() waits for the server, which may never answer: cut the socket.
    (client as unknown as { connection?: { stream?: { destroy(): void } } }).connection?.stream?.destroy();
    client.end().catch(() => undefined);
    if (this.stopped) return;
    const delay = this.backoff;
    this.backoff = Math.min(delay * 2, 5000);
    this.retry = setTimeout(() => void this.connect(), delay);
  }

  private async connect(): Promise<void> {
    if (this.stopped) return;
    const client = new Client({
      connectionString: this.url,
      keepAlive: true,
      connectionTimeoutMillis: Math.max(this.boundMs * 5, 2000),
      application_name: this.options.applicationName ?? 'tollgate-change-feed',
    });
    client.on('error', (e) => this.lose(client, e));
    client.on('end', () => this.lose(client));
    let resumed: (() => void) | undefined;
    client.on('notification', (m) => {
      if (m.channel === this.beatChannel) {
        const sentAt = Number(m.payload);
        if (sentAt > this.confirmedAt) this.confirmedAt = sentAt;
        resumed?.();
        return;
      }
      const change = m.channel === CHANGE_CHANNEL && m.payload ? parseChange(m.payload) : undefined;
      if (change) this.handlers?.onChange(change);
    });
    this.client = client;
    try {
      await client.connect();
      await client.query(`LISTEN ${CHANGE_CHANNEL}`);
      await client.query(`LISTEN ${this.beatChannel}`);
      // Trusted only once a heartbeat came back: the whole path works, not just the handshake.
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error('no first heartbeat heard back')), Math.max(this.boundMs * 5, 2000));
        resumed = () => {
          clearTimeout(timer);
          resolve();
        };
        this.beat(client);
      });
      resumed = undefined;
    } catch (e) {
      this.lose(client, e);
      return;
    }
    if (this.client !== client || this.stopped) return;
    this.backoff = this.options.retryMs ?? 250;
    this.connected = true;
    this.handlers?.onResume();
  }
}

/** PGlite's change feed: its NOTIFY is delivered in process, on commit, to this listener. */
export class PGliteChangeFeed implements ChangeFeed {
  private unlisten: (() => Promise<void>) | undefined;

  constructor(private readonly pglite: PGlite) {}

  async start(handlers: ChangeFeedHandlers): Promise<void> {
    this.unlisten = await this.pglite.listen(CHANGE_CHANNEL, (payload) => {
      const change = parseChange(payload);
      if (change) handlers.onChange(change);
    });
    handlers.onResume();
  }

  listening(): boolean {
    return this.unlisten !== undefined;
  }

  async stop(): Promise<void> {
    const u = this.unlisten;
    this.unlisten = undefined;
    await u?.();
  }
}
