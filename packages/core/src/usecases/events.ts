import { ErrorCodes, isDomainError } from '../errors';
import type { DomainEvent, Id, Tenant } from '../model';
import { assertAccessible } from '../domain/tenancy';
import { assertNever } from '../domain/status';
import type { Repositories } from '../ports';
import type { CoreDeps } from './deps';
import type { SubscriptionService } from './subscriptions';

export const MAX_EVENT_ATTEMPTS = 5;

/** Delay before retry `attempt` (1-based): 1 s, 2 s, 4 s, ... capped at 5 minutes. */
export const retryDelayMs = (attempt: number): number => Math.min(300_000, 1000 * 2 ** (attempt - 1));

/**
 * Applies queued events. Each event is claimed and applied in one transaction (claimed rows are
 * skipped by other workers), so an event takes effect exactly once even with several instances.
 */
export class EventWorker {
  constructor(
    private readonly deps: CoreDeps,
    private readonly subscriptions: SubscriptionService,
  ) {}

  async get(tenant: Tenant, id: Id): Promise<DomainEvent> {
    return this.deps.uow.run(async (r) => assertAccessible(await r.events.get(id), tenant, ErrorCodes.EVENT_NOT_FOUND, 'event'));
  }

  /** Processes one due event; false when none was due. */
  async processNext(): Promise<boolean> {
    const now = this.deps.clock.now();
    let failure: { event: DomainEvent; error: unknown } | undefined;
    let claimed = false;
    try {
      await this.deps.uow.run(async (r) => {
        const event = await r.events.claimNext(now);
        if (!event) return;
        claimed = true;
        try {
          await this.apply(r, event);
        } catch (error) {
          failure = { event, error };
          throw error;
        }
        await r.events.save({ ...event, status: 'success', attempts: event.attempts + 1, lastError: null, updatedAt: this.deps.clock.now() });
      });
    } catch (error) {
      if (!failure) throw error;
    }
    if (failure) await this.recordFailure(failure.event, failure.error);
    return claimed;
  }

  /** Processes due events until none is left; returns how many were processed. */
  async drain(max = 1000): Promise<number> {
    let n = 0;
    while (n < max && (await this.processNext())) n++;
    return n;
  }

  private async apply(r: Repositories, event: DomainEvent): Promise<void> {
    const p = event.payload;
    switch (p.type) {
      case 'seats.increment':
        await this.subscriptions.applySeatChange(r, p.subscriptionId, { increment: p.count }, p.proration);
        return;
      case 'seats.decrement':
        await this.subscriptions.applySeatChange(r, p.subscriptionId, { decrement: p.count }, p.proration);
        return;
      default:
        assertNever(p);
    }
  }

  /** A domain refusal is final; anything else is retried with backoff until MAX_EVENT_ATTEMPTS. */
  private async recordFailure(event: DomainEvent, error: unknown): Promise<void> {
    const attempts = event.attempts + 1;
    const final = isDomainError(error) || attempts >= MAX_EVENT_ATTEMPTS;
    const now = this.deps.clock.now();
    const message = isDomainError(error) ? `${error.code}: ${error.message}` : error instanceof Error ? error.message : String(error);
    await this.deps.uow.run(async (r) => {
      const current = await r.events.get(event.id);
      if (!current || current.status === 'success') return;
      await r.events.save({
        ...current,
        status: final ? 'failed' : 'pending',
        attempts,
        lastError: message,
        runAt: final ? current.runAt : new Date(now.getTime() + retryDelayMs(attempts)),
        updatedAt: now,
      });
    });
  }
}
