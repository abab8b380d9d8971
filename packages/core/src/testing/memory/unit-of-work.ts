import type { Id } from '../../model';
import type { CacheInvalidation, Repositories, UnitOfWork } from '../../ports';
import { MemoryChangeFeed } from './change-feed';
import { repositories } from './repositories';
import { type Tables, emptyTables } from './tables';

/**
 * The in-memory database: transactions run one at a time (which makes every read a locking read)
 * and roll back by restoring a snapshot taken at their start.
 */
export class InMemoryUnitOfWork implements UnitOfWork {
  private tables = emptyTables();
  private queue: Promise<unknown> = Promise.resolve();
  private readonly subscribers = new Set<MemoryChangeFeed>();

  /** A new subscriber to what this unit of work commits (one per instance, as a LISTEN connection). */
  changeFeed(): MemoryChangeFeed {
    return new MemoryChangeFeed(this.subscribers);
  }

  /** Reads here are serialised like transactions; there is nothing to gain from skipping that in memory. */
  read<T>(work: (repos: Repositories) => Promise<T>): Promise<T> {
    return this.run(work);
  }

  run<T>(work: (repos: Repositories) => Promise<T>): Promise<T> {
    const next = this.queue.then(async () => {
      const snapshot = new Map(Object.entries(this.tables).map(([k, m]) => [k, new Map(m as Map<Id, unknown>)]));
      const changes: CacheInvalidation[] = [];
      try {
        const result = await work(repositories(this.tables, (c) => changes.push(c)));
        // Delivered on commit only, as NOTIFY is.
        for (const feed of [...this.subscribers]) feed.deliver(changes);
        return result;
      } catch (e) {
        this.tables = Object.fromEntries(snapshot) as unknown as Tables;
        throw e;
      }
    });
    this.queue = next.catch(() => undefined);
    return next;
  }
}

/**
 * Wraps any unit of work so that a test can fail a transaction after its n-th write (fault
 * injection): the adapter must then leave nothing of that transaction behind.
 */
export class FaultInjectingUnitOfWork implements UnitOfWork {
  /** Throw after this many writes within one transaction; undefined: never. */
  failAfterWrites: number | undefined;

  constructor(private readonly inner: UnitOfWork) {}

  read<T>(work: (repos: Repositories) => Promise<T>): Promise<T> {
    return this.inner.read(work);
  }

  run<T>(work: (repos: Repositories) => Promise<T>): Promise<T> {
    let writes = 0;
    const limit = this.failAfterWrites;
    return this.inner.run((repos) => {
      const wrapped: Record<string, unknown> = {};
      for (const [table, repo] of Object.entries(repos)) {
        wrapped[table] = Object.fromEntries(
          Object.entries(repo as Record<string, (...a: unknown[]) => Promise<unknown>>).map(([method, fn]) => [
            method,
            async (...args: unknown[]) => {
              const out = await fn(...args);
              if (/^(save|delete)/.test(method) && limit !== undefined && ++writes >= limit)
                throw new Error(`injected fault after write ${writes}`);
              return out;
            },
          ]),
        );
      }
      return work(wrapped as unknown as Repositories);
    });
  }
}
