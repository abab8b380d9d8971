import type { Container } from 'inversify';
import { createV1Router, v1Serves } from '@tollgate/app-v1';
import { createSandboxRouter, type SandboxPaymentProvider } from '@tollgate/adapter-sandbox';
import type { CheckoutService, SubscriptionService } from '@tollgate/core';
import { TOKENS } from '@tollgate/runtime';
import type { ServerGenerations } from './app';

/** The generations this build mounts next to legacy, and the sandbox's hosted pages. */
export function generations(container: Container): ServerGenerations {
  return {
    v1: { router: createV1Router(container), serves: v1Serves },
    sandbox: {
      router: createSandboxRouter({
        checkout: container.get<CheckoutService>(TOKENS.Checkout),
        subscriptions: container.get<SubscriptionService>(TOKENS.Subscriptions),
        provider: container.get<SandboxPaymentProvider>(TOKENS.Sandbox),
      }),
    },
  };
}
