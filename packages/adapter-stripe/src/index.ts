export { StripePaymentProvider, type StripeProviderConfig, type StripeSubscriptionView } from './provider';
export { createStripeWebhookRouter, snapshotOf, type StripeWebhookDeps } from './webhooks';
export { domainStatus, type StripeSubscriptionStatus } from './status';
export { stripeKeyMode } from './keys';
