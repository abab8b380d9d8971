import type { Core } from '@tollgate/core';
import type { Route } from '@tollgate/http';
import { catalogFileRoutes } from './catalog-files';
import { eventRoutes } from './events';
import { planRoutes } from './plans';
import { productRoutes } from './products';
import { signingKeyRoutes } from './signing-keys';
import { tierTagRoutes } from './tier-tags';
import { webhookRoutes } from './webhooks';
import { balanceRoutes } from './balances';
import { creditRoutes } from './credits';
import { entitlementRoutes } from './entitlements';
import { meterRoutes } from './meters';
import { usageRoutes } from './usage';
import { ownerRoutes } from './owners';
import { granteeRoutes } from './grantees';
import { groupRoutes } from './groups';
import { entitlementRecordRoutes } from './entitlement-records';
import { subscriptionPlanRoutes } from './subscription-plans';
import { subscriptionLineItemRoutes } from './subscription-plan-line-items';
import { subscriptionRoutes } from './subscriptions';
import { apiKeyRoutes } from './api-keys';
import { destinationRoutes } from './destinations';
import { lineItemRoutes } from './line-items';
import { priceRoutes } from './prices';
import { currencyOptionRoutes } from './currency-options';
import { checkoutRoutes } from './checkout';
import { paymentIntegrationRoutes } from './payment-integrations';
import { receiptRoutes } from './receipts';
import { copyToLiveRoutes } from './copy-to-live';
import { cartRoutes } from './carts';
import { cartItemRoutes } from './cart-items';

/** What the catalog generation needs of the core. */
export type CatalogServices = Pick<
  Core,
  | 'apiKeys'
  | 'products'
  | 'plans'
  | 'tierTags'
  | 'idempotency'
  | 'signing'
  | 'webhooks'
  | 'webhookEvents'
  | 'webhookDestinations'
  | 'pricingParts'
  | 'quickCheckout'
  | 'paymentIntegrations'
  | 'receipts'
  | 'copyToLive'
  | 'carts'
  | 'importer'
  | 'exporter'
  | 'usage'
  | 'entitlements'
  | 'subscriptions'
  | 'subscriptionItems'
  | 'subscriptionDirectory'
  | 'owners'
  | 'seats'
  | 'grantees'
  | 'groups'
  | 'entitlementAdmin'
>;

/** The catalog generation's route table (`/api`): one module per resource (docs/architecture.md, "Adding a route"). */
export const catalogRoutes = (core: CatalogServices): Route[] => [
  ...signingKeyRoutes(core),
  ...productRoutes(core),
  ...planRoutes(core),
  ...tierTagRoutes(core),
  ...catalogFileRoutes(core),
  ...webhookRoutes(core),
  ...eventRoutes(core),
  ...meterRoutes(core),
  ...creditRoutes(core),
  ...usageRoutes(core),
  ...balanceRoutes(core),
  ...entitlementRoutes(core),
  ...entitlementRecordRoutes(core),
  ...subscriptionRoutes(core),
  ...subscriptionPlanRoutes(core),
  ...subscriptionLineItemRoutes(core),
  ...ownerRoutes(core),
  ...granteeRoutes(core),
  ...groupRoutes(core),
  ...apiKeyRoutes(core),
  ...destinationRoutes(core),
  ...lineItemRoutes(core),
  ...priceRoutes(core),
  ...currencyOptionRoutes(core),
  ...checkoutRoutes(core),
  ...paymentIntegrationRoutes(core),
  ...receiptRoutes(core),
  ...copyToLiveRoutes(core),
  ...cartRoutes(core),
  ...cartItemRoutes(core),
];
