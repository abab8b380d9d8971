import type { CacheInvalidation, ChangeFeed, ChangeFeedHandlers } from '../../ports';

/**
 * The in-memory change feed: what a committed unit of work changed, heard by every subscriber of
 * the unit of work (as the PostgreSQL triggers' NOTIFY is heard by every instance). `drop()` and
 * `restore()` act a lost and a regained listening connection.
 */
export class MemoryChangeFeed implements ChangeFeed {
  private handlers: ChangeFeedHandlers | undefined;
  private connected = false;
  /** Changes are lost on the way while the feed still seems to listen (what a faulty network does). */
  losing = false;

  constructor(private readonly subscribers: Set<MemoryChangeFeed>) {}

  async start(handlers: ChangeFeedHandlers): Promise<void> {
    this.handlers = handlers;
    this.subscribers.add(this);
    this.restore();
  }

  listening(): boolean {
    return this.connected;
  }

  async stop(): Promise<void> {
    this.subscribers.delete(this);
    this.connected = false;
    this.handlers = undefined;
  }

  /** The listening connection is lost: changes are no longer heard. */
  drop(): void {
    if (!this.connected) return;
    this.connected = false;
    this.handlers?.onGap();
  }

  /** Listening again. */
  restore(): void {
    this.connected = true;
    this.handlers?.onResume();
  }

  deliver(changes: CacheInvalidation[]): void {
    if (!this.connected || this.losing) return;
    for (const c of changes) this.handlers?.onChange(c);
  }
}
