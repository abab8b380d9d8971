import type { Customer, Id, Interval, LineItem, Plan, Product, ProductSettings, Subscription } from '../../model';

export interface ProductInput {
  name: string;
  description?: string;
  /** false: archived (not for sale); true: for sale again. */
  isActive?: boolean;
}

/** The product's checkout settings a vendor may set (catalog `PUT /api/products/:id`). */
export type ProductSettingsInput = Partial<Omit<ProductSettings, 'id' | 'createdAt' | 'updatedAt'>>;

export interface ProductUpdate extends Partial<ProductInput> {
  settings?: ProductSettingsInput;
}

export interface PlanInput {
  /** Optional when the organisation and mode have one product (it is then that one), or when saving an existing plan. */
  productId?: Id;
  name: string;
  trialPeriodDays?: number | null;
  tierTagId?: Id | null;
  /** A tier tag by name (created when new); null removes the plan's tag. */
  tierTag?: string | null;
  isActive?: boolean;
}

export interface TierDraft {
  id?: Id;
  upTo: string;
  flatAmount?: number | null;
  unitAmount: number;
}
export interface CurrencyOptionDraft {
  /** Matched by currency within its price when absent. */
  id?: Id;
  currency: string;
  unitAmount?: number | null;
  isDefault?: boolean;
  tiers?: TierDraft[];
}
export interface PriceDraft {
  id?: Id;
  /** The currency whose option is the default (else the option marked `isDefault`, else the first). */
  defaultCurrency?: string;
  archivedAt?: string | null;
  interval?: Interval | null;
  intervalCount?: number | null;
  paymentPriceId?: string;
  currencyOptions: CurrencyOptionDraft[];
}
export interface LineItemDraft {
  id?: Id;
  isActive?: boolean;
  /** The meter's slug of a metered line item (default: from the name). */
  meterSlug?: string | null;
  archivedAt?: string | null;
  name: string;
  slug?: string;
  nickname?: string;
  priceType: LineItem['priceType'];
  intervalType?: LineItem['intervalType'];
  billingScheme?: LineItem['billingScheme'];
  tiersMode?: LineItem['tiersMode'];
  minQuantity?: number;
  maxQuantity?: number;
  allowChangingQuantity?: boolean;
  unitLabel?: string | null;
  /** Usage plan terms of a metered line item: units granted each period (0 when absent). */
  allowance?: number | string;
  /** At most this many units a period (0 or null: no cap), the contract's `maxUsage`. */
  maxUsage?: number | string | null;
  /** At least this many units billed a period, the contract's `minUsage`. */
  minUsage?: number | string;
  /** What unused units carry into the next period: none (default), all, or up to N. */
  rollover?: 'none' | 'all' | { upTo: number | string };
  prices?: PriceDraft[];
}

/** A plan with its entitlements and nested pricing, saved in one call (`POST /api/plans/save`). */
export interface PlanDraft extends PlanInput {
  id?: Id;
  /** A time: the plan is archived (then); null: not archived. */
  archivedAt?: string | null;
  entitlements?: string[];
  lineItems?: LineItemDraft[];
}

export interface PlanDetail {
  plan: Plan;
  product: Product;
  subscriptions: Subscription[];
  customers: Map<Id, Customer>;
}
