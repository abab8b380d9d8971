import { ErrorCodes, fail, invalid } from '../../errors';
import type { DeliveryAttempt, Id, OutboxEvent, Page, Tenant, WebhookEndpoint, WebhookEventType } from '../../model';
import { WEBHOOK_EVENT_TYPES } from '../../model';
import { assertAccessible } from '../../domain/tenancy';
import { newWebhookSecret, nextWebhookAttempt, webhookHeaders } from '../../domain/webhook-signature';
import type { Repositories, WebhookSender } from '../../ports';
import { limitsOf, type CoreDeps } from '../deps';
import { newDelivery, receives } from './outbox';

export interface EndpointInput {
  url?: string;
  events?: string[];
  description?: string | null;
  /** false: stop deliveries; true: deliver again (a disabled endpoint is enabled). */
  enabled?: boolean;
}

/** An endpoint as created: the only time its secret is shown. */
export interface CreatedEndpoint {
  endpoint: WebhookEndpoint;
  secret: string;
}

/** How much of a receiver's answer an attempt keeps. */
export const ATTEMPT_BODY_LIMIT = 1024;

type PageQuery = { limit: number; after?: string; before?: string };

/** Endpoints, events and attempts as vendors manage and read them (catalog routes, CLI). */
export class WebhookService {
  constructor(private readonly deps: CoreDeps) {}

  private get sender(): WebhookSender {
    return this.deps.webhooks ?? fail(ErrorCodes.CONFLICT, 'webhooks are not available in this deployment');
  }

  private eventsOf(raw: string[] | undefined): WebhookEventType[] {
    const events = [...new Set(raw ?? [])];
    for (const e of events)
      if (!(WEBHOOK_EVENT_TYPES as readonly string[]).includes(e))
        invalid('events', `${e} is not an event type (${WEBHOOK_EVENT_TYPES.join(', ')})`);
    return events as WebhookEventType[];
  }

  private urlOf(raw: string): string {
    const refusal = this.sender.refusal(raw);
    if (refusal) invalid('url', refusal);
    return new URL(raw).toString();
  }

  async create(tenant: Tenant, input: EndpointInput & { url: string }): Promise<CreatedEndpoint> {
    const url = this.urlOf(input.url);
    const events = this.eventsOf(input.events);
    const secret = newWebhookSecret();
    const now = this.deps.clock.now();
    const endpoint: WebhookEndpoint = {
      id: this.deps.ids.newId(),
      organisationId: tenant.organisationId,
      isTest: tenant.isTest,
      url,
      description: input.description ?? null,
      events,
      sealedSecret: this.deps.cipher.seal(Buffer.from(secret, 'utf8')),
      disabledAt: input.enabled === false ? now : null,
      createdAt: now,
      updatedAt: now,
    };
    await this.deps.uow.run((r) => r.webhooks.saveEndpoint(endpoint));
    return { endpoint, secret };
  }

  async get(tenant: Tenant, id: Id): Promise<WebhookEndpoint> {
    return this.deps.uow.read(async (r) => assertAccessible(await r.webhooks.getEndpoint(id), tenant, 'webhook endpoint'));
  }

  async list(tenant: Tenant, query: PageQuery): Promise<Page<WebhookEndpoint>> {
    return this.deps.uow.read((r) => r.webhooks.pageEndpoints(tenant, query));
  }

  async update(tenant: Tenant, id: Id, input: EndpointInput): Promise<WebhookEndpoint> {
    const url = input.url === undefined ? undefined : this.urlOf(input.url);
    const events = input.events === undefined ? undefined : this.eventsOf(input.events);
    return this.deps.uow.run(async (r) => {
      const current = assertAccessible(await r.webhooks.getEndpoint(id), tenant, 'webhook endpoint');
      const now = this.deps.clock.now();
      const next: WebhookEndpoint = {
        ...current,
        url: url ?? current.url,
        events: events ?? current.events,
        description: input.description === undefined ? current.description : input.description,
        disabledAt: input.enabled === undefined ? current.disabledAt : input.enabled ? null : (current.disabledAt ?? now),
        updatedAt: now,
      };
      await r.webhooks.saveEndpoint(next);
      return next;
    });
  }

  async delete(tenant: Tenant, id: Id): Promise<void> {
    await this.deps.uow.run(async (r) => {
      assertAccessible(await r.webhooks.getEndpoint(id), tenant, 'webhook endpoint');
      await r.webhooks.deleteEndpoint(id);
    });
  }

  /** The endpoint's secret (to verify signatures with), for its owner. */
  async secret(tenant: Tenant, id: Id): Promise<string> {
    const endpoint = await this.get(tenant, id);
    return this.deps.cipher.open(endpoint.sealedSecret).toString('utf8');
  }

  async attempts(tenant: Tenant, id: Id, query: PageQuery): Promise<Page<DeliveryAttempt>> {
    return this.deps.uow.read(async (r) => {
      assertAccessible(await r.webhooks.getEndpoint(id), tenant, 'webhook endpoint');
      return r.webhooks.pageAttempts(id, query);
    });
  }

  async events(tenant: Tenant, query: PageQuery & { type?: string }): Promise<Page<OutboxEvent>> {
    const type = query.type === undefined ? undefined : this.eventsOf([query.type])[0];
    return this.deps.uow.read((r) => r.outbox.page(tenant, { ...query, type }));
  }

  async event(tenant: Tenant, id: Id): Promise<OutboxEvent> {
    return this.deps.uow.read(async (r) => assertAccessible(await r.outbox.get(id), tenant, 'event'));
  }

  /** Delivers the event again: to one endpoint of the tenant, or to every enabled endpoint that receives its type. */
  async resend(tenant: Tenant, id: Id, endpointId?: Id): Promise<{ event: OutboxEvent; deliveries: number }> {
    const result = await this.deps.uow.run(async (r) => {
      const event = assertAccessible(await r.outbox.get(id), tenant, 'event');
      const endpoints = endpointId
        ? [assertAccessible(await r.webhooks.getEndpoint(endpointId), tenant, 'webhook endpoint')]
        : (await r.webhooks.enabledEndpoints(tenant)).filter((e) => receives(e, event.type));
      if (endpoints.some((e) => e.disabledAt)) fail(ErrorCodes.CONFLICT, 'the endpoint is disabled; enable it (PATCH enabled: true) first');
      const now = this.deps.clock.now();
      await r.webhooks.addDeliveries(endpoints.map((e) => newDelivery(this.deps.ids.newId(), event, e.id, now)));
      return { event, deliveries: endpoints.length };
    });
    if (result.deliveries) this.deps.events.wake();
    return result;
  }

  /**
   * Forgets events older than the retention (`WEBHOOK_EVENT_RETENTION_DAYS`) that no delivery
   * waits for, a batch at a time; returns how many. Any instance may run it.
   */
  async purge(batch = 1000): Promise<number> {
    const before = new Date(this.deps.clock.now().getTime() - limitsOf(this.deps).webhookEventRetentionMs);
    return this.deps.uow.run((r) => r.outbox.purge(before, batch));
  }

  /** Pending deliveries of every organisation (metrics). */
  async depth(): Promise<number> {
    return this.deps.uow.read((r) => r.webhooks.countPending());
  }

  /**
   * Delivers one due delivery; false when none was due. The delivery is leased in a short
   * transaction, POSTed outside any, and its attempt recorded in another: any instance may run
   * this, and a delivery is POSTed by one of them at a time (a crashed worker's lease runs out and
   * another takes it up: at least once).
   */
  async deliverNext(): Promise<boolean> {
    const sender = this.deps.webhooks;
    if (!sender) return false;
    const now = this.deps.clock.now();
    const leaseUntil = new Date(now.getTime() + limitsOf(this.deps).eventLeaseMs);
    const claimed = await this.deps.uow.run(async (r) => {
      const delivery = await r.webhooks.claimNext(now, leaseUntil);
      if (!delivery) return undefined;
      const [event, endpoint] = await Promise.all([r.outbox.get(delivery.eventId), r.webhooks.getEndpoint(delivery.endpointId)]);
      return { delivery, event, endpoint };
    });
    if (!claimed) return false;
    const { delivery, event, endpoint } = claimed;
    if (!event || !endpoint || endpoint.disabledAt) {
      await this.deps.uow.run((r) => this.finish(r, delivery.id, leaseUntil, { status: 'failed' }));
      return true;
    }
    const body = JSON.stringify(event.payload);
    const secret = this.deps.cipher.open(endpoint.sealedSecret).toString('utf8');
    const started = Date.now();
    const response = await sender.send({ url: endpoint.url, headers: webhookHeaders(secret, event.id, this.deps.clock.now(), body), body });
    const durationMs = Date.now() - started;
    const at = this.deps.clock.now();
    const ok = response.status !== null && response.status >= 200 && response.status < 300;
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
      // A delivery that failed for the whole retry window: the endpoint has been failing for 3 days.
      if (!ok && !next) {
        const current = await r.webhooks.getEndpoint(endpoint.id);
        if (current && !current.disabledAt) await r.webhooks.saveEndpoint({ ...current, disabledAt: at, updatedAt: at });
      }
    });
    return true;
  }

  /** Delivers due deliveries until none is left; returns how many were tried. */
  async drain(max = 1000): Promise<number> {
    let n = 0;
    while (n < max && (await this.deliverNext())) n++;
    return n;
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
