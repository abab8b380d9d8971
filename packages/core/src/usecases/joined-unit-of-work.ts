import { AsyncLocalStorage } from 'node:async_hooks';
import type { Repositories, UnitOfWork } from '../ports';

interface Open {
  repos: Repositories;
  open: boolean;
}

/**
 * A unit of work whose `run` and `read`, called inside a transaction begun with `runShared`,
 * join that transaction instead of starting another: a route's use cases and the idempotency
 * record that answers for them commit together, or not at all (issue #24: no write done twice
 * after a crash between the work and its stored answer). Only `runShared` opens such a context
 * (async context tracking costs a little on every promise, so the hot path never turns it on
 * unless idempotent writes are made). The transaction counts as open only while its own work
 * runs: what it wakes after (the outbox's worker) starts transactions of its own.
 */
export class JoinedUnitOfWork implements UnitOfWork {
  private readonly current = new AsyncLocalStorage<Open>();

  constructor(private readonly inner: UnitOfWork) {}

  run<T>(work: (repos: Repositories) => Promise<T>): Promise<T> {
    const joined = this.current.getStore();
    return joined?.open ? work(joined.repos) : this.inner.run(work);
  }

  read<T>(work: (repos: Repositories) => Promise<T>): Promise<T> {
    const joined = this.current.getStore();
    return joined?.open ? work(joined.repos) : this.inner.read(work);
  }

  /** One transaction that every `run` and `read` called from `work` joins. */
  runShared<T>(work: (repos: Repositories) => Promise<T>): Promise<T> {
    const joined = this.current.getStore();
    if (joined?.open) return work(joined.repos);
    return this.inner.run(async (repos) => {
      const open: Open = { repos, open: true };
      try {
        return await this.current.run(open, () => work(repos));
      } finally {
        open.open = false;
      }
    });
  }
}
