import type { Id, Interval, Owned } from './common';

export type CartStatus = 'active' | 'abandoned' | 'complete';

/** Quantities asked for a plan's line items, by line item slug (the published API's cart-item metadata). */
export type LineItemQuantities = Record<string, { quantity: number }>;

/** A plan in a cart, for a grantee (default: the owner). */
export interface CartItem {
  id: Id;
  planId: Id;
  granteeId: string | null;
  /** Bought for this group (its members get the seats); its `granteeId` is then null. */
  groupId: Id | null;
  metadata: LineItemQuantities | null;
  /** The checkout session that sells it, once the cart went to checkout. */
  checkoutSessionId: Id | null;
  createdAt: Date;
  updatedAt: Date;
}

/**
 * Plans an owner is about to buy together (the published catalog API's cart): one billing
 * interval and currency for all of them; checked out through the payment provider, plan by plan.
 */
export interface Cart extends Owned {
  /** The owner (the customer who pays). */
  customerId: Id;
  currency: string | null;
  interval: Interval | null;
  intervalCount: number | null;
  status: CartStatus;
  items: CartItem[];
  createdAt: Date;
  updatedAt: Date;
}
