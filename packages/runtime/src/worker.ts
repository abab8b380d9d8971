import {
  isOutage,
  type EventWorker,
  type Logger,
  type MeterEventRelay,
  type Sweeps,
  type WebhookDispatcher,
  type WebhookEvents,
} from '@tollgate/core';
import type { WakeSignal } from './services';

const PURGE_EVERY_MS = 60_000;
const LEDGER_EVERY_MS = 3_600_000;
/** Events and webhook deliveries one pass of their lane takes at most (a stop ends it sooner: nothing more is claimed). */
const EVENTS_PER_PASS = 1000;
const DELIVERIES_PER_PASS = 1000;
/** Relay passes (one plan, or one batch of planned sends, each) one tick of the relay's lane runs at most (more wait for the next tick). */
const RELAY_BATCHES_PER_PASS = 20;

/** One job run again and again: never twice at once; a wake during a pass makes one more pass. */
class Lane {
  private running = false;
  private again = false;

  constructor(
    private readonly name: string,
    private readonly pass: () => Promise<unknown>,
    private readonly logger: Logger,
    private readonly stopped: () => boolean,
  ) {}

  async run(): Promise<void> {
    if (this.stopped()) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = true;
    try {
      do {
        this.again = false;
        await this.pass();
      } while (this.again && !this.stopped());
    } catch (e) {
      this.logger.error(`${this.name} failed`, { error: e instanceof Error ? e.message : String(e) });
    } finally {
      this.running = false;
    }
  }

  busy(): boolean {
    return this.running;
  }
}

/**
 * Runs the background work of this process: the event worker with the period-end sweep, and the
 * webhook deliveries in a lane of their own (a slow receiver never holds up seat changes), and the
 * usage meter-event relay in a third when the payment provider bills metered usage. Woken
 * when work is queued, and polling every `intervalMs` for work queued by other instances or due
 * for retry.
 */
export class BackgroundWork {
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private lastPurge = 0;
  private lastLedger = 0;
  private readonly lanes: Lane[];

  constructor(
    worker: EventWorker,
    sweeps: Sweeps,
    private readonly wake: WakeSignal,
    logger: Logger,
    private readonly intervalMs: number,
    webhooks?: { delivery: Pick<WebhookDispatcher, 'drain'>; events: Pick<WebhookEvents, 'purge'> },
    meterRelay?: Pick<MeterEventRelay, 'pass'>,
  ) {
    const stopped = () => this.stopped;
    this.lanes = [
      new Lane(
        'background work',
        async () => {
          // Each step on its own: one that fails (a bug, bad data) is logged and the others still run
          // this pass. An outage ends the pass (the next steps would meet it too); the next pass tries again.
          // A stop (the process shutting down) skips the steps not begun: they claim work.
          const step = async (name: string, work: () => Promise<unknown>) => {
            if (this.stopped) return;
            try {
              await work();
            } catch (e) {
              if (isOutage(e)) throw e;
              logger.error(`background work: ${name} failed; the other steps go on`, { error: e instanceof Error ? e.message : String(e) });
            }
          };
          await step('events', () => worker.drain(EVENTS_PER_PASS, stopped));
          await step('cancellations', () => sweeps.cancellations());
          await step('renewals', () => sweeps.renewals());
          // Ad hoc evaluation licenses whose end came are written CANCELED (lists and webhooks agree).
          await step('ended evaluations', () => sweeps.endedEvaluations());
          await step('usage holds', () => sweeps.usageHolds());
          // The usage ledger's partitions, at most once an hour per instance.
          if (Date.now() - this.lastLedger >= LEDGER_EVERY_MS) {
            this.lastLedger = Date.now();
            await step('usage ledger', () => sweeps.usageLedger());
          }
        },
        logger,
        stopped,
      ),
      ...(webhooks
        ? [
            new Lane(
              'webhook delivery',
              async () => {
                await webhooks.delivery.drain(DELIVERIES_PER_PASS, stopped);
                // Old events go at most once a minute per instance (a batch each time).
                if (!this.stopped && Date.now() - this.lastPurge >= PURGE_EVERY_MS) {
                  this.lastPurge = Date.now();
                  await webhooks.events.purge();
                }
              },
              logger,
              stopped,
            ),
          ]
        : []),
      // Stripe meter events from the ledger, in a lane of their own: Stripe being slow or down
      // never holds up renewals or webhooks (the relay waits between retries by itself).
      ...(meterRelay
        ? [
            new Lane(
              'usage meter events',
              async () => {
                for (let n = 0; n < RELAY_BATCHES_PER_PASS && !this.stopped; n++) if (!(await meterRelay.pass()).more) break;
              },
              logger,
              stopped,
            ),
          ]
        : []),
    ];
  }

  start(): void {
    this.wake.onWake(() => void this.tick());
    this.timer = setInterval(() => void this.tick(), this.intervalMs);
    this.timer.unref();
    void this.tick();
  }

  /** One pass of each lane: drain due events, end or renew subscriptions, end evaluations, deliver due webhooks. */
  async tick(): Promise<void> {
    await Promise.all(this.lanes.map((l) => l.run()));
  }

  /** Whether a lane is in a pass. */
  busy(): boolean {
    return this.lanes.some((l) => l.busy());
  }

  /**
   * Claims nothing more (the drains ask before each claim; steps not begun are skipped) and waits for
   * what is in hand: an event being applied, webhook POSTs in flight (each at most its timeout).
   * `serve` bounds the wait by `SHUTDOWN_TIMEOUT_MS`.
   */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    while (this.busy()) await new Promise((r) => setTimeout(r, 10));
  }
}
