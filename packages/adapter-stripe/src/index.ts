export { StripePaymentProvider, unsellableAtStripe, type StripeProviderConfig, type StripeSubscriptionView } from './provider';
export { createStripeWebhookRouter, renewedPeriod, snapshotOf, type StripeWebhookDeps } from './webhooks';
export { domainStatus, type StripeSubscriptionStatus } from './status';
export { stripeKeyMode } from './keys';
