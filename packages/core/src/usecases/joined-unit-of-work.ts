import { AsyncLocalStorage } from 'node:async_hooks';
import type { Repositories, UnitOfWork } from '../ports';

interface Open {
  repos: Repositories;
  open: boolean;
}

/**
 * A unit of work whose `run` and `read` called while one of its transactions is doing its work
 * join that transaction instead of starting another: a route's use cases and the idempotency
 * record that answers for them commit together, or not at all (issue #24: no write done twice
 * after a crash between the work and its stored answer). The transaction counts as open only
 * while its own work runs: what it wakes after (the outbox's worker) starts transactions of its own.
 */
export class JoinedUnitOfWork implements UnitOfWork {
  private readonly current = new AsyncLocalStorage<Open>();

  constructor(private readonly inner: UnitOfWork) {}

  run<T>(work: (repos: Repositories) => Promise<T>): Promise<T> {
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

  read<T>(work: (repos: Repositories) => Promise<T>): Promise<T> {
    const joined = this.current.getStore();
    return joined?.open ? work(joined.repos) : this.inner.read(work);
  }
}
