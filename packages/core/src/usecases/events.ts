import { isDomainError, isOutage } from '../errors';
import type { DomainEvent, EventPayload, EventType, Id, Tenant } from '../model';
import { assertAccessible } from '../domain/tenancy';
import type { Repositories } from '../ports';
import { limitsOf, type CoreDeps } from './deps';

export const MAX_EVENT_ATTEMPTS = 5;

/** Delay before retry `attempt` (1-based): 1 s, 2 s, 4 s, ... capped at 5 minutes. */
export const retryDelayMs = (attempt: number): number => Math.min(300_000, 1000 * 2 ** (attempt - 1));

/**
 * Applies one kind of event. `finish` must run inside the transaction that commits the event's
 * effect: it marks the event done there, so the effect and "done" commit together. `pin` keeps
 * what the event asks for as its first try decided it (committed at once), so that a retry
 * decides on that and not again on a state that may already hold the effect.
 */
export type EventHandler = (
  event: DomainEvent,
  finish: (r: Repositories) => Promise<void>,
  pin: (payload: EventPayload) => Promise<void>,
) => Promise<void>;
export type EventHandlers = Record<EventType, EventHandler>;

/** Thrown inside `finish` when another worker finished the event first (its lease ran out on us). */
class AlreadyDone extends Error {}

/**
 * Applies queued events. A worker leases an event in a short transaction, applies it (calling
 * the payment provider outside any transaction), and commits the effect with "done"; other
 * workers skip leased events, and an event is applied once even with several instances.
 */
export class EventWorker {
  constructor(
    private readonly deps: Pick<CoreDeps, 'uow' | 'clock' | 'logger' | 'limits'>,
    private readonly handlers: EventHandlers,
  ) {}

  async get(tenant: Tenant, id: Id): Promise<DomainEvent> {
    return this.deps.uow.run(async (r) => assertAccessible(await r.events.get(id), tenant, 'event'));
  }

  /** Unfinished events of every organisation (metrics). */
  async depth(): Promise<{ queued: number; pending: number }> {
    return this.deps.uow.read((r) => r.events.countOpen());
  }

  /** Processes one due event; false when none was due. */
  async processNext(): Promise<boolean> {
    const now = this.deps.clock.now();
    const event = await this.deps.uow.run((r) => r.events.claimNext(now, new Date(now.getTime() + limitsOf(this.deps).eventLeaseMs)));
    if (!event) return false;
    try {
      await this.handlers[event.payload.type](
        event,
        (r) => this.finish(r, event),
        (payload) => this.pin(event, payload),
      );
    } catch (error) {
      if (!(error instanceof AlreadyDone)) await this.recordFailure(event, error);
    }
    return true;
  }

  /**
   * Processes due events until none is left (or `max` were, or `stopped` says to stop); returns how
   * many were processed. `stopped` is asked before each claim (a process shutting down): once it
   * says so nothing more is claimed; the event in hand is finished (its effect and "done", or its
   * failure, committed) first.
   */
  async drain(max = 1000, stopped: () => boolean = () => false): Promise<number> {
    let n = 0;
    while (n < max && !stopped() && (await this.processNext())) n++;
    return n;
  }

  private async pin(event: DomainEvent, payload: EventPayload): Promise<void> {
    await this.deps.uow.run(async (r) => {
      const current = await r.events.getForUpdate(event.id);
      if (!current || current.status === 'success' || current.status === 'failed') throw new AlreadyDone();
      await r.events.save({ ...current, payload, updatedAt: this.deps.clock.now() });
    });
  }

  private async finish(r: Repositories, event: DomainEvent): Promise<void> {
    const current = await r.events.getForUpdate(event.id);
    if (!current || current.status === 'success' || current.status === 'failed') throw new AlreadyDone();
    await r.events.save({
      ...current,
      status: 'success',
      attempts: current.attempts + 1,
      lastError: null,
      errorCode: null,
      lockedUntil: null,
      updatedAt: this.deps.clock.now(),
    });
  }

  /**
   * A domain refusal is final; anything else is retried with backoff until MAX_EVENT_ATTEMPTS, an
   * outage of the database (or a full pool) too: the change was not written, and the provider, if
   * told, is told the same target again. The event keeps a stable code and a safe message; what
   * went wrong inside goes to the log only.
   */
  private async recordFailure(event: DomainEvent, error: unknown): Promise<void> {
    const attempts = event.attempts + 1;
    const outage = isOutage(error);
    const final = (isDomainError(error) && !outage) || attempts >= MAX_EVENT_ATTEMPTS;
    const now = this.deps.clock.now();
    const { code, message } = isDomainError(error)
      ? { code: error.code, message: `${error.code}: ${error.message}` }
      : {
          code: 'INTERNAL',
          message: final
            ? 'INTERNAL: the change could not be applied'
            : 'INTERNAL: the change could not be applied yet; it will be retried',
        };
    if (!isDomainError(error))
      this.deps.logger?.error('event failed', {
        eventId: event.id,
        attempts,
        error: error instanceof Error ? (error.stack ?? error.message) : String(error),
      });
    await this.deps.uow.run(async (r) => {
      const current = await r.events.getForUpdate(event.id);
      if (!current || current.status === 'success' || current.status === 'failed') return;
      await r.events.save({
        ...current,
        status: final ? 'failed' : 'pending',
        attempts,
        lastError: message,
        errorCode: code,
        lockedUntil: null,
        runAt: final ? current.runAt : new Date(now.getTime() + retryDelayMs(attempts)),
        updatedAt: now,
      });
    });
  }
}
