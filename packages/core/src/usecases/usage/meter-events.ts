import type { Clock, Logger, MeterEventOutcome, MeterRelayCursor, PaymentProvider, PendingMeterEvent, UnitOfWork } from '../../ports';

/** Entries one pass reads (and at most sends). */
export const RELAY_BATCH = 500;
/** Events in flight at once within a pass. */
export const RELAY_CONCURRENCY = 16;
/** Wait after the n-th retryable failure in a row: 1 s, 2 s, 4 s ... at most 5 minutes. */
export const relayBackoffMs = (attempts: number): number => Math.min(300_000, 1000 * 2 ** Math.max(0, attempts - 1));

/** What the relay did since the process started, and how far behind it is (the metrics). */
export interface MeterRelayStats {
  /** Events the provider took. */
  sent: number;
  /** Sends that failed and will be tried again (provider down, rate limited, network). */
  retried: number;
  /** Entries the provider refused for good (kept in `usage_meter_event_failures`). */
  refused: number;
  /** Age in seconds of the oldest entry not yet relayed at the end of the last pass (0: caught up). */
  lagSeconds: number;
  /** Retryable failures in a row now (0: healthy). */
  failingFor: number;
}

/** What one pass did. */
export interface MeterRelayPass {
  /** False: another instance holds the cursor, or the retry time has not come. */
  ran: boolean;
  sent: number;
  passed: number;
  refused: number;
  /** A retryable failure stopped the pass (the cursor stays before the failed entry). */
  failed: boolean;
  /** More entries wait (a full batch was read): run again soon. */
  more: boolean;
}

/**
 * Stripe meter events from the ledger (DESIGN section 14): the ledger is the outbox. A background
 * pass claims the provider's cursor (skipped while another instance holds it), reads the entries
 * after it that used units (only of writers that have finished, so nothing lands behind it), sends
 * each entry of a subscription the provider bills as one meter event whose `identifier` is the
 * entry's id, and moves the cursor past what was taken, in the transaction that held the claim.
 * A crash after a send and before that commit leaves the cursor where it was: the next pass sends
 * the same entries with the same identifiers and the provider counts them once. A retryable
 * failure (provider down, 429, network) stops the pass before the failed entry and waits
 * (1 s doubling to 5 min); a refusal for good is logged, counted, kept with what was sent, and
 * passed over so it never blocks the entries behind it. Nothing of this runs on the callers' path.
 */
export class MeterEventRelay {
  private readonly counts: MeterRelayStats = { sent: 0, retried: 0, refused: 0, lagSeconds: 0, failingFor: 0 };

  constructor(
    private readonly deps: {
      uow: UnitOfWork;
      clock: Clock;
      payments: Pick<PaymentProvider, 'name' | 'sendMeterEvent'>;
      logger?: Logger;
      batch?: number;
      concurrency?: number;
    },
  ) {}

  stats(): MeterRelayStats {
    return { ...this.counts };
  }

  /** One pass: at most one batch sent, the cursor moved in the transaction that claimed it. */
  async pass(): Promise<MeterRelayPass> {
    const send = this.deps.payments.sendMeterEvent?.bind(this.deps.payments);
    const idle: MeterRelayPass = { ran: false, sent: 0, passed: 0, refused: 0, failed: false, more: false };
    if (!send) return idle;
    const limit = this.deps.batch ?? RELAY_BATCH;
    const provider = this.deps.payments.name;
    return this.deps.uow.run(async (r) => {
      const cursor = await r.usage.claimMeterRelay(provider);
      const now = this.deps.clock.now();
      if (!cursor || (cursor.nextAttemptAt && cursor.nextAttemptAt > now)) return idle;
      const { events, end } = await r.usage.pendingMeterEvents(cursor, limit);
      const outcomes = await this.sendAll(events, send);
      const out: MeterRelayPass = { ran: true, sent: 0, passed: 0, refused: 0, failed: false, more: events.length >= limit };
      let position = cursor.position;
      let failure: { event: PendingMeterEvent; message: string } | undefined;
      for (let i = 0; i < events.length; i++) {
        const e = events[i];
        const o = outcomes[i];
        if (o === null) out.passed++;
        else if (o === undefined) break;
        else if (o.ok) out.sent++;
        else if (o.retryable) {
          failure = { event: e, message: o.message };
          break;
        } else {
          out.refused++;
          await r.usage.saveMeterEventFailure({
            entryId: e.entryId,
            provider,
            organisationId: e.organisationId,
            isTest: e.isTest,
            owner: e.owner,
            meterSlug: e.meterSlug,
            customerId: e.customerId as string,
            value: e.value,
            entryCreatedAt: e.createdAt,
            error: o.message,
            failedAt: now,
          });
          this.deps.logger?.error('usage meter event refused', {
            provider,
            entry: e.entryId,
            owner: e.owner,
            meter: e.meterSlug,
            value: e.value,
            error: o.message,
          });
        }
        position = e.position;
      }
      const next: MeterRelayCursor = failure
        ? {
            ...cursor,
            position,
            attempts: cursor.attempts + 1,
            nextAttemptAt: new Date(now.getTime() + relayBackoffMs(cursor.attempts + 1)),
            lastError: failure.message,
            updatedAt: now,
          }
        : { ...cursor, position: out.more ? position : end, attempts: 0, nextAttemptAt: null, lastError: null, updatedAt: now };
      if (failure) {
        out.failed = true;
        out.more = false;
        this.deps.logger?.error('usage meter event failed, will retry', {
          provider,
          entry: failure.event.entryId,
          attempts: next.attempts,
          retryAt: next.nextAttemptAt?.toISOString(),
          error: failure.message,
        });
      }
      if (next.position !== cursor.position || next.attempts !== cursor.attempts || next.lastError !== cursor.lastError)
        await r.usage.saveMeterRelay(next);
      // Lag: the age of the oldest entry not done (the failed one, or about the last read of a full batch).
      const oldest = failure?.event ?? (out.more ? events[events.length - 1] : undefined);
      this.counts.lagSeconds = oldest ? Math.max(0, (now.getTime() - oldest.createdAt.getTime()) / 1000) : 0;
      this.counts.sent += out.sent;
      this.counts.refused += out.refused;
      this.counts.retried += failure ? 1 : 0;
      this.counts.failingFor = next.attempts;
      return out;
    });
  }

  /**
   * Sends the batch in order, RELAY_CONCURRENCY at a time; stops after a window with a retryable
   * failure (undefined: not tried). null: nothing to send (no provider customer).
   */
  private async sendAll(
    events: PendingMeterEvent[],
    send: (e: Parameters<NonNullable<PaymentProvider['sendMeterEvent']>>[0]) => Promise<MeterEventOutcome>,
  ): Promise<(MeterEventOutcome | null | undefined)[]> {
    const out: (MeterEventOutcome | null | undefined)[] = new Array(events.length).fill(undefined);
    const width = this.deps.concurrency ?? RELAY_CONCURRENCY;
    for (let i = 0; i < events.length; i += width) {
      const window = events.slice(i, i + width);
      const answers = await Promise.all(
        window.map(async (e) => {
          if (!e.customerId) return null;
          try {
            return await send({
              eventName: e.meterSlug,
              customerId: e.customerId,
              value: e.value,
              identifier: e.entryId,
              timestamp: e.createdAt,
            });
          } catch (error) {
            return { ok: false as const, retryable: true, message: error instanceof Error ? error.message : String(error) };
          }
        }),
      );
      answers.forEach((a, k) => (out[i + k] = a));
      if (answers.some((a) => a && !a.ok && a.retryable)) break;
    }
    return out;
  }
}
