import type { CheckoutOptions } from './checkout';
import type { Id, Owned } from './common';

export type CheckoutSessionStatus = 'open' | 'completed' | 'canceled';

/** A checkout link handed out: what was asked for, until the provider reports it paid. */
/** A plan bought beside a checkout's own (a cart of several plans): its seats and who gets them. */
export interface CheckoutItem {
  planId: Id;
  quantity: number;
  /** Who gets the first seat (null: the group's members, or nobody). */
  granteeId: string | null;
  /** Bought for this group: its members get the seats. */
  groupId: Id | null;
}

export interface CheckoutSession extends Owned {
  productId: Id;
  planId: Id;
  /** Who gets the first seat (a group purchase: `grp_<groupId>`, shown as asked). */
  granteeId: string;
  /** Bought for this group: the seats go to its members when the checkout is paid. */
  groupId: Id | null;
  /** The other plans bought in the same checkout (a cart's), each added to the one subscription it makes. */
  extraItems: CheckoutItem[];
  member: string;
  successUrl: string;
  cancelUrl: string;
  options: CheckoutOptions;
  provider: string;
  /** The provider's id of the session (Stripe: `cs_...`), once it has one. */
  providerSessionId: string | null;
  status: CheckoutSessionStatus;
  subscriptionId: Id | null;
  createdAt: Date;
  completedAt: Date | null;
}

export type BillingDocumentKind = 'invoice' | 'payment_method' | 'coupon';

/**
 * A record a payment provider asked us to keep for it (the sandbox keeps its invoices and test
 * card here); `body` is in the provider's own shape.
 */
export interface BillingDocument {
  id: string;
  organisationId: Id;
  subscriptionId: Id;
  kind: BillingDocumentKind;
  body: Record<string, unknown>;
  createdAt: Date;
}

/** A write answered under an `idempotency-key`: replayed for the same request within 24 hours. */
/**
 * What an idempotency key belongs to: the organisation, the mode of the key that sent it (live or
 * test), the key itself and the route (method and path). A replay never crosses any of them.
 */
export interface IdempotencyScope {
  organisationId: Id;
  isTest: boolean;
  key: string;
  /** Method and path (no query), e.g. `POST /api/products`. */
  route: string;
}

export interface IdempotencyRecord extends IdempotencyScope {
  /** Method, path and body hash of the first request. */
  fingerprint: string;
  /** The answer; null only inside the transaction of the request that claimed the key. */
  status: number | null;
  body: unknown;
  createdAt: Date;
}
