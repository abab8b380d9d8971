export { createCheckoutStartRouter, createV1App, createV1Router, mountV1Pages, v1OpenApi, type V1AppServices } from './app';
export { v1Routes, type V1Services } from './routes';
export { DEFERRED_LINK_TTL_MS, deferredCheckoutLinks, type DeferredCheckout } from './links';
export { parseExpand, EXPANDABLE } from './params';
export * from './schemas';
export { createPricingPageRouter, pricingPageLink, PRICING_PAGE_TTL_MS, type PricingPageServices } from './pricing-page';
