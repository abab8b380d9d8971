import { AsyncLocalStorage } from 'node:async_hooks';
import { outageAfter } from '../errors';
import type { Repositories, UnitOfWork } from '../ports';

interface Open {
  repos: Repositories;
  open: boolean;
  /** What was done outside the transaction meanwhile (the first such step), for its outage answer. */
  done?: { done: string; then: string };
  /** What takes back the steps done outside it, should the transaction fail. */
  undo: (() => Promise<void>)[];
}

/**
 * A unit of work whose `run` and `read`, called inside a transaction begun with `runShared`,
 * join that transaction instead of starting another: a route's use cases and the idempotency
 * record that answers for them commit together, or not at all (issue #24: no write done twice
 * after a crash between the work and its stored answer). Only `runShared` opens such a context
 * (async context tracking costs a little on every promise, so the hot path never turns it on
 * unless idempotent writes are made). The transaction counts as open only while its own work
 * runs: what it wakes after (the outbox's worker) starts transactions of its own. Work woken
 * DURING it must not run in its async context, or it would join: the event port's wake runs its
 * listener in the listener's own context (runtime's `WakeSignal`), as the group commit's drains do.
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

  joined(): boolean {
    return this.current.getStore()?.open === true;
  }

  /**
   * Something outside the joined transaction was done (the payment provider told): if the
   * transaction then fails, its answer says so, and `undo` runs (see `runShared`).
   */
  noteDone(done: string, then: string, undo?: () => Promise<void>): void {
    const joined = this.current.getStore();
    if (!joined?.open) return;
    joined.done ??= { done, then };
    if (undo) joined.undo.push(undo);
  }

  /**
   * One transaction that every `run` and `read` called from `work` joins. Should it fail after a
   * step outside it was done (`noteDone`: a payment provider told of a change), what can be taken
   * back is (best effort, each step logs its own failure), and an outage's answer says what was
   * done instead of "nothing was changed".
   */
  async runShared<T>(work: (repos: Repositories) => Promise<T>): Promise<T> {
    const joined = this.current.getStore();
    if (joined?.open) return work(joined.repos);
    let open: Open | undefined;
    try {
      return await this.inner.run(async (repos) => {
        open = { repos, open: true, undo: [] };
        const current = open;
        try {
          return await this.current.run(current, () => work(repos));
        } finally {
          current.open = false;
        }
      });
    } catch (e) {
      const failed = open as Open | undefined;
      if (!failed?.done) throw e;
      for (const undo of failed.undo) await undo().catch(() => undefined);
      throw outageAfter(e, failed.done.done, failed.done.then);
    }
  }
}
