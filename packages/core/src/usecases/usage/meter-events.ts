import type {
  Clock,
  IdGenerator,
  Logger,
  MeterEventOutcome,
  MeterRelayCursor,
  MeterSend,
  PaymentProvider,
  PendingMeterEvent,
  Repositories,
  UnitOfWork,
} from '../../ports';
import { limitsOf, type CoreLimits } from '../deps';

/** Planned sends one pass sends at most. */
export const RELAY_BATCH = 500;
/** Ledger entries one planning pass reads (and sums into sends) at most. */
export const RELAY_READ = 20_000;
/** Events in flight at once within a pass. */
export const RELAY_CONCURRENCY = 16;
/** Wait after the n-th retryable failure in a row: 1 s, 2 s, 4 s ... at most 5 minutes. */
export const relayBackoffMs = (attempts: number): number => Math.min(300_000, 1000 * 2 ** Math.max(0, attempts - 1));

/** What the relay did since the process started, and how far behind it is (the metrics). */
export interface MeterRelayStats {
  /** Events (planned sends) the provider took. */
  sent: number;
  /** Passes whose sends failed and will be tried again (provider down, rate limited, network). */
  retried: number;
  /** Sends the provider refused for good (kept in `usage_meter_event_failures`). */
  refused: number;
  /**
   * Age in seconds of the oldest used entry not yet sent at the end of the last pass, whether it
   * is planned or still waits for the window (0: caught up).
   */
  lagSeconds: number;
  /** Retryable failures in a row now (0: healthy). */
  failingFor: number;
}

/** What one pass did. */
export interface MeterRelayPass {
  /** False: another instance holds the cursor, or the retry time has not come. */
  ran: boolean;
  /** Planned sends the provider took. */
  sent: number;
  /** Entries passed over (not of a subscription the provider bills). */
  passed: number;
  refused: number;
  /** Entries summed into new planned sends. */
  planned: number;
  /** A retryable failure stopped the pass (the sends it did not take stay planned). */
  failed: boolean;
  /** More waits (planned sends, or a full read of entries): run again soon. */
  more: boolean;
}

type Send = (e: Parameters<NonNullable<PaymentProvider['sendMeterEvent']>>[0]) => Promise<MeterEventOutcome>;

/** Exact sum of non-negative decimal texts ("0.1" + "0.2" = "0.3"). */
export function addDecimals(a: string, b: string): string {
  const [ai, af = ''] = a.split('.');
  const [bi, bf = ''] = b.split('.');
  const places = Math.max(af.length, bf.length);
  const total = BigInt(ai + af.padEnd(places, '0')) + BigInt(bi + bf.padEnd(places, '0'));
  if (!places) return total.toString();
  const digits = total.toString().padStart(places + 1, '0');
  const fraction = digits.slice(-places).replace(/0+$/, '');
  return fraction ? `${digits.slice(0, -places)}.${fraction}` : digits.slice(0, -places);
}

/**
 * Stripe meter events from the ledger (DESIGN section 14): the ledger is the outbox, aggregated
 * before it is sent. Each pass claims the provider's cursor (skipped while another instance holds
 * it) and, in the transaction that holds the claim, does one of two things:
 * - planned sends exist: sends up to a batch of them (each one meter event whose `identifier` is the
 *   send's id), deletes those the provider took, keeps a refusal for good in the failures (and
 *   deletes it from the plan), and backs off (1 s doubling to 5 min) after a retryable failure;
 * - none: once the first entry after the cursor is the window old (`usageMeterWindowMs`), reads the
 *   entries after the cursor (only of writers that have finished, so nothing lands behind it), sums
 *   those of each balance (customer, meter, period) into one planned send, and moves the cursor past
 *   what it read. The next pass sends.
 * The plan and the cursor's move commit together, and a send leaves the plan only in a transaction
 * after the provider took it: a crash in between sends the same identifier and value again, which
 * the provider counts once. Stripe sums a meter's events over the period, so one event of the sum
 * bills what the entries would. Nothing of this runs on the callers' path.
 */
export class MeterEventRelay {
  private readonly counts: MeterRelayStats = { sent: 0, retried: 0, refused: 0, lagSeconds: 0, failingFor: 0 };

  constructor(
    private readonly deps: {
      uow: UnitOfWork;
      clock: Clock;
      ids: IdGenerator;
      payments: Pick<PaymentProvider, 'name' | 'sendMeterEvent'>;
      logger?: Logger;
      limits?: Partial<CoreLimits>;
      /** Planned sends one pass sends at most. */
      batch?: number;
      /** Entries one planning pass reads at most. */
      read?: number;
      concurrency?: number;
    },
  ) {}

  stats(): MeterRelayStats {
    return { ...this.counts };
  }

  /** One pass: sends planned events, or plans the entries after the cursor once they are the window old. */
  async pass(): Promise<MeterRelayPass> {
    const send = this.deps.payments.sendMeterEvent?.bind(this.deps.payments);
    const idle: MeterRelayPass = { ran: false, sent: 0, passed: 0, refused: 0, planned: 0, failed: false, more: false };
    if (!send) return idle;
    const provider = this.deps.payments.name;
    const batch = this.deps.batch ?? RELAY_BATCH;
    return this.deps.uow.run(async (r) => {
      const cursor = await r.usage.claimMeterRelay(provider);
      const now = this.deps.clock.now();
      if (!cursor || (cursor.nextAttemptAt && cursor.nextAttemptAt > now)) return idle;
      // One more than a batch: the first left over says whether more wait and how old they are.
      const planned = await r.usage.plannedMeterSends(provider, batch + 1);
      if (planned.length) return this.sendPlanned(r, cursor, planned.slice(0, batch), planned[batch], now, send);
      return this.plan(r, cursor, now);
    });
  }

  private async sendPlanned(
    r: Repositories,
    cursor: MeterRelayCursor,
    sends: MeterSend[],
    after: MeterSend | undefined,
    now: Date,
    send: Send,
  ): Promise<MeterRelayPass> {
    const provider = cursor.name;
    const outcomes = await this.sendAll(sends, send);
    const out: MeterRelayPass = { ran: true, sent: 0, passed: 0, refused: 0, planned: 0, failed: false, more: false };
    const done: string[] = [];
    const kept: MeterSend[] = [];
    let failure: { send: MeterSend; message: string } | undefined;
    for (let i = 0; i < sends.length; i++) {
      const s = sends[i];
      const o = outcomes[i];
      if (o?.ok) {
        out.sent++;
        done.push(s.id);
      } else if (!o || o.retryable) {
        // Not tried (a window before failed), or failed for now: it stays planned, same identifier.
        kept.push(s);
        if (o && !failure) failure = { send: s, message: o.message };
      } else {
        out.refused++;
        done.push(s.id);
        await r.usage.saveMeterEventFailure({
          sendId: s.id,
          provider,
          organisationId: s.organisationId,
          isTest: s.isTest,
          owner: s.owner,
          meterSlug: s.meterSlug,
          customerId: s.customerId,
          value: s.value,
          timestamp: s.timestamp,
          entries: s.entries,
          error: o.message,
          failedAt: now,
        });
        this.deps.logger?.error('usage meter event refused', {
          provider,
          send: s.id,
          owner: s.owner,
          meter: s.meterSlug,
          value: s.value,
          entries: s.entries,
          error: o.message,
        });
      }
    }
    if (done.length) await r.usage.deleteMeterSends(provider, done);
    const next: MeterRelayCursor = failure
      ? {
          ...cursor,
          attempts: cursor.attempts + 1,
          nextAttemptAt: new Date(now.getTime() + relayBackoffMs(cursor.attempts + 1)),
          lastError: failure.message,
          updatedAt: now,
        }
      : { ...cursor, attempts: 0, nextAttemptAt: null, lastError: null, updatedAt: now };
    if (failure) {
      out.failed = true;
      this.deps.logger?.error('usage meter event failed, will retry', {
        provider,
        send: failure.send.id,
        attempts: next.attempts,
        retryAt: next.nextAttemptAt?.toISOString(),
        error: failure.message,
      });
    }
    if (next.attempts !== cursor.attempts || next.lastError !== cursor.lastError) await r.usage.saveMeterRelay(next);
    // Sends come earliest entries first: the oldest unsent entry is in a kept send or the next one.
    const left = [...kept, ...(after ? [after] : [])];
    if (left.length) this.counts.lagSeconds = this.ageOf(Math.min(...left.map((s) => s.firstEntryAt.getTime())), now);
    else this.counts.lagSeconds = await this.pendingLag(r, cursor, now);
    // After a failure the backoff decides; otherwise go on (send the rest, or plan what waits).
    out.more = !failure;
    this.counts.sent += out.sent;
    this.counts.refused += out.refused;
    this.counts.retried += failure ? 1 : 0;
    this.counts.failingFor = next.attempts;
    return out;
  }

  private async plan(r: Repositories, cursor: MeterRelayCursor, now: Date): Promise<MeterRelayPass> {
    const out: MeterRelayPass = { ran: true, sent: 0, passed: 0, refused: 0, planned: 0, failed: false, more: false };
    const windowMs = limitsOf(this.deps).usageMeterWindowMs;
    this.counts.failingFor = cursor.attempts;
    if (windowMs > 0) {
      // Sums grow with the window: wait until the first entry after the cursor is that old.
      const peek = await r.usage.pendingMeterEvents(cursor, 1);
      const first = peek.events[0];
      if (!first || now.getTime() - first.createdAt.getTime() < windowMs) {
        // Nothing waits: the cursor may start past everything finished (later scans stay short).
        if (!first && peek.end !== cursor.position) await r.usage.saveMeterRelay({ ...cursor, position: peek.end, updatedAt: now });
        this.counts.lagSeconds = first ? this.ageOf(first.createdAt.getTime(), now) : 0;
        return out;
      }
    }
    const limit = this.deps.read ?? RELAY_READ;
    const { events, end } = await r.usage.pendingMeterEvents(cursor, limit);
    const full = events.length >= limit;
    const groups = new Map<string, PendingMeterEvent[]>();
    for (const e of events) {
      if (!e.customerId) {
        out.passed++;
        continue;
      }
      // Never across two balances: a balance is one holder, meter and period.
      const key = `${e.customerId}\u0000${e.meterSlug}\u0000${e.balanceId}`;
      const group = groups.get(key);
      if (group) group.push(e);
      else groups.set(key, [e]);
    }
    const sends: MeterSend[] = [...groups.values()].map((group) => {
      const e = group[0];
      let value = '0';
      let first = e.createdAt;
      let last = e.createdAt;
      for (const g of group) {
        value = addDecimals(value, g.value);
        if (g.createdAt < first) first = g.createdAt;
        if (g.createdAt > last) last = g.createdAt;
      }
      return {
        id: this.deps.ids.newId(),
        provider: cursor.name,
        organisationId: e.organisationId,
        isTest: e.isTest,
        owner: e.owner,
        meterSlug: e.meterSlug,
        customerId: e.customerId as string,
        value,
        timestamp: last,
        firstEntryAt: first,
        entries: group.length,
        createdAt: now,
      };
    });
    if (sends.length) await r.usage.planMeterSends(sends);
    out.planned = events.length - out.passed;
    const position = full ? events[events.length - 1].position : end;
    if (position !== cursor.position) await r.usage.saveMeterRelay({ ...cursor, position, updatedAt: now });
    out.more = sends.length > 0 || full;
    // A loop, not Math.min(...): a read may make 20 000 sends.
    const oldest = sends.reduce<number | undefined>(
      (m, s) => (m === undefined ? s.firstEntryAt.getTime() : Math.min(m, s.firstEntryAt.getTime())),
      undefined,
    );
    this.counts.lagSeconds =
      oldest === undefined ? (full ? this.ageOf(events[events.length - 1].createdAt.getTime(), now) : 0) : this.ageOf(oldest, now);
    return out;
  }

  /** The age of the first entry after the cursor (0: none waits). */
  private async pendingLag(r: Repositories, cursor: MeterRelayCursor, now: Date): Promise<number> {
    const first = (await r.usage.pendingMeterEvents(cursor, 1)).events[0];
    return first ? this.ageOf(first.createdAt.getTime(), now) : 0;
  }

  private ageOf(ms: number, now: Date): number {
    return Math.max(0, (now.getTime() - ms) / 1000);
  }

  /**
   * Sends the batch in order, RELAY_CONCURRENCY at a time; stops after a window with a retryable
   * failure (undefined: not tried).
   */
  private async sendAll(sends: MeterSend[], send: Send): Promise<(MeterEventOutcome | undefined)[]> {
    const out: (MeterEventOutcome | undefined)[] = new Array(sends.length).fill(undefined);
    const width = this.deps.concurrency ?? RELAY_CONCURRENCY;
    for (let i = 0; i < sends.length; i += width) {
      const window = sends.slice(i, i + width);
      const answers = await Promise.all(
        window.map(async (s): Promise<MeterEventOutcome> => {
          try {
            return await send({
              eventName: s.meterSlug,
              customerId: s.customerId,
              value: s.value,
              identifier: s.id,
              timestamp: s.timestamp,
              isTest: s.isTest,
            });
          } catch (error) {
            return { ok: false as const, retryable: true, message: error instanceof Error ? error.message : String(error) };
          }
        }),
      );
      answers.forEach((a, k) => (out[i + k] = a));
      if (answers.some((a) => !a.ok && a.retryable)) break;
    }
    return out;
  }
}
