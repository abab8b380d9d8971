import { DomainError, ErrorCodes, fail } from '../../errors';
import type { Id, OutboxEvent, Page, Tenant, WebhookEndpoint } from '../../model';
import { assertAccessible } from '../../domain/tenancy';
import { limitsOf, type CoreDeps } from '../deps';
import { eventTypesOf, type PageQuery } from './endpoints';
import { newDelivery, receives } from './outbox';

/** A resend to a disabled endpoint is refused (409): its delivery would fail without an attempt. */
export function refuseDisabled(endpoints: WebhookEndpoint[]): void {
  if (endpoints.some((e) => e.disabledAt)) fail(ErrorCodes.CONFLICT, 'the endpoint is disabled; enable it (PATCH enabled: true) first');
}

/**
 * Runs a resend of `eventId`; when it collides with the retention purge (the event deleted between
 * reading it and writing its new delivery: the database refuses the delivery's reference, a
 * CONFLICT), answers as for an event that no longer exists (404), which it then is.
 */
export async function resendOrGone<T>(deps: Pick<CoreDeps, 'uow'>, tenant: Tenant, eventId: Id, resend: () => Promise<T>): Promise<T> {
  try {
    return await resend();
  } catch (e) {
    if (e instanceof DomainError && e.code === ErrorCodes.CONFLICT && !(await deps.uow.read((r) => r.outbox.get(eventId))))
      assertAccessible(undefined, tenant, 'event');
    throw e;
  }
}

/** Outgoing events as vendors read and resend them, their retention, and the queue's depth. */
export class WebhookEvents {
  constructor(private readonly deps: Pick<CoreDeps, 'uow' | 'clock' | 'ids' | 'events' | 'limits'>) {}

  /** A page of the tenant's events, of the types named (either spelling) when any are. */
  async list(tenant: Tenant, query: PageQuery & { types?: string[] }): Promise<Page<OutboxEvent>> {
    const types = query.types?.length ? eventTypesOf(query.types) : undefined;
    return this.deps.uow.read((r) => r.outbox.page(tenant, { ...query, types }));
  }

  async get(tenant: Tenant, id: Id): Promise<OutboxEvent> {
    return this.deps.uow.read(async (r) => assertAccessible(await r.outbox.get(id), tenant, 'event'));
  }

  /** Delivers the event again: to one endpoint of the tenant, or to every enabled endpoint that receives its type. */
  async resend(tenant: Tenant, id: Id, endpointId?: Id): Promise<{ event: OutboxEvent; deliveries: number }> {
    const result = await resendOrGone(this.deps, tenant, id, () =>
      this.deps.uow.run(async (r) => {
        const event = assertAccessible(await r.outbox.get(id), tenant, 'event');
        const endpoints = endpointId
          ? [assertAccessible(await r.webhooks.getEndpoint(endpointId), tenant, 'webhook endpoint')]
          : (await r.webhooks.enabledEndpoints(tenant)).filter((e) => receives(e, event.type));
        refuseDisabled(endpoints);
        const now = this.deps.clock.now();
        await r.webhooks.addDeliveries(endpoints.map((e) => newDelivery(this.deps.ids.newId(), event, e.id, now)));
        return { event, deliveries: endpoints.length };
      }),
    );
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
}
