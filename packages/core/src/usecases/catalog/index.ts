export * from './inputs';
export { ProductAdmin } from './products';
export { PlanAdmin } from './plans';
export { TierTagAdmin } from './tier-tags';
export { PricingParts, type Placed } from './pricing-parts';
