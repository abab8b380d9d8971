import type { SubscriptionStatus } from '@tollgate/core';

/** Stripe's subscription statuses as of API 2026-10 (unknown future values fall back to PAST_DUE). */
export type StripeSubscriptionStatus =
  'active' | 'trialing' | 'past_due' | 'unpaid' | 'canceled' | 'incomplete' | 'incomplete_expired' | 'paused';

/** The domain status of a Stripe subscription status. */
export function domainStatus(status: string): SubscriptionStatus {
  switch (status as StripeSubscriptionStatus) {
    /** Paid and running. */
    case 'active':
      return 'ACTIVE';
    /** In its free trial: running, access granted. */
    case 'trialing':
      return 'TRIALING';
    /** A renewal payment failed and Stripe is retrying: still running, access kept meanwhile. */
    case 'past_due':
      return 'PAST_DUE';
    /** Retries are exhausted but the subscription was left open: treated like past due until it is canceled. */
    case 'unpaid':
      return 'PAST_DUE';
    /** Ended. */
    case 'canceled':
      return 'CANCELED';
    /** The first payment needs action (e.g. strong customer authentication); it has not started, so no new access. */
    case 'incomplete':
      return 'PAST_DUE';
    /** The first payment never completed: the subscription is over. */
    case 'incomplete_expired':
      return 'CANCELED';
    /** A trial ended without a payment method: paused, treated as past due. */
    case 'paused':
      return 'PAST_DUE';
    default:
      return 'PAST_DUE';
  }
}
