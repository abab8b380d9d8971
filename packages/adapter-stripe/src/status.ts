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
    /**
     * Retries are exhausted and the subscription was left open (Stripe's "mark the subscription as
     * unpaid"): no access (its licenses grant nothing, though Stripe moves the period on) until
     * an invoice is paid and Stripe reports it active again.
     */
    case 'unpaid':
      return 'UNPAID';
    /** Ended. */
    case 'canceled':
      return 'CANCELED';
    /** The first payment needs action (e.g. strong customer authentication); it has not started, so no new access. */
    case 'incomplete':
      return 'PAST_DUE';
    /** The first payment never completed: the subscription is over. */
    case 'incomplete_expired':
      return 'CANCELED';
    /** A trial ended without a payment method (or paused by hand): no access until it resumes (active again). */
    case 'paused':
      return 'PAUSED';
    default:
      return 'PAST_DUE';
  }
}
