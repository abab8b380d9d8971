import type { Id, Owned } from './common';

/**
 * `UNPAID` and `PAUSED` (a provider's, e.g. Stripe's `unpaid` and `paused`): still open at the
 * provider, but not paid for: its licenses grant nothing until the provider reports it active again.
 */
export type SubscriptionStatus = 'ACTIVE' | 'TRIALING' | 'PAST_DUE' | 'UNPAID' | 'PAUSED' | 'CANCELED';

/** The customer who pays: the `member` of the checkout, with the provider's customer id. */
export interface Customer extends Owned {
  /** The vendor's identifier of the member (e-mail-style in the contract's examples). */
  value: string;
  emailAddress: string | null;
  paymentCustomerId: string | null;
  createdAt: Date;
  updatedAt: Date;
}

/** One line item of the plan a subscription holds, with an id of its own (the catalog's subscription-plan line item). */
export interface SubscriptionLineItem extends Owned {
  subscriptionId: Id;
  lineItemId: Id;
  createdAt: Date;
  updatedAt: Date;
}

/**
 * A plan a subscription holds beyond its first (`Subscription.planId`): the catalog API's
 * subscription plan, with its own id, seats and line items. Its seats are the subscription's
 * licenses of this plan.
 */
export interface AddedPlan {
  id: Id;
  planId: Id;
  /** Its seats (1 unless the plan is per seat). */
  quantity: number;
  /** Its line items, as `lineItemIds` holds the first plan's. */
  lineItemIds: Id[];
  /**
   * The payment provider's own item of this plan on its subscription (Stripe's subscription item
   * `si_...`), when known: recorded when the plan is added through the provider, or learnt by the
   * provider re-sync from the plan's price. Absent or null: not known.
   */
  paymentItemId?: string | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface Subscription extends Owned {
  productId: Id;
  planId: Id;
  customerId: Id;
  /** The grantee named at checkout; gets the first seat. */
  granteeId: string | null;
  email: string | null;
  paymentProvider: string;
  paymentSubscriptionId: string | null;
  /** The plan's license type at purchase. */
  type: string;
  quantity: number;
  status: SubscriptionStatus;
  currency: string;
  currentPeriodStart: Date;
  currentPeriodEnd: Date;
  cancelAtPeriodEnd: boolean;
  canceledAt: Date | null;
  /** The subscription this one replaced (usage-based plan change). */
  replacesId: Id | null;
  /** The first plan's line items. */
  lineItemIds: Id[];
  /**
   * The plans held beyond the first, in the order they were added; billed with it, on its period
   * and currency. Legacy, v1, v2 and v3 show only the first (`planId`, `quantity`).
   */
  addedPlans: AddedPlan[];
  createdAt: Date;
  updatedAt: Date;
}
