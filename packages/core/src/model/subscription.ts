import type { Id, Owned } from './common';

export type SubscriptionStatus = 'ACTIVE' | 'TRIALING' | 'PAST_DUE' | 'CANCELED';

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
  lineItemIds: Id[];
  createdAt: Date;
  updatedAt: Date;
}
