import { AsyncResource } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import type { Clock, EventQueue, IdGenerator } from '@tollgate/core';

export class SystemClock implements Clock {
  now(): Date {
    return new Date();
  }
  monotonicMs(): number {
    return performance.now();
  }
}

export class UuidGenerator implements IdGenerator {
  newId(): string {
    return randomUUID();
  }
}

/** Wakes the in-process worker loop; several instances also poll, so a lost wake only delays. */
export class WakeSignal implements EventQueue {
  private listener: (() => void) | undefined;
  /**
   * The listener runs in the async context it was registered in (the worker's, at start-up), never
   * in the waker's: a wake from inside an idempotent request's work would otherwise carry that
   * request's joined transaction into the worker, which would claim and apply events inside it.
   */
  onWake(listener: () => void): void {
    this.listener = AsyncResource.bind(listener);
  }
  wake(): void {
    this.listener?.();
  }
}
