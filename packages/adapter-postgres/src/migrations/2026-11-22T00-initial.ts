import { sql, type CreateTableBuilder, type Kysely } from 'kysely';

// Migrations never import app code: they speak only SQL through Kysely<any>.
/* eslint-disable @typescript-eslint/no-explicit-any */

type Table = CreateTableBuilder<string, any>;
const id = (t: Table): Table => t.addColumn('id', 'uuid', (c) => c.primaryKey());
const owned = (t: Table): Table =>
  id(t)
    .addColumn('organisation_id', 'uuid', (c) => c.notNull().references('organisations.id'))
    .addColumn('is_test', 'boolean', (c) => c.notNull());
const stamps = (t: Table): Table =>
  t.addColumn('created_at', 'timestamptz', (c) => c.notNull()).addColumn('updated_at', 'timestamptz', (c) => c.notNull());

export async function up(db: Kysely<any>): Promise<void> {
  await id(db.schema.createTable('organisations'))
    .addColumn('name', 'text', (c) => c.notNull().unique())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .execute();

  await id(db.schema.createTable('api_keys'))
    .addColumn('organisation_id', 'uuid', (c) => c.notNull().references('organisations.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('key_hash', 'text', (c) => c.notNull().unique())
    .addColumn('prefix', 'text', (c) => c.notNull())
    .addColumn('scopes', 'jsonb', (c) => c.notNull())
    .addColumn('is_test', 'boolean', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addColumn('revoked_at', 'timestamptz')
    .execute();
  await db.schema.createIndex('api_keys_organisation').on('api_keys').columns(['organisation_id', 'created_at']).execute();

  await owned(db.schema.createTable('payment_integrations'))
    .addColumn('integration_name', 'text', (c) => c.notNull())
    .addColumn('account_name', 'text', (c) => c.notNull())
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('account_data', 'jsonb', (c) => c.notNull())
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
    .addUniqueConstraint('payment_integrations_tenant_name', ['organisation_id', 'is_test', 'integration_name'])
    .execute();

  await id(db.schema.createTable('currencies'))
    .addColumn('short_name', 'text', (c) => c.notNull().unique())
    .addColumn('long_name', 'text', (c) => c.notNull())
    .addColumn('symbol', 'text', (c) => c.notNull())
    .execute();

  await stamps(
    owned(db.schema.createTable('products'))
      .addColumn('key', 'text')
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('display_name', 'text', (c) => c.notNull())
      .addColumn('description', 'text', (c) => c.notNull())
      .addColumn('app_type', 'text', (c) => c.notNull())
      .addColumn('paid', 'boolean', (c) => c.notNull())
      .addColumn('payment_integration_id', 'uuid', (c) => c.references('payment_integrations.id'))
      .addColumn('payment_product_id', 'text')
      .addColumn('archived_at', 'timestamptz'),
  ).execute();
  await sql`create unique index products_tenant_key on products (organisation_id, is_test, key) where key is not null`.execute(db);
  // Keyset pagination of catalog lists: (created_at, id) within a tenant.
  await db.schema.createIndex('products_page').on('products').columns(['organisation_id', 'is_test', 'created_at', 'id']).execute();

  await stamps(
    id(db.schema.createTable('product_settings'))
      .addColumn('product_id', 'uuid', (c) => c.notNull().unique().references('products.id').onDelete('cascade'))
      .addColumn('success_url', 'text')
      .addColumn('cancel_url', 'text')
      .addColumn('allow_promo_codes', 'boolean', (c) => c.notNull())
      .addColumn('automatic_tax', 'boolean', (c) => c.notNull())
      .addColumn('collect_billing_address', 'boolean', (c) => c.notNull())
      .addColumn('collect_shipping_address', 'boolean', (c) => c.notNull())
      .addColumn('card_prefill_preference', 'text', (c) => c.notNull())
      .addColumn('past_due_entitlements', 'boolean', (c) => c.notNull()),
  ).execute();

  await db.schema
    .createTable('product_currencies')
    .addColumn('product_id', 'uuid', (c) => c.notNull().references('products.id').onDelete('cascade'))
    .addColumn('currency_id', 'uuid', (c) => c.notNull().references('currencies.id'))
    .addColumn('is_default', 'boolean', (c) => c.notNull())
    .addColumn('position', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('product_currencies_pk', ['product_id', 'currency_id'])
    .execute();

  await id(db.schema.createTable('features'))
    .addColumn('product_id', 'uuid', (c) => c.notNull().references('products.id').onDelete('cascade'))
    .addColumn('key', 'text')
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('display_name', 'text', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull())
    .addColumn('variable_name', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('visibility', 'text', (c) => c.notNull())
    .addColumn('value_type', 'text', (c) => c.notNull())
    .addColumn('default_value', 'text', (c) => c.notNull())
    .addColumn('show_unlimited', 'boolean', (c) => c.notNull())
    .addColumn('sort_order', 'integer', (c) => c.notNull())
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('features_product').on('features').column('product_id').execute();

  await id(db.schema.createTable('feature_enum_options'))
    .addColumn('feature_id', 'uuid', (c) => c.notNull().references('features.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('position', 'integer', (c) => c.notNull())
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('feature_enum_options_feature').on('feature_enum_options').column('feature_id').execute();

  await stamps(
    id(db.schema.createTable('capabilities'))
      .addColumn('product_id', 'uuid', (c) => c.notNull().references('products.id').onDelete('cascade'))
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('description', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('position', 'integer', (c) => c.notNull()),
  ).execute();
  await db.schema.createIndex('capabilities_product').on('capabilities').column('product_id').execute();

  await stamps(
    id(db.schema.createTable('tier_tags'))
      .addColumn('organisation_id', 'uuid', (c) => c.notNull().references('organisations.id'))
      .addColumn('name', 'text', (c) => c.notNull()),
  ).execute();

  await stamps(
    owned(db.schema.createTable('plans'))
      .addColumn('product_id', 'uuid', (c) => c.notNull().references('products.id').onDelete('cascade'))
      .addColumn('key', 'text')
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('display_name', 'text', (c) => c.notNull())
      .addColumn('description', 'text', (c) => c.notNull())
      .addColumn('active', 'boolean', (c) => c.notNull())
      .addColumn('visibility', 'text', (c) => c.notNull())
      .addColumn('license_type', 'text', (c) => c.notNull())
      .addColumn('plan_type', 'text', (c) => c.notNull())
      .addColumn('pricing_type', 'text', (c) => c.notNull())
      .addColumn('interval', 'text', (c) => c.notNull())
      .addColumn('length', 'integer', (c) => c.notNull())
      .addColumn('trial_days', 'integer')
      .addColumn('evaluation', 'boolean', (c) => c.notNull())
      .addColumn('eval_days', 'integer', (c) => c.notNull())
      .addColumn('per_seat_amount', 'integer', (c) => c.notNull())
      .addColumn('usage_based', 'boolean', (c) => c.notNull())
      .addColumn('environment', 'text', (c) => c.notNull())
      .addColumn('app_kind', 'text', (c) => c.notNull())
      .addColumn('service_plan', 'boolean', (c) => c.notNull())
      .addColumn('provider_plan_id', 'text')
      .addColumn('tier_tag_id', 'uuid', (c) => c.references('tier_tags.id'))
      .addColumn('archived_at', 'timestamptz'),
  ).execute();
  await sql`create unique index plans_product_key on plans (product_id, key) where key is not null`.execute(db);
  await db.schema.createIndex('plans_product').on('plans').columns(['product_id', 'created_at']).execute();
  await db.schema.createIndex('plans_page').on('plans').columns(['organisation_id', 'is_test', 'created_at', 'id']).execute();

  await db.schema
    .createTable('plan_currencies')
    .addColumn('plan_id', 'uuid', (c) => c.notNull().references('plans.id').onDelete('cascade'))
    .addColumn('currency_id', 'uuid', (c) => c.notNull().references('currencies.id'))
    .addColumn('amount_minor', 'bigint', (c) => c.notNull())
    .addColumn('payment_plan_id', 'text', (c) => c.notNull())
    .addColumn('position', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('plan_currencies_pk', ['plan_id', 'currency_id'])
    .execute();

  await db.schema
    .createTable('plan_capabilities')
    .addColumn('plan_id', 'uuid', (c) => c.notNull().references('plans.id').onDelete('cascade'))
    .addColumn('capability_id', 'uuid', (c) => c.notNull().references('capabilities.id').onDelete('cascade'))
    .addColumn('position', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('plan_capabilities_pk', ['plan_id', 'capability_id'])
    .execute();

  await db.schema
    .createTable('plan_features')
    .addColumn('plan_id', 'uuid', (c) => c.notNull().references('plans.id').onDelete('cascade'))
    .addColumn('feature_id', 'uuid', (c) => c.notNull().references('features.id').onDelete('cascade'))
    .addColumn('value', 'text', (c) => c.notNull())
    .addColumn('enum_option_id', 'uuid', (c) => c.references('feature_enum_options.id').onDelete('set null'))
    .addColumn('is_unlimited', 'boolean', (c) => c.notNull())
    .addColumn('is_usage', 'boolean', (c) => c.notNull())
    .addColumn('price_per_unit', 'double precision', (c) => c.notNull())
    .addColumn('min_usage', 'double precision', (c) => c.notNull())
    .addColumn('max_usage', 'double precision', (c) => c.notNull())
    .addColumn('position', 'integer', (c) => c.notNull())
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
    .addPrimaryKeyConstraint('plan_features_pk', ['plan_id', 'feature_id'])
    .execute();

  await stamps(
    id(db.schema.createTable('meters'))
      .addColumn('slug', 'text', (c) => c.notNull())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('payment_meter_id', 'text', (c) => c.notNull()),
  ).execute();

  await stamps(
    id(db.schema.createTable('line_items'))
      .addColumn('plan_id', 'uuid', (c) => c.notNull().references('plans.id').onDelete('cascade'))
      .addColumn('position', 'integer', (c) => c.notNull())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('slug', 'text', (c) => c.notNull())
      .addColumn('payment_product_id', 'text', (c) => c.notNull())
      .addColumn('nickname', 'text', (c) => c.notNull())
      .addColumn('price_type', 'text', (c) => c.notNull())
      .addColumn('interval_type', 'text', (c) => c.notNull())
      .addColumn('billing_scheme', 'text', (c) => c.notNull())
      .addColumn('tiers_mode', 'text')
      .addColumn('min_quantity', 'integer', (c) => c.notNull())
      .addColumn('max_quantity', 'integer', (c) => c.notNull())
      .addColumn('is_active', 'boolean', (c) => c.notNull())
      .addColumn('allow_changing_quantity', 'boolean', (c) => c.notNull())
      .addColumn('unit_label', 'text')
      .addColumn('meter_id', 'uuid', (c) => c.references('meters.id'))
      .addColumn('archived_at', 'timestamptz'),
  ).execute();
  await db.schema.createIndex('line_items_plan').on('line_items').column('plan_id').execute();

  await stamps(
    id(db.schema.createTable('prices'))
      .addColumn('line_item_id', 'uuid', (c) => c.notNull().references('line_items.id').onDelete('cascade'))
      .addColumn('position', 'integer', (c) => c.notNull())
      .addColumn('payment_price_id', 'text', (c) => c.notNull())
      .addColumn('interval', 'text')
      .addColumn('interval_count', 'integer')
      .addColumn('archived_at', 'timestamptz'),
  ).execute();
  await db.schema.createIndex('prices_line_item').on('prices').column('line_item_id').execute();

  await stamps(
    id(db.schema.createTable('currency_options'))
      .addColumn('price_id', 'uuid', (c) => c.notNull().references('prices.id').onDelete('cascade'))
      .addColumn('position', 'integer', (c) => c.notNull())
      .addColumn('currency', 'text', (c) => c.notNull())
      .addColumn('unit_amount', 'double precision')
      .addColumn('is_default', 'boolean', (c) => c.notNull()),
  ).execute();
  await db.schema.createIndex('currency_options_price').on('currency_options').column('price_id').execute();

  await stamps(
    id(db.schema.createTable('tiers'))
      .addColumn('currency_option_id', 'uuid', (c) => c.notNull().references('currency_options.id').onDelete('cascade'))
      .addColumn('position', 'integer', (c) => c.notNull())
      .addColumn('up_to', 'text', (c) => c.notNull())
      .addColumn('flat_amount', 'double precision')
      .addColumn('unit_amount', 'double precision', (c) => c.notNull()),
  ).execute();
  await db.schema.createIndex('tiers_currency_option').on('tiers').column('currency_option_id').execute();

  await owned(db.schema.createTable('pricing_tables'))
    .addColumn('product_id', 'uuid', (c) => c.notNull().references('products.id').onDelete('cascade'))
    .addColumn('key', 'text')
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('title', 'text', (c) => c.notNull())
    .addColumn('text', 'text', (c) => c.notNull())
    .addColumn('theme', 'text', (c) => c.notNull())
    .addColumn('feature_order', 'text', (c) => c.notNull())
    .addColumn('custom_theme', 'jsonb')
    .addColumn('featured_plan_id', 'uuid', (c) => c.references('plans.id').onDelete('set null'))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('pricing_tables_product').on('pricing_tables').column('product_id').execute();

  await db.schema
    .createTable('pricing_table_plans')
    .addColumn('pricing_table_id', 'uuid', (c) => c.notNull().references('pricing_tables.id').onDelete('cascade'))
    .addColumn('plan_id', 'uuid', (c) => c.notNull().references('plans.id').onDelete('cascade'))
    .addColumn('sort_order', 'integer', (c) => c.notNull())
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
    .addPrimaryKeyConstraint('pricing_table_plans_pk', ['pricing_table_id', 'plan_id'])
    .execute();
  await db.schema
    .createTable('pricing_table_features')
    .addColumn('pricing_table_id', 'uuid', (c) => c.notNull().references('pricing_tables.id').onDelete('cascade'))
    .addColumn('feature_id', 'uuid', (c) => c.notNull().references('features.id').onDelete('cascade'))
    .addColumn('sort_order', 'integer', (c) => c.notNull())
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
    .addPrimaryKeyConstraint('pricing_table_features_pk', ['pricing_table_id', 'feature_id'])
    .execute();

  await stamps(
    owned(db.schema.createTable('customers'))
      .addColumn('value', 'text', (c) => c.notNull())
      .addColumn('email_address', 'text')
      .addColumn('payment_customer_id', 'text')
      .addUniqueConstraint('customers_tenant_value', ['organisation_id', 'is_test', 'value']),
  ).execute();

  await stamps(
    owned(db.schema.createTable('subscriptions'))
      .addColumn('product_id', 'uuid', (c) => c.notNull().references('products.id'))
      .addColumn('plan_id', 'uuid', (c) => c.notNull().references('plans.id'))
      .addColumn('customer_id', 'uuid', (c) => c.notNull().references('customers.id'))
      .addColumn('grantee_id', 'text')
      .addColumn('email', 'text')
      .addColumn('payment_provider', 'text', (c) => c.notNull())
      .addColumn('payment_subscription_id', 'text', (c) => c.unique())
      .addColumn('type', 'text', (c) => c.notNull())
      .addColumn('quantity', 'integer', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('currency', 'text', (c) => c.notNull())
      .addColumn('current_period_start', 'timestamptz', (c) => c.notNull())
      .addColumn('current_period_end', 'timestamptz', (c) => c.notNull())
      .addColumn('cancel_at_period_end', 'boolean', (c) => c.notNull())
      .addColumn('canceled_at', 'timestamptz')
      .addColumn('replaces_id', 'uuid')
      .addColumn('line_item_ids', 'jsonb', (c) => c.notNull()),
  ).execute();
  await db.schema
    .createIndex('subscriptions_organisation')
    .on('subscriptions')
    .columns(['organisation_id', 'is_test', 'created_at'])
    .execute();
  await db.schema.createIndex('subscriptions_plan').on('subscriptions').column('plan_id').execute();
  await db.schema.createIndex('subscriptions_product').on('subscriptions').column('product_id').execute();
  // The period-end sweep looks only at scheduled cancellations that are still running.
  await sql`create index subscriptions_due on subscriptions (current_period_end) where cancel_at_period_end and status <> 'CANCELED'`.execute(
    db,
  );

  await stamps(
    owned(db.schema.createTable('licenses'))
      .addColumn('product_id', 'uuid', (c) => c.notNull().references('products.id'))
      .addColumn('plan_id', 'uuid', (c) => c.notNull().references('plans.id'))
      .addColumn('subscription_id', 'uuid', (c) => c.references('subscriptions.id'))
      .addColumn('grantee_id', 'text')
      .addColumn('purchaser', 'text', (c) => c.notNull())
      .addColumn('email', 'text')
      .addColumn('name', 'text')
      .addColumn('payment_service', 'text', (c) => c.notNull())
      .addColumn('type', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('cancel_at_period_end', 'boolean', (c) => c.notNull())
      .addColumn('start_time', 'timestamptz', (c) => c.notNull())
      .addColumn('end_time', 'timestamptz')
      .addColumn('metadata', 'jsonb', (c) => c.notNull()),
  ).execute();
  // The capability check, on every request of a vendor's app.
  await db.schema
    .createIndex('licenses_check')
    .on('licenses')
    .columns(['organisation_id', 'is_test', 'product_id', 'grantee_id', 'status', 'end_time'])
    .execute();
  await db.schema.createIndex('licenses_subscription').on('licenses').columns(['subscription_id', 'created_at']).execute();
  await db.schema.createIndex('licenses_tenant').on('licenses').columns(['organisation_id', 'is_test', 'status', 'created_at']).execute();
  await db.schema.createIndex('licenses_plan').on('licenses').column('plan_id').execute();

  await stamps(
    owned(db.schema.createTable('events'))
      .addColumn('type', 'text', (c) => c.notNull())
      .addColumn('subscription_id', 'uuid', (c) => c.references('subscriptions.id'))
      .addColumn('payload', 'jsonb', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('attempts', 'integer', (c) => c.notNull())
      .addColumn('run_at', 'timestamptz', (c) => c.notNull())
      .addColumn('last_error', 'text')
      // Queue order: events are applied in the order they were accepted, even within one millisecond.
      .addColumn('seq', 'bigserial', (c) => c.notNull().unique()),
  ).execute();
  // The worker's claim: due events that are not done, oldest first.
  await sql`create index events_due on events (seq, run_at) where status in ('queued', 'pending')`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const t of [
    'events',
    'licenses',
    'subscriptions',
    'customers',
    'pricing_table_features',
    'pricing_table_plans',
    'pricing_tables',
    'tiers',
    'currency_options',
    'prices',
    'line_items',
    'meters',
    'plan_features',
    'plan_capabilities',
    'plan_currencies',
    'plans',
    'tier_tags',
    'capabilities',
    'feature_enum_options',
    'features',
    'product_currencies',
    'product_settings',
    'products',
    'currencies',
    'payment_integrations',
    'api_keys',
    'organisations',
  ]) {
    await db.schema.dropTable(t).ifExists().execute();
  }
}
