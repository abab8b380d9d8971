import type { EventWorker, Logger, Sweeps } from '@tollgate/core';
import type { WakeSignal } from './services';

/**
 * Runs the event worker and the period-end sweep in this process: woken when events are queued,
 * and polling every `intervalMs` for work queued by other instances or due for retry.
 */
export class BackgroundWork {
  private timer: NodeJS.Timeout | undefined;
  private running = false;
  private again = false;
  private stopped = false;

  constructor(
    private readonly worker: EventWorker,
    private readonly sweeps: Sweeps,
    private readonly wake: WakeSignal,
    private readonly logger: Logger,
    private readonly intervalMs: number,
  ) {}

  start(): void {
    this.wake.onWake(() => void this.tick());
    this.timer = setInterval(() => void this.tick(), this.intervalMs);
    this.timer.unref();
    void this.tick();
  }

  /** One pass: drain due events, then end or renew subscriptions whose period has ended. */
  async tick(): Promise<void> {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = true;
    try {
      do {
        this.again = false;
        await this.worker.drain();
        await this.sweeps.cancellations();
        await this.sweeps.renewals();
      } while (this.again && !this.stopped);
    } catch (e) {
      this.logger.error('background work failed', { error: e instanceof Error ? e.message : String(e) });
    } finally {
      this.running = false;
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    while (this.running) await new Promise((r) => setTimeout(r, 10));
  }
}
