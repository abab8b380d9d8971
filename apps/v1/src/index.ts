export { createCheckoutStartRouter, createV1App, createV1Router, mountV1Pages, v1OpenApi, type V1AppServices } from './app';
export { v1Routes, type V1Services } from './routes';
export { DEFERRED_LINK_TTL_MS, deferredCheckoutLinks, type DeferredCheckout } from './links';
export { parseExpand, EXPANDABLE } from './params';
export * from './schemas';
export { checkoutLinkSchema } from './routes/checkout';
export { planPartRoute } from './routes/plans';
export { productCapabilitiesRoute, productPlansRoute } from './routes/products';
export { eventSchema } from './routes/events';
export { licenseCountSchema } from './routes/licenses';
export { licenseUsageSchema } from './routes/usage';
export { pricingPageLinkSchema, pricingTableSchema } from './routes/pricing-tables';
export {
  cancelSubscriptionRoute,
  changePlanBody,
  eventUuidSchema,
  INVOICE_LINE_MEMBERS,
  INVOICE_MEMBERS,
  invoiceListSchema,
  invoiceSchema,
  paymentLinkRoute,
  paymentMethodRoute,
  paymentMethodSchema,
  reactivateSubscriptionRoute,
  subscriptionInvoicesRoute,
  urlSchema,
} from './routes/subscriptions';
export { createPricingPageRouter, pricingPageLink, PRICING_PAGE_TTL_MS, type PricingPageServices } from './pricing-page';
export * from './views';
export { checkoutLinkQuery } from './routes/checkout';
export { linkRequest } from './params';
