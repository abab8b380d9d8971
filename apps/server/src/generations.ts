import type { Container } from 'inversify';
import { createCheckoutStartRouter, createV1Router, v1Serves } from '@tollgate/app-v1';
import { createCatalogMount } from '@tollgate/app-catalog';
import { createSandboxRouter, type SandboxPaymentProvider } from '@tollgate/adapter-sandbox';
import type { CheckoutService, SubscriptionService } from '@tollgate/core';
import { createStripeWebhookRouter } from '@tollgate/adapter-stripe';
import type Stripe from 'stripe';
import type { Logger } from '@tollgate/http';
import { TOKENS, type Config } from '@tollgate/runtime';
import type { ServerGenerations } from './app';

/** The generations this build mounts next to legacy, and the sandbox's hosted pages. */
export function generations(container: Container): ServerGenerations {
  const config = container.get<Config>(TOKENS.Config);
  const checkout = container.get<CheckoutService>(TOKENS.Checkout);
  const subscriptions = container.get<SubscriptionService>(TOKENS.Subscriptions);
  const stripe = container.isBound(TOKENS.Stripe) ? container.get<Stripe>(TOKENS.Stripe) : undefined;
  return {
    webhooks: stripe && config.stripeWebhookSecret
      ? { stripe: createStripeWebhookRouter({ stripe, webhookSecret: config.stripeWebhookSecret, checkout, subscriptions, logger: container.get<Logger>(TOKENS.Logger) }) }
      : {},
    v1: { router: createV1Router(container), serves: v1Serves },
    catalog: { router: createCatalogMount(container) },
    checkoutStart: { router: createCheckoutStartRouter(container) },
    sandbox: {
      router: createSandboxRouter({
        checkout,
        subscriptions,
        provider: container.get<SandboxPaymentProvider>(TOKENS.Sandbox),
      }),
    },
  };
}
