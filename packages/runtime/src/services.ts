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
  onWake(listener: () => void): void {
    this.listener = listener;
  }
  wake(): void {
    this.listener?.();
  }
}
