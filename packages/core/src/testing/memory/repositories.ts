import type { Repositories } from '../../ports';
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
import type { Changed, Tables } from './tables';
import { webhookEventRepository } from './webhook-events';
import { outboxRepository, webhookRepository } from './webhooks';
import { memoryUsageRepository } from './usage';
import { peopleRepository } from './people';
import { memoryCartRepository } from './carts';

/** Every repository over the in-memory tables, mirroring adapter-postgres's `src/repositories/`. */
export function repositories(db: Tables, changed: Changed = () => undefined): Repositories {
  return {
    organisations: organisationRepository(db),
    apiKeys: apiKeyRepository(db, changed),
    paymentIntegrations: paymentIntegrationRepository(db),
    currencies: currencyRepository(db),
    products: productRepository(db, changed),
    plans: planRepository(db, changed),
    pricingTables: pricingTableRepository(db),
    customers: customerRepository(db),
    subscriptions: subscriptionRepository(db),
    licenses: licenseRepository(db, changed),
    events: eventRepository(db),
    signingKeys: signingKeyRepository(db, changed),
    checkoutSessions: checkoutSessionRepository(db),
    carts: memoryCartRepository(db),
    billingDocuments: billingDocumentRepository(db),
    webhookEvents: webhookEventRepository(db),
    idempotency: idempotencyRepository(db),
    outbox: outboxRepository(db),
    webhooks: webhookRepository(db),
    usage: memoryUsageRepository(db),
    people: peopleRepository(db),
  };
}
