import type { DeliveryAttempt, Id, OutboxDelivery, OutboxEvent, Page, Tenant, WebhookEndpoint } from '../../model';
import { assertAccessible } from '../../domain/tenancy';
import type { Repositories } from '../../ports';
import type { CoreDeps } from '../deps';
import type { PageQuery } from './endpoints';
import { newDelivery } from './outbox';
import { refuseDisabled, resendOrGone } from './events';

/**
 * The deliveries of events to endpoints, as the published catalog API names them: a destination is
 * one event's way to one endpoint (a delivery), an event attempt one POST of it. Tenancy follows
 * the endpoint (a delivery is of its endpoint's organisation and mode).
 */
export class WebhookDestinations {
  constructor(private readonly deps: Pick<CoreDeps, 'uow' | 'clock' | 'ids' | 'events'>) {}

  private async accessible(r: Repositories, tenant: Tenant, id: Id): Promise<{ delivery: OutboxDelivery; endpoint: WebhookEndpoint }> {
    const delivery = await r.webhooks.getDelivery(id);
    const endpoint = delivery ? await r.webhooks.getEndpoint(delivery.endpointId) : undefined;
    assertAccessible(endpoint, tenant, 'destination');
    return { delivery: delivery as OutboxDelivery, endpoint: endpoint as WebhookEndpoint };
  }

  /** A page of the tenant's destinations; of one event (which must be the tenant's) when named. */
  async list(tenant: Tenant, query: PageQuery & { eventId?: Id }): Promise<Page<OutboxDelivery>> {
    return this.deps.uow.read(async (r) => {
      if (query.eventId) assertAccessible(await r.outbox.get(query.eventId), tenant, 'event');
      return r.webhooks.pageDeliveries(tenant, query);
    });
  }

  /** One destination with its endpoint. */
  async get(tenant: Tenant, id: Id): Promise<{ delivery: OutboxDelivery; endpoint: WebhookEndpoint }> {
    return this.deps.uow.read((r) => this.accessible(r, tenant, id));
  }

  /** A page of the tenant's attempts, numbered within their destination; of one destination when named. */
  async attempts(tenant: Tenant, query: PageQuery & { deliveryId?: Id }): Promise<Page<DeliveryAttempt & { number: number }>> {
    return this.deps.uow.read(async (r) => {
      if (query.deliveryId) await this.accessible(r, tenant, query.deliveryId);
      return r.webhooks.pageTenantAttempts(tenant, query);
    });
  }

  /** An event's destinations (its first `limit`), each with its endpoint: what an event's `expand=destinations` shows. */
  async ofEvent(tenant: Tenant, eventId: Id, limit: number): Promise<{ page: Page<OutboxDelivery>; endpoints: Map<Id, WebhookEndpoint> }> {
    return this.deps.uow.read(async (r) => {
      const page = await r.webhooks.pageDeliveries(tenant, { limit, eventId });
      const endpoints = new Map<Id, WebhookEndpoint>();
      for (const id of new Set(page.items.map((d) => d.endpointId))) {
        const e = await r.webhooks.getEndpoint(id);
        if (e) endpoints.set(id, e);
      }
      return { page, endpoints };
    });
  }

  /** An endpoint's destinations (its first `limit`), each with its event: what a webhook's `expand=destinations` shows. */
  async ofEndpoint(tenant: Tenant, endpointId: Id, limit: number): Promise<{ page: Page<OutboxDelivery>; events: Map<Id, OutboxEvent> }> {
    return this.deps.uow.read(async (r) => {
      const page = await r.webhooks.pageDeliveries(tenant, { limit, endpointId });
      const events = new Map<Id, OutboxEvent>();
      for (const id of new Set(page.items.map((d) => d.eventId))) {
        const e = await r.outbox.get(id);
        if (e) events.set(id, e);
      }
      return { page, events };
    });
  }

  /**
   * Sends the destination's event to its endpoint again: a pending delivery is made due now (its
   * next attempt comes at once); a finished one gets a new delivery of the same event. Refused
   * (409) while the endpoint is disabled, as an event's resend is: the delivery would fail unsent.
   * A destination whose event the retention purge removed is gone with it (404).
   */
  async resend(tenant: Tenant, id: Id): Promise<void> {
    const found = await this.get(tenant, id);
    await resendOrGone(this.deps, tenant, found.delivery.eventId, () =>
      this.deps.uow.run(async (r) => {
        const { delivery, endpoint } = await this.accessible(r, tenant, id);
        refuseDisabled([endpoint]);
        const now = this.deps.clock.now();
        // The event first, then its delivery: the order of the retention purge (it locks the event,
        // then its delete cascades to the deliveries). Locking the delivery first and the event at
        // the new delivery's insert deadlocked with a purge in between.
        const event = await r.webhooks.getEventForDelivery(delivery.eventId);
        if (!event) assertAccessible(undefined, tenant, 'destination');
        const locked = (await r.webhooks.getDeliveryForUpdate(id)) ?? delivery;
        if (locked.status === 'pending') {
          await r.webhooks.saveDelivery({ ...locked, nextAttemptAt: now, updatedAt: now });
          return;
        }
        await r.webhooks.addDeliveries([newDelivery(this.deps.ids.newId(), event as OutboxEvent, locked.endpointId, now)]);
      }),
    );
    this.deps.events.wake();
  }
}
