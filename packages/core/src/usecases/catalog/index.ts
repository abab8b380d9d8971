export * from './inputs';
export { ProductAdmin } from './products';
export { PlanAdmin } from './plans';
export { TierTagAdmin } from './tier-tags';
export { EntitlementAdmin, type EntitlementRecord } from './entitlements';
export { PricingParts, type Placed } from './pricing-parts';
export { MAX_AMOUNT_MINOR } from './plan-pricing';
