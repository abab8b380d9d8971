import type { Repositories } from '@tollgate/core';
import type { Db } from './db';
import { billingDocumentRepository } from './billing-documents';
import { checkoutSessionRepository } from './checkout-sessions';
import { customerRepository } from './customers';
import { idempotencyRepository } from './idempotency';
import { apiKeyRepository, currencyRepository, organisationRepository, paymentIntegrationRepository } from './organisations';
import { planRepository } from './plans';
import { pricingTableRepository } from './pricing-tables';
import { productRepository } from './products';
import { signingKeyRepository } from './signing-keys';
import { eventRepository, licenseRepository, subscriptionRepository } from './subscriptions';
import { webhookEventRepository } from './webhook-events';
import { outboxRepository, webhookRepository } from './webhooks';
import { usageRepository } from './usage';
import { peopleRepository } from './people';
import { cartRepository } from './carts';

/** Every repository over one typed kysely handle (a transaction, inside the unit of work). */
export function repositories(db: Db): Repositories {
  return {
    organisations: organisationRepository(db),
    apiKeys: apiKeyRepository(db),
    paymentIntegrations: paymentIntegrationRepository(db),
    currencies: currencyRepository(db),
    products: productRepository(db),
    plans: planRepository(db),
    pricingTables: pricingTableRepository(db),
    customers: customerRepository(db),
    subscriptions: subscriptionRepository(db),
    licenses: licenseRepository(db),
    events: eventRepository(db),
    signingKeys: signingKeyRepository(db),
    checkoutSessions: checkoutSessionRepository(db),
    carts: cartRepository(db),
    billingDocuments: billingDocumentRepository(db),
    webhookEvents: webhookEventRepository(db),
    idempotency: idempotencyRepository(db),
    outbox: outboxRepository(db),
    webhooks: webhookRepository(db),
    usage: usageRepository(db),
    people: peopleRepository(db),
  };
}

export type { Db } from './db';
