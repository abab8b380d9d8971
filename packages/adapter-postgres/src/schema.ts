import type { ColumnType } from 'kysely';

/** Database types for kysely, in one place. Column names are snake_case; the mappers translate. */

/** jsonb: read as parsed JSON, written as a JSON string (pg would turn a JS array into a PG array). */
type Json = ColumnType<unknown, string, string>;
/** bigint: pg returns int8 as a string. */
type BigInt = ColumnType<string | number, number, number>;
type Nullable<T> = T | null;

interface OwnedRow {
  id: string;
  organisation_id: string;
  is_test: boolean;
}
interface Stamped {
  created_at: Date;
  updated_at: Date;
}

export interface OrganisationsTable { id: string; name: string; created_at: Date }
export interface ApiKeysTable {
  id: string; organisation_id: string; name: string; key_hash: string; prefix: string; scopes: Json; is_test: boolean;
  created_at: Date; revoked_at: Nullable<Date>;
}
export interface PaymentIntegrationsTable extends OwnedRow {
  integration_name: string; account_name: string; account_id: string; account_data: Json; updated_at: Date;
}
export interface CurrenciesTable { id: string; short_name: string; long_name: string; symbol: string }
export interface ProductsTable extends OwnedRow, Stamped {
  key: Nullable<string>; name: string; display_name: string; description: string; app_type: string; paid: boolean;
  payment_integration_id: Nullable<string>; payment_product_id: Nullable<string>; archived_at: Nullable<Date>;
}
export interface ProductSettingsTable extends Stamped {
  id: string; product_id: string; success_url: Nullable<string>; cancel_url: Nullable<string>; allow_promo_codes: boolean;
  automatic_tax: boolean; collect_billing_address: boolean; collect_shipping_address: boolean; card_prefill_preference: string;
  past_due_entitlements: boolean;
}
export interface ProductCurrenciesTable { product_id: string; currency_id: string; is_default: boolean; position: number }
export interface FeaturesTable {
  id: string; product_id: string; key: Nullable<string>; name: string; display_name: string; description: string; variable_name: string;
  status: string; visibility: string; value_type: string; default_value: string; show_unlimited: boolean; sort_order: number; updated_at: Date;
}
export interface FeatureEnumOptionsTable { id: string; feature_id: string; name: string; position: number; updated_at: Date }
export interface CapabilitiesTable extends Stamped { id: string; product_id: string; name: string; description: string; status: string; position: number }
export interface TierTagsTable extends Stamped { id: string; organisation_id: string; name: string }
export interface PlansTable extends OwnedRow, Stamped {
  product_id: string; key: Nullable<string>; name: string; display_name: string; description: string; active: boolean; visibility: string;
  license_type: string; plan_type: string; pricing_type: string; interval: string; length: number; trial_days: Nullable<number>;
  evaluation: boolean; eval_days: number; per_seat_amount: number; usage_based: boolean; environment: string; app_kind: string;
  service_plan: boolean; provider_plan_id: Nullable<string>; tier_tag_id: Nullable<string>; archived_at: Nullable<Date>;
}
export interface PlanCurrenciesTable { plan_id: string; currency_id: string; amount_minor: BigInt; payment_plan_id: string; position: number }
export interface PlanCapabilitiesTable { plan_id: string; capability_id: string; position: number }
export interface PlanFeaturesTable {
  plan_id: string; feature_id: string; value: string; enum_option_id: Nullable<string>; is_unlimited: boolean; is_usage: boolean;
  price_per_unit: number; min_usage: number; max_usage: number; position: number; updated_at: Date;
}
export interface MetersTable extends Stamped { id: string; slug: string; name: string; payment_meter_id: string }
export interface LineItemsTable extends Stamped {
  id: string; plan_id: string; position: number; name: string; slug: string; payment_product_id: string; nickname: string; price_type: string;
  interval_type: string; billing_scheme: string; tiers_mode: Nullable<string>; min_quantity: number; max_quantity: number; is_active: boolean;
  allow_changing_quantity: boolean; unit_label: Nullable<string>; meter_id: Nullable<string>; archived_at: Nullable<Date>;
}
export interface PricesTable extends Stamped {
  id: string; line_item_id: string; position: number; payment_price_id: string; interval: Nullable<string>; interval_count: Nullable<number>;
  archived_at: Nullable<Date>;
}
export interface CurrencyOptionsTable extends Stamped { id: string; price_id: string; position: number; currency: string; unit_amount: Nullable<number>; is_default: boolean }
export interface TiersTable extends Stamped { id: string; currency_option_id: string; position: number; up_to: string; flat_amount: Nullable<number>; unit_amount: number }
export interface PricingTablesTable extends OwnedRow {
  product_id: string; key: Nullable<string>; name: string; status: string; title: string; text: string; theme: string; feature_order: string;
  custom_theme: ColumnType<unknown, string | null, string | null>; featured_plan_id: Nullable<string>; updated_at: Date;
}
export interface PricingTablePlansTable { pricing_table_id: string; plan_id: string; sort_order: number; updated_at: Date }
export interface PricingTableFeaturesTable { pricing_table_id: string; feature_id: string; sort_order: number; updated_at: Date }
export interface CustomersTable extends OwnedRow, Stamped { value: string; email_address: Nullable<string>; payment_customer_id: Nullable<string> }
export interface SubscriptionsTable extends OwnedRow, Stamped {
  product_id: string; plan_id: string; customer_id: string; grantee_id: Nullable<string>; email: Nullable<string>; payment_provider: string;
  payment_subscription_id: Nullable<string>; type: string; quantity: number; status: string; currency: string; current_period_start: Date;
  current_period_end: Date; cancel_at_period_end: boolean; canceled_at: Nullable<Date>; replaces_id: Nullable<string>; line_item_ids: Json;
}
export interface LicensesTable extends OwnedRow, Stamped {
  product_id: string; plan_id: string; subscription_id: Nullable<string>; grantee_id: Nullable<string>; purchaser: string; email: Nullable<string>;
  name: Nullable<string>; payment_service: string; type: string; status: string; cancel_at_period_end: boolean; start_time: Date;
  end_time: Nullable<Date>; metadata: Json;
}
export interface EventsTable extends OwnedRow, Stamped {
  type: string; subscription_id: Nullable<string>; payload: Json; status: string; attempts: number; run_at: Date; last_error: Nullable<string>;
  seq: ColumnType<number, never, never>;
}

export interface SigningKeysTable {
  id: string; organisation_id: string; algorithm: string; public_key: string; secret_ciphertext: string; created_at: Date; retired_at: Nullable<Date>;
}

export interface CheckoutSessionsTable extends OwnedRow {
  product_id: string; plan_id: string; grantee_id: string; member: string; success_url: string; cancel_url: string; options: Json; provider: string;
  provider_session_id: Nullable<string>; status: string; subscription_id: Nullable<string>; created_at: Date; completed_at: Nullable<Date>;
}
export interface BillingDocumentsTable { id: string; organisation_id: string; subscription_id: string; kind: string; body: Json; created_at: Date; seq: ColumnType<number, never, never> }
export interface WebhookEventsTable { provider: string; event_id: string; received_at: Date }

export interface IdempotencyKeysTable {
  organisation_id: string; key: string; fingerprint: string; status: number; body: ColumnType<unknown, string | null, string | null>; created_at: Date;
}

export interface Database {
  organisations: OrganisationsTable;
  api_keys: ApiKeysTable;
  payment_integrations: PaymentIntegrationsTable;
  currencies: CurrenciesTable;
  products: ProductsTable;
  product_settings: ProductSettingsTable;
  product_currencies: ProductCurrenciesTable;
  features: FeaturesTable;
  feature_enum_options: FeatureEnumOptionsTable;
  capabilities: CapabilitiesTable;
  tier_tags: TierTagsTable;
  plans: PlansTable;
  plan_currencies: PlanCurrenciesTable;
  plan_capabilities: PlanCapabilitiesTable;
  plan_features: PlanFeaturesTable;
  meters: MetersTable;
  line_items: LineItemsTable;
  prices: PricesTable;
  currency_options: CurrencyOptionsTable;
  tiers: TiersTable;
  pricing_tables: PricingTablesTable;
  pricing_table_plans: PricingTablePlansTable;
  pricing_table_features: PricingTableFeaturesTable;
  customers: CustomersTable;
  subscriptions: SubscriptionsTable;
  licenses: LicensesTable;
  events: EventsTable;
  signing_keys: SigningKeysTable;
  checkout_sessions: CheckoutSessionsTable;
  billing_documents: BillingDocumentsTable;
  webhook_events: WebhookEventsTable;
  idempotency_keys: IdempotencyKeysTable;
}
