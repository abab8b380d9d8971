import { randomUUID } from 'node:crypto';
import type { Clock, EventQueue, IdGenerator, Logger } from '@tollgate/core';

export class SystemClock implements Clock {
  now(): Date {
    return new Date();
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

/** JSON lines on stdout / stderr (pino replaces it when configured). */
export const consoleLogger: Logger = {
  error: (m, f) => console.error(JSON.stringify({ level: 'error', msg: m, ...f })),
  info: (m, f) => console.log(JSON.stringify({ level: 'info', msg: m, ...f })),
};
