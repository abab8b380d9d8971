import { ErrorCodes, fail, invalid } from '../../errors';
import type { DeliveryAttempt, Id, Page, Tenant, WebhookEndpoint, WebhookEventType } from '../../model';
import { WEBHOOK_EVENT_TYPES } from '../../model';
import { assertAccessible } from '../../domain/tenancy';
import { canonicalEventType } from '../../domain/event-types';
import type { WebhookSender, WebhookSigner } from '../../ports';
import type { CoreDeps } from '../deps';

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

export type PageQuery = { limit: number; after?: string; before?: string };

/** The event types of a request (in either spelling, `subscription.created` or `subscription_created`), each known, without repeats. */
export function eventTypesOf(raw: string[] | undefined): WebhookEventType[] {
  const events = new Set<WebhookEventType>();
  for (const e of raw ?? []) {
    const type = canonicalEventType(e);
    if (!type) return invalid('events', `${e} is not an event type (${WEBHOOK_EVENT_TYPES.join(', ')})`);
    events.add(type);
  }
  return [...events];
}

const unavailable = () => fail(ErrorCodes.CONFLICT, 'webhooks are not available in this deployment');

/** Webhook endpoints as vendors register and manage them, with their attempts (catalog routes, CLI). */
export class WebhookEndpoints {
  constructor(private readonly deps: Pick<CoreDeps, 'uow' | 'clock' | 'ids' | 'cipher' | 'webhooks' | 'webhookSigner'>) {}

  private get sender(): WebhookSender {
    return this.deps.webhooks ?? unavailable();
  }

  private get signer(): WebhookSigner {
    return this.deps.webhookSigner ?? unavailable();
  }

  private urlOf(raw: string): string {
    const refusal = this.sender.refusal(raw);
    if (refusal) invalid('url', refusal);
    return new URL(raw).toString();
  }

  async create(tenant: Tenant, input: EndpointInput & { url: string }): Promise<CreatedEndpoint> {
    const url = this.urlOf(input.url);
    const events = eventTypesOf(input.events);
    const secret = this.signer.newSecret();
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
    const events = input.events === undefined ? undefined : eventTypesOf(input.events);
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
}
