import type { Id, Owned } from './common';

/** What a vendor's endpoint may subscribe to (DESIGN section 12), each written with its change. */
export const WEBHOOK_EVENT_TYPES = [
  'subscription.created',
  'subscription.updated',
  'subscription.cancelled',
  'license.created',
  'license.updated',
  'license.cancelled',
  'seats.changed',
  'checkout.completed',
  'product.updated',
  'plan.updated',
  'usage.recorded',
  'usage.threshold',
  'usage.finalised',
  // The published catalog API's types that have no change of their own here yet: accepted so an
  // endpoint registered with them is valid, never written (docs/decisions.md, "Commerce resources").
  'receipt.created',
  'owner.updated',
] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/** A vendor's receiver of one organisation and mode. */
export interface WebhookEndpoint extends Owned {
  url: string;
  description: string | null;
  /** The event types it receives; empty: every type. */
  events: WebhookEventType[];
  /** The Standard Webhooks secret (`whsec_...`), sealed at rest under the master secret. */
  sealedSecret: string;
  /** Set when deliveries kept failing for the whole retry window; a disabled endpoint receives nothing. */
  disabledAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

/** One change as vendors see it: written in the transaction of the change it describes (the outbox). */
export interface OutboxEvent extends Owned {
  type: WebhookEventType;
  /** Events of one key reach an endpoint in the order they were written (a subscription, or an ad hoc license). */
  orderingKey: Id;
  /** What is POSTed: `{type, timestamp, data}`. */
  payload: { type: WebhookEventType; timestamp: string; data: unknown };
  createdAt: Date;
}

/** pending: due at `nextAttemptAt`; delivered: a 2xx came back; failed: the retry window ended. */
export type DeliveryStatus = 'pending' | 'delivered' | 'failed';

/** The way of one event to one endpoint. */
export interface OutboxDelivery {
  id: Id;
  eventId: Id;
  endpointId: Id;
  organisationId: Id;
  orderingKey: Id;
  status: DeliveryStatus;
  attempts: number;
  nextAttemptAt: Date;
  /** While a worker POSTs it: until when it is that worker's (a crashed worker's lease runs out). */
  lockedUntil: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

/** One POST of a delivery, as recorded for the vendor to read. */
export interface DeliveryAttempt {
  id: Id;
  deliveryId: Id;
  endpointId: Id;
  eventId: Id;
  /** The receiver's status; null when no answer came (timeout, refused, unreachable). */
  responseStatus: number | null;
  /** The receiver's body, truncated; or why there was none. */
  responseBody: string | null;
  durationMs: number;
  createdAt: Date;
}
