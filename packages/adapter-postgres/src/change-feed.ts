import type { PGlite } from '@electric-sql/pglite';
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

/**
 * A PostgreSQL server's change feed: one connection of its own (outside the pool) that LISTENs.
 * When it drops, the instance is told at once (`onGap`: caches emptied and bypassed) and the feed
 * reconnects with backoff; once LISTEN works again, `onResume`.
 */
export class PostgresChangeFeed implements ChangeFeed {
  private client: Client | undefined;
  private handlers: ChangeFeedHandlers | undefined;
  private connected = false;
  private stopped = false;
  private retry: NodeJS.Timeout | undefined;

  constructor(
    private readonly url: string,
    private readonly options: { onError?: (e: unknown) => void; retryMs?: number; applicationName?: string } = {},
  ) {}

  async start(handlers: ChangeFeedHandlers): Promise<void> {
    this.handlers = handlers;
    this.stopped = false;
    await this.connect();
  }

  listening(): boolean {
    return this.connected;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.retry) clearTimeout(this.retry);
    this.connected = false;
    const c = this.client;
    this.client = undefined;
    await c?.end().catch(() => undefined);
  }

  private async connect(delay = this.options.retryMs ?? 250): Promise<void> {
    if (this.stopped) return;
    const client = new Client({
      connectionString: this.url,
      keepAlive: true,
      application_name: this.options.applicationName ?? 'tollgate-change-feed',
    });
    const lost = (e?: unknown) => {
      if (this.client !== client) return;
      this.client = undefined;
      if (e) this.options.onError?.(e);
      if (this.connected) {
        this.connected = false;
        this.handlers?.onGap();
      }
      client.end().catch(() => undefined);
      if (!this.stopped) this.retry = setTimeout(() => void this.connect(Math.min(delay * 2, 5000)), delay);
    };
    client.on('error', lost);
    client.on('end', () => lost());
    client.on('notification', (m) => {
      const change = m.channel === CHANGE_CHANNEL && m.payload ? parseChange(m.payload) : undefined;
      if (change) this.handlers?.onChange(change);
    });
    this.client = client;
    try {
      await client.connect();
      await client.query(`LISTEN ${CHANGE_CHANNEL}`);
    } catch (e) {
      lost(e);
      return;
    }
    if (this.client !== client || this.stopped) return;
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
