import type { Id, OutboxDelivery, OutboxEvent, WebhookEndpoint } from '../../model';
import { isWebhookSuccess, nextWebhookAttempt, WEBHOOK_MIN_LEASE_MS } from '../../domain/webhook-retries';
import type { Repositories, WebhookSender, WebhookSigner } from '../../ports';
import { limitsOf, type CoreDeps } from '../deps';

/** How much of a receiver's answer an attempt keeps. */
export const ATTEMPT_BODY_LIMIT = 1024;

type Claimed = { delivery: OutboxDelivery; event: OutboxEvent | undefined; endpoint: WebhookEndpoint | undefined; leaseUntil: Date };

/**
 * Delivers due webhooks: fair across organisations and endpoints (the claim takes the tenant and
 * endpoint served longest ago, and none holding its share of live leases), concurrent within an
 * instance (`webhookConcurrency` POSTs at once), in order per endpoint and subscription (a
 * delivery waits while an earlier one of its key is pending). Any instance may run it; a delivery
 * is POSTed by one of them at a time, and a crashed worker's lease runs out for another to take.
 */
export class WebhookDispatcher {
  constructor(private readonly deps: Pick<CoreDeps, 'uow' | 'clock' | 'ids' | 'cipher' | 'webhooks' | 'webhookSigner' | 'limits'>) {}

  /** Delivers one due delivery; false when none could be taken. */
  async deliverNext(): Promise<boolean> {
    const claimed = await this.claim();
    if (!claimed) return false;
    await this.deliver(claimed);
    return true;
  }

  /**
   * Delivers due deliveries, up to `webhookConcurrency` at once, until none is left (or `max` were
   * tried, or `stopped` says to stop); returns how many were tried. A slot that finds nothing to
   * take while others still POST waits for one of them: what they finish may let a waiting delivery
   * of the same key go next. `stopped` is asked before each claim (a process shutting down): once it
   * says so nothing more is claimed, and the deliveries already claimed are POSTed and recorded as
   * usual (one the process does not live to record is taken again when its lease runs out).
   */
  async drain(max = 1000, stopped: () => boolean = () => false): Promise<number> {
    const { webhookConcurrency } = limitsOf(this.deps);
    let tried = 0;
    let delivering = 0;
    let waiting: (() => void)[] = [];
    const slot = async () => {
      while (tried < max && !stopped()) {
        const claimed = await this.claim();
        if (!claimed) {
          // Nothing to take now; only a delivery in flight can change that (its key's next one).
          if (delivering === 0) return;
          await new Promise<void>((wake) => waiting.push(wake));
          continue;
        }
        tried++;
        delivering++;
        try {
          await this.deliver(claimed);
        } finally {
          delivering--;
          const woken = waiting;
          waiting = [];
          woken.forEach((wake) => wake());
        }
      }
    };
    await Promise.all(Array.from({ length: webhookConcurrency }, slot));
    return tried;
  }

  /** Leases the next delivery the fair claim gives, with its event and endpoint, in one short transaction. */
  private async claim(): Promise<Claimed | undefined> {
    if (!this.deps.webhooks) return undefined;
    const limits = limitsOf(this.deps);
    const now = this.deps.clock.now();
    // Never shorter than a POST and its recording: another worker must not take a delivery still being sent.
    const leaseUntil = new Date(now.getTime() + Math.max(limits.eventLeaseMs, WEBHOOK_MIN_LEASE_MS));
    return this.deps.uow.run(async (r) => {
      const delivery = await r.webhooks.claimNext(now, leaseUntil, {
        perEndpoint: limits.webhookPerEndpoint,
        perOrganisation: limits.webhookPerOrganisation,
      });
      if (!delivery) return undefined;
      const [event, endpoint] = await Promise.all([r.outbox.get(delivery.eventId), r.webhooks.getEndpoint(delivery.endpointId)]);
      return { delivery, event, endpoint, leaseUntil };
    });
  }

  /** POSTs a claimed delivery outside any transaction, then records the attempt and the outcome in one. */
  private async deliver({ delivery, event, endpoint, leaseUntil }: Claimed): Promise<void> {
    const sender = this.deps.webhooks as WebhookSender;
    if (!event || !endpoint || endpoint.disabledAt) {
      await this.deps.uow.run((r) => this.finish(r, delivery.id, leaseUntil, { status: 'failed' }));
      return;
    }
    const signer = this.deps.webhookSigner as WebhookSigner;
    const body = JSON.stringify(event.payload);
    const secret = this.deps.cipher.open(endpoint.sealedSecret).toString('utf8');
    const started = this.deps.clock.monotonicMs();
    const response = await sender.send({ url: endpoint.url, headers: signer.headers(secret, event.id, this.deps.clock.now(), body), body });
    const durationMs = Math.round(this.deps.clock.monotonicMs() - started);
    const at = this.deps.clock.now();
    const ok = isWebhookSuccess(response.status);
    const attempts = delivery.attempts + 1;
    const next = ok ? null : nextWebhookAttempt(delivery.createdAt, attempts, at);
    await this.deps.uow.run(async (r) => {
      const recorded = await this.finish(r, delivery.id, leaseUntil, {
        status: ok ? 'delivered' : next ? 'pending' : 'failed',
        attempts,
        nextAttemptAt: next ?? delivery.nextAttemptAt,
      });
      if (!recorded) return;
      await r.webhooks.addAttempt({
        id: this.deps.ids.newId(),
        deliveryId: delivery.id,
        endpointId: endpoint.id,
        eventId: event.id,
        responseStatus: response.status,
        responseBody: (response.status === null ? response.error : response.body).slice(0, ATTEMPT_BODY_LIMIT),
        durationMs,
        createdAt: at,
      });
      // Out of retries: if every attempt to the endpoint failed for this delivery's whole retry
      // window (3 days), it is disabled. One that answers others (a receiver refusing one
      // subscription's events) stays enabled; only this delivery fails. Asked here, under the
      // delivery's lock, in one indexed query (never a walk through the window's attempts that could
      // outlast the lease), so a success committed by another worker before it is seen.
      if (!ok && !next && !(await r.webhooks.succeededSince(endpoint.id, delivery.createdAt))) {
        const current = await r.webhooks.getEndpoint(endpoint.id);
        if (current && !current.disabledAt) await r.webhooks.saveEndpoint({ ...current, disabledAt: at, updatedAt: at });
      }
    });
  }

  /** Ends this worker's lease with the outcome; false when the lease was lost (another worker took it over). */
  private async finish(
    r: Repositories,
    id: Id,
    lease: Date,
    outcome: { status: 'pending' | 'delivered' | 'failed'; attempts?: number; nextAttemptAt?: Date },
  ): Promise<boolean> {
    const current = await r.webhooks.getDeliveryForUpdate(id);
    if (!current || current.status !== 'pending' || current.lockedUntil?.getTime() !== lease.getTime()) return false;
    await r.webhooks.saveDelivery({ ...current, ...outcome, lockedUntil: null, updatedAt: this.deps.clock.now() });
    return true;
  }
}
