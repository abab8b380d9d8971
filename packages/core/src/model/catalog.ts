import type { UsageTerms } from './usage';
import type { Id, Interval, Owned } from './common';

export interface ProductSettings {
  id: Id;
  successUrl: string | null;
  cancelUrl: string | null;
  allowPromoCodes: boolean;
  automaticTax: boolean;
  collectBillingAddress: boolean;
  collectShippingAddress: boolean;
  cardPrefillPreference: 'none' | 'always' | 'choice';
  pastDueEntitlements: boolean;
  createdAt: Date;
  updatedAt: Date;
}

export interface EnumOption {
  id: Id;
  featureId: Id;
  name: string;
  updatedAt: Date;
}

export type FeatureStatus = 'ACTIVE' | 'DEPRECATED' | 'COMING_SOON';
export type FeatureValueType = 'boolean' | 'numerical' | 'enum';
export type Visibility = 'public' | 'private';

export interface Feature {
  id: Id;
  productId: Id;
  key: string | null;
  name: string;
  displayName: string;
  description: string;
  variableName: string;
  status: FeatureStatus;
  visibility: Visibility;
  valueType: FeatureValueType;
  defaultValue: string;
  showUnlimited: boolean;
  sortOrder: number;
  enumOptions: EnumOption[];
  updatedAt: Date;
}

export interface Capability {
  id: Id;
  productId: Id;
  name: string;
  description: string;
  status: 'ACTIVE' | 'DEPRECATED';
  createdAt: Date;
  updatedAt: Date;
}

export interface Currency {
  id: Id;
  shortName: string;
  longName: string;
  symbol: string;
}

export interface ProductCurrency {
  currencyId: Id;
  isDefault: boolean;
}

export interface Product extends Owned {
  /** Stable reference from the catalog file; null for records made through the API. */
  key: string | null;
  name: string;
  displayName: string;
  description: string;
  appType: string;
  /** Sold through paid plans (false: a free product that needs no payment integration). */
  paid: boolean;
  paymentIntegrationId: Id | null;
  paymentProductId: string | null;
  settings: ProductSettings;
  currencies: ProductCurrency[];
  features: Feature[];
  capabilities: Capability[];
  archivedAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface PlanCurrency {
  currencyId: Id;
  /** Price per interval (per seat for per-seat plans) in the currency's minor unit. */
  amountMinor: number;
  paymentPlanId: string;
}

export interface PlanFeatureValue {
  featureId: Id;
  value: string;
  enumOptionId: Id | null;
  isUnlimited: boolean;
  isUsage: boolean;
  pricePerUnit: number;
  minUsage: number;
  maxUsage: number;
  updatedAt: Date;
}

export type LicenseType = 'user' | 'perSeat' | 'board' | 'customId';
export type PricingType = 'paid' | 'free';
export type PlanType = 'standard' | 'bespoke' | 'evaluation' | 'comingSoon';

export interface Meter {
  id: Id;
  slug: string;
  name: string;
  paymentMeterId: string;
  /** Decimal places of its quantities (0 or absent: whole units); see UsageMeter. */
  scale?: number;
  createdAt: Date;
  updatedAt: Date;
}

export interface TierTag {
  id: Id;
  organisationId: Id;
  name: string;
  createdAt: Date;
  updatedAt: Date;
}

export interface Tier {
  id: Id;
  /** Upper bound of the tier as a decimal string, or `inf` for the last tier. */
  upTo: string;
  flatAmount: number | null;
  unitAmount: number;
  createdAt: Date;
  updatedAt: Date;
}

export interface CurrencyOption {
  id: Id;
  currency: string;
  unitAmount: number | null;
  isDefault: boolean;
  tiers: Tier[];
  createdAt: Date;
  updatedAt: Date;
}

export interface Price {
  id: Id;
  paymentPriceId: string;
  interval: Interval | null;
  intervalCount: number | null;
  currencyOptions: CurrencyOption[];
  archivedAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

export type PriceType = 'metered' | 'per_seat' | 'flat_rate';
export type BillingScheme = 'fixed' | 'per_unit' | 'tiered' | 'flat_rate';

export interface LineItem {
  id: Id;
  name: string;
  slug: string;
  paymentProductId: string;
  nickname: string;
  priceType: PriceType;
  intervalType: 'one_off' | 'recurring';
  billingScheme: BillingScheme;
  tiersMode: 'graduated' | 'volume' | null;
  minQuantity: number;
  maxQuantity: number;
  isActive: boolean;
  allowChangingQuantity: boolean;
  unitLabel: string | null;
  meter: Meter | null;
  /** A metered line item's usage plan terms (allowance, cap, minimum, rollover); null or absent: metering only. */
  usage?: UsageTerms | null;
  prices: Price[];
  archivedAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface Plan extends Owned {
  productId: Id;
  key: string | null;
  name: string;
  displayName: string;
  description: string;
  /** `active` of the legacy/v1 views: sellable, independently of archiving. */
  active: boolean;
  visibility: Visibility;
  licenseType: LicenseType;
  planType: PlanType;
  pricingType: PricingType;
  interval: Interval;
  /** Number of interval units between payments. */
  length: number;
  trialDays: number | null;
  evaluation: boolean;
  evalDays: number;
  /** Minimum seats of a per-seat plan. */
  perSeatAmount: number;
  /** Billed on usage: a plan change replaces the subscription instead of moving it. */
  usageBased: boolean;
  environment: string;
  appKind: string;
  servicePlan: boolean;
  providerPlanId: string | null;
  tierTag: TierTag | null;
  currencies: PlanCurrency[];
  capabilityIds: Id[];
  features: PlanFeatureValue[];
  lineItems: LineItem[];
  archivedAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface PricingTablePlan {
  planId: Id;
  sortOrder: number;
  updatedAt: Date;
}

export interface PricingTableFeature {
  featureId: Id;
  sortOrder: number;
  updatedAt: Date;
}

export interface PricingTable extends Owned {
  productId: Id;
  key: string | null;
  name: string;
  status: 'ACTIVE' | 'INACTIVE';
  title: string;
  text: string;
  theme: string;
  featureOrder: string;
  customTheme: Record<string, unknown> | null;
  featuredPlanId: Id | null;
  plans: PricingTablePlan[];
  features: PricingTableFeature[];
  updatedAt: Date;
}
