import { sql } from 'kysely';
import type {
  Capability, CurrencyOption, Feature, LineItem, Meter, Plan, PlanListQuery, PlanRepository, Price, PricingTable, PricingTableRepository,
  Product, ProductRepository, Tenant, Tier, TierTag,
} from '@tollgate/core';
import { groupBy, json, keysetPage, num, replaceLinks, syncChildren, upsert, type AnyDb } from './sql-helpers';

/* eslint-disable @typescript-eslint/no-explicit-any */
type Row = Record<string, any>;

const inTenant = (q: any, t: Tenant, alias: string) => q.where(`${alias}.organisation_id`, '=', t.organisationId).where(`${alias}.is_test`, '=', t.isTest);
const byPosition = (a: Row, b: Row) => a.position - b.position;

// ---------------------------------------------------------------------------------------------
// Products: the product row with its settings, currencies, features (+ enum options), capabilities.

async function loadProducts(db: AnyDb, rows: Row[]): Promise<Product[]> {
  if (rows.length === 0) return [];
  const ids = rows.map((r) => r.id);
  const [settings, currencies, features, capabilities] = await Promise.all([
    db.selectFrom('product_settings').selectAll().where('product_id', 'in', ids).execute(),
    db.selectFrom('product_currencies').selectAll().where('product_id', 'in', ids).orderBy('position').execute(),
    db.selectFrom('features').selectAll().where('product_id', 'in', ids).orderBy('sort_order').orderBy('id').execute(),
    db.selectFrom('capabilities').selectAll().where('product_id', 'in', ids).orderBy('position').execute(),
  ]);
  const featureIds = features.map((f: Row) => f.id);
  const options = featureIds.length
    ? await db.selectFrom('feature_enum_options').selectAll().where('feature_id', 'in', featureIds).orderBy('position').execute()
    : [];
  const settingsBy = new Map(settings.map((s: Row) => [s.product_id, s]));
  const currenciesBy = groupBy(currencies, (c: Row) => c.product_id);
  const featuresBy = groupBy(features, (f: Row) => f.product_id);
  const capabilitiesBy = groupBy(capabilities, (c: Row) => c.product_id);
  const optionsBy = groupBy(options, (o: Row) => o.feature_id);
  return rows.map((r) => {
    const s = settingsBy.get(r.id) as Row;
    return {
      id: r.id, organisationId: r.organisation_id, isTest: r.is_test, key: r.key, name: r.name, displayName: r.display_name,
      description: r.description, appType: r.app_type, paid: r.paid, paymentIntegrationId: r.payment_integration_id,
      paymentProductId: r.payment_product_id, archivedAt: r.archived_at, createdAt: r.created_at, updatedAt: r.updated_at,
      settings: {
        id: s.id, successUrl: s.success_url, cancelUrl: s.cancel_url, allowPromoCodes: s.allow_promo_codes, automaticTax: s.automatic_tax,
        collectBillingAddress: s.collect_billing_address, collectShippingAddress: s.collect_shipping_address,
        cardPrefillPreference: s.card_prefill_preference, pastDueEntitlements: s.past_due_entitlements, createdAt: s.created_at, updatedAt: s.updated_at,
      },
      currencies: (currenciesBy.get(r.id) ?? []).map((c: Row) => ({ currencyId: c.currency_id, isDefault: c.is_default })),
      features: (featuresBy.get(r.id) ?? []).map((f: Row): Feature => ({
        id: f.id, productId: f.product_id, key: f.key, name: f.name, displayName: f.display_name, description: f.description,
        variableName: f.variable_name, status: f.status, visibility: f.visibility, valueType: f.value_type, defaultValue: f.default_value,
        showUnlimited: f.show_unlimited, sortOrder: f.sort_order, updatedAt: f.updated_at,
        enumOptions: (optionsBy.get(f.id) ?? []).map((o: Row) => ({ id: o.id, featureId: o.feature_id, name: o.name, updatedAt: o.updated_at })),
      })),
      capabilities: (capabilitiesBy.get(r.id) ?? []).map((c: Row): Capability => ({
        id: c.id, productId: c.product_id, name: c.name, description: c.description, status: c.status, createdAt: c.created_at, updatedAt: c.updated_at,
      })),
    };
  });
}

export function productRepository(db: AnyDb): ProductRepository {
  const one = async (q: any) => (await loadProducts(db, await q.execute()))[0];
  return {
    get: (id) => one(db.selectFrom('products').selectAll().where('id', '=', id)),
    findByKey: (t, key) => one(inTenant(db.selectFrom('products as p').selectAll(), t, 'p').where('p.key', '=', key)),
    list: async (t, o) => {
      let q = inTenant(db.selectFrom('products as p').selectAll(), t, 'p');
      if (!o?.includeArchived) q = q.where('p.archived_at', 'is', null);
      return loadProducts(db, await q.orderBy('p.created_at').orderBy('p.id').execute());
    },
    page: async (t, q) => {
      const page = await keysetPage(() => {
        let b = inTenant(db.selectFrom('products as p').selectAll('p'), t, 'p');
        if (!q.includeArchived) b = b.where('p.archived_at', 'is', null);
        if (q.search) b = b.where(sql`p.name ilike ${'%' + q.search.replace(/[\\%_]/g, (m) => '\\' + m) + '%'}`);
        return b;
      }, 'p', q);
      return { ...page, items: await loadProducts(db, page.items) };
    },
    getOwnership: async (id) => {
      const r = await db.selectFrom('products').select(['id', 'organisation_id', 'is_test', 'archived_at']).where('id', '=', id).executeTakeFirst();
      return r ? { id: r.id, organisationId: r.organisation_id, isTest: r.is_test, archivedAt: r.archived_at } : undefined;
    },
    save: async (p) => {
      await upsert(db, 'products', [{
        id: p.id, organisation_id: p.organisationId, is_test: p.isTest, key: p.key, name: p.name, display_name: p.displayName,
        description: p.description, app_type: p.appType, paid: p.paid, payment_integration_id: p.paymentIntegrationId,
        payment_product_id: p.paymentProductId, archived_at: p.archivedAt, created_at: p.createdAt, updated_at: p.updatedAt,
      }]);
      const s = p.settings;
      await upsert(db, 'product_settings', [{
        id: s.id, product_id: p.id, success_url: s.successUrl, cancel_url: s.cancelUrl, allow_promo_codes: s.allowPromoCodes,
        automatic_tax: s.automaticTax, collect_billing_address: s.collectBillingAddress, collect_shipping_address: s.collectShippingAddress,
        card_prefill_preference: s.cardPrefillPreference, past_due_entitlements: s.pastDueEntitlements, created_at: s.createdAt, updated_at: s.updatedAt,
      }]);
      await replaceLinks(db, 'product_currencies', 'product_id', p.id, p.currencies.map((c, position) => ({ product_id: p.id, currency_id: c.currencyId, is_default: c.isDefault, position })));
      await syncChildren(db, 'capabilities', 'product_id', p.id, p.capabilities.map((c, position) => ({
        id: c.id, product_id: p.id, name: c.name, description: c.description, status: c.status, position, created_at: c.createdAt, updated_at: c.updatedAt,
      })));
      await syncChildren(db, 'features', 'product_id', p.id, p.features.map((f) => ({
        id: f.id, product_id: p.id, key: f.key, name: f.name, display_name: f.displayName, description: f.description, variable_name: f.variableName,
        status: f.status, visibility: f.visibility, value_type: f.valueType, default_value: f.defaultValue, show_unlimited: f.showUnlimited,
        sort_order: f.sortOrder, updated_at: f.updatedAt,
      })));
      for (const f of p.features) {
        await syncChildren(db, 'feature_enum_options', 'feature_id', f.id, f.enumOptions.map((o, position) => ({ id: o.id, feature_id: f.id, name: o.name, position, updated_at: o.updatedAt })));
      }
    },
    delete: async (id) => {
      await db.deleteFrom('products').where('id', '=', id).execute();
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Plans: the plan row with currencies, capability links, feature values, tier tag, line items.

async function loadPlans(db: AnyDb, rows: Row[]): Promise<Plan[]> {
  if (rows.length === 0) return [];
  const ids = rows.map((r) => r.id);
  const tagIds = [...new Set(rows.map((r) => r.tier_tag_id).filter(Boolean))];
  const [currencies, capabilities, features, lineItems, tags] = await Promise.all([
    db.selectFrom('plan_currencies').selectAll().where('plan_id', 'in', ids).orderBy('position').execute(),
    db.selectFrom('plan_capabilities').selectAll().where('plan_id', 'in', ids).orderBy('position').execute(),
    db.selectFrom('plan_features').selectAll().where('plan_id', 'in', ids).orderBy('position').execute(),
    db.selectFrom('line_items').selectAll().where('plan_id', 'in', ids).orderBy('position').execute(),
    tagIds.length ? db.selectFrom('tier_tags').selectAll().where('id', 'in', tagIds).execute() : Promise.resolve([]),
  ]);
  const lineItemsById = await loadLineItems(db, lineItems);
  const tagsBy = new Map(tags.map((t: Row) => [t.id, tierTag(t)]));
  const currenciesBy = groupBy(currencies, (c: Row) => c.plan_id);
  const capabilitiesBy = groupBy(capabilities, (c: Row) => c.plan_id);
  const featuresBy = groupBy(features, (f: Row) => f.plan_id);
  const lineItemsBy = groupBy(lineItems, (l: Row) => l.plan_id);
  return rows.map((r) => ({
    id: r.id, organisationId: r.organisation_id, isTest: r.is_test, productId: r.product_id, key: r.key, name: r.name,
    displayName: r.display_name, description: r.description, active: r.active, visibility: r.visibility, licenseType: r.license_type,
    planType: r.plan_type, pricingType: r.pricing_type, interval: r.interval, length: r.length, trialDays: r.trial_days,
    evaluation: r.evaluation, evalDays: r.eval_days, perSeatAmount: r.per_seat_amount, usageBased: r.usage_based,
    environment: r.environment, appKind: r.app_kind, servicePlan: r.service_plan, providerPlanId: r.provider_plan_id,
    tierTag: r.tier_tag_id ? tagsBy.get(r.tier_tag_id) ?? null : null, archivedAt: r.archived_at, createdAt: r.created_at, updatedAt: r.updated_at,
    currencies: (currenciesBy.get(r.id) ?? []).map((c: Row) => ({ currencyId: c.currency_id, amountMinor: num(c.amount_minor), paymentPlanId: c.payment_plan_id })),
    capabilityIds: (capabilitiesBy.get(r.id) ?? []).map((c: Row) => c.capability_id),
    features: (featuresBy.get(r.id) ?? []).map((f: Row) => ({
      featureId: f.feature_id, value: f.value, enumOptionId: f.enum_option_id, isUnlimited: f.is_unlimited, isUsage: f.is_usage,
      pricePerUnit: f.price_per_unit, minUsage: f.min_usage, maxUsage: f.max_usage, updatedAt: f.updated_at,
    })),
    lineItems: (lineItemsBy.get(r.id) ?? []).map((l: Row) => lineItemsById.get(l.id) as LineItem),
  }));
}

const tierTag = (t: Row): TierTag => ({ id: t.id, organisationId: t.organisation_id, name: t.name, createdAt: t.created_at, updatedAt: t.updated_at });

async function loadLineItems(db: AnyDb, items: Row[]): Promise<Map<string, LineItem>> {
  if (items.length === 0) return new Map();
  const meterIds = [...new Set(items.map((i) => i.meter_id).filter(Boolean))];
  const [prices, meters] = await Promise.all([
    db.selectFrom('prices').selectAll().where('line_item_id', 'in', items.map((i) => i.id)).execute(),
    meterIds.length ? db.selectFrom('meters').selectAll().where('id', 'in', meterIds).execute() : Promise.resolve([]),
  ]);
  const options = prices.length ? await db.selectFrom('currency_options').selectAll().where('price_id', 'in', prices.map((p: Row) => p.id)).execute() : [];
  const tiers = options.length ? await db.selectFrom('tiers').selectAll().where('currency_option_id', 'in', options.map((o: Row) => o.id)).execute() : [];
  const tiersBy = groupBy([...tiers].sort(byPosition), (t: Row) => t.currency_option_id);
  const optionsBy = groupBy([...options].sort(byPosition), (o: Row) => o.price_id);
  const pricesBy = groupBy([...prices].sort(byPosition), (p: Row) => p.line_item_id);
  const metersBy = new Map(meters.map((m: Row) => [m.id, { id: m.id, slug: m.slug, name: m.name, paymentMeterId: m.payment_meter_id, createdAt: m.created_at, updatedAt: m.updated_at } as Meter]));
  return new Map(items.map((i) => [i.id, {
    id: i.id, name: i.name, slug: i.slug, paymentProductId: i.payment_product_id, nickname: i.nickname, priceType: i.price_type,
    intervalType: i.interval_type, billingScheme: i.billing_scheme, tiersMode: i.tiers_mode, minQuantity: i.min_quantity,
    maxQuantity: i.max_quantity, isActive: i.is_active, allowChangingQuantity: i.allow_changing_quantity, unitLabel: i.unit_label,
    meter: i.meter_id ? metersBy.get(i.meter_id) ?? null : null, archivedAt: i.archived_at, createdAt: i.created_at, updatedAt: i.updated_at,
    prices: (pricesBy.get(i.id) ?? []).map((p: Row): Price => ({
      id: p.id, paymentPriceId: p.payment_price_id, interval: p.interval, intervalCount: p.interval_count, archivedAt: p.archived_at,
      createdAt: p.created_at, updatedAt: p.updated_at,
      currencyOptions: (optionsBy.get(p.id) ?? []).map((o: Row): CurrencyOption => ({
        id: o.id, currency: o.currency, unitAmount: o.unit_amount, isDefault: o.is_default, createdAt: o.created_at, updatedAt: o.updated_at,
        tiers: (tiersBy.get(o.id) ?? []).map((t: Row): Tier => ({
          id: t.id, upTo: t.up_to, flatAmount: t.flat_amount, unitAmount: t.unit_amount, createdAt: t.created_at, updatedAt: t.updated_at,
        })),
      })),
    })),
  } as LineItem]));
}

async function saveLineItems(db: AnyDb, plan: Plan): Promise<void> {
  // Line items are owned by the plan alone: replace the whole tree (children cascade).
  await db.deleteFrom('line_items').where('plan_id', '=', plan.id).execute();
  for (const [position, li] of plan.lineItems.entries()) {
    if (li.meter) {
      const m = li.meter;
      await upsert(db, 'meters', [{ id: m.id, slug: m.slug, name: m.name, payment_meter_id: m.paymentMeterId, created_at: m.createdAt, updated_at: m.updatedAt }]);
    }
    await db.insertInto('line_items').values({
      id: li.id, plan_id: plan.id, position, name: li.name, slug: li.slug, payment_product_id: li.paymentProductId, nickname: li.nickname,
      price_type: li.priceType, interval_type: li.intervalType, billing_scheme: li.billingScheme, tiers_mode: li.tiersMode,
      min_quantity: li.minQuantity, max_quantity: li.maxQuantity, is_active: li.isActive, allow_changing_quantity: li.allowChangingQuantity,
      unit_label: li.unitLabel, meter_id: li.meter?.id ?? null, archived_at: li.archivedAt, created_at: li.createdAt, updated_at: li.updatedAt,
    }).execute();
    for (const [pp, p] of li.prices.entries()) {
      await db.insertInto('prices').values({
        id: p.id, line_item_id: li.id, position: pp, payment_price_id: p.paymentPriceId, interval: p.interval, interval_count: p.intervalCount,
        archived_at: p.archivedAt, created_at: p.createdAt, updated_at: p.updatedAt,
      }).execute();
      for (const [op, o] of p.currencyOptions.entries()) {
        await db.insertInto('currency_options').values({
          id: o.id, price_id: p.id, position: op, currency: o.currency, unit_amount: o.unitAmount, is_default: o.isDefault, created_at: o.createdAt, updated_at: o.updatedAt,
        }).execute();
        if (o.tiers.length) {
          await db.insertInto('tiers').values(o.tiers.map((t, tp) => ({
            id: t.id, currency_option_id: o.id, position: tp, up_to: t.upTo, flat_amount: t.flatAmount, unit_amount: t.unitAmount, created_at: t.createdAt, updated_at: t.updatedAt,
          }))).execute();
        }
      }
    }
  }
}

function planFilters(b: any, q: PlanListQuery): any {
  if (!q.includeArchived) b = b.where('pl.archived_at', 'is', null);
  if (q.search) b = b.where(sql`pl.name ilike ${'%' + q.search.replace(/[\\%_]/g, (m) => '\\' + m) + '%'}`);
  if (q.productId) b = b.where('pl.product_id', '=', q.productId);
  if (q.isActive === true) b = b.where('pl.active', '=', true).where('pl.archived_at', 'is', null);
  if (q.isActive === false) b = b.where(sql`(not pl.active or pl.archived_at is not null)`);
  if (q.currency) {
    b = b.where(sql`exists (select 1 from line_items li join prices pr on pr.line_item_id = li.id join currency_options co on co.price_id = pr.id
      where li.plan_id = pl.id and co.currency = ${q.currency.toLowerCase()})`);
  }
  if (q.interval || q.intervalCount !== undefined) {
    b = b.where(sql`exists (select 1 from line_items li join prices pr on pr.line_item_id = li.id where li.plan_id = pl.id
      ${q.interval ? sql`and pr.interval = ${q.interval}` : sql``} ${q.intervalCount !== undefined ? sql`and pr.interval_count = ${q.intervalCount}` : sql``})`);
  }
  return b;
}

export function planRepository(db: AnyDb): PlanRepository {
  const one = async (q: any) => (await loadPlans(db, await q.execute()))[0];
  return {
    get: (id) => one(db.selectFrom('plans').selectAll().where('id', '=', id)),
    getMany: async (ids) => (ids.length ? loadPlans(db, await db.selectFrom('plans').selectAll().where('id', 'in', ids).execute()) : []),
    findByKey: (productId, key) => one(db.selectFrom('plans').selectAll().where('product_id', '=', productId).where('key', '=', key)),
    listByProduct: async (productId) =>
      loadPlans(db, await db.selectFrom('plans').selectAll().where('product_id', '=', productId).orderBy('created_at').orderBy('id').execute()),
    page: async (t, q) => {
      const page = await keysetPage(() => planFilters(inTenant(db.selectFrom('plans as pl').selectAll('pl'), t, 'pl'), q), 'pl', q);
      return { ...page, items: await loadPlans(db, page.items) };
    },
    capabilityNames: async (planIds) => {
      if (planIds.length === 0) return new Map();
      const rows = await db.selectFrom('plan_capabilities as pc').innerJoin('capabilities as c', 'c.id', 'pc.capability_id')
        .select(['pc.plan_id', 'c.name']).where('pc.plan_id', 'in', planIds).orderBy('pc.plan_id').orderBy('pc.position').execute();
      const out = new Map<string, string[]>();
      for (const r of rows as Row[]) out.set(r.plan_id, [...(out.get(r.plan_id) ?? []), r.name]);
      return out;
    },
    filterOptions: async (t) => {
      const rows = await inTenant(
        db.selectFrom('plans as pl').innerJoin('line_items as li', 'li.plan_id', 'pl.id').innerJoin('prices as pr', 'pr.line_item_id', 'li.id')
          .leftJoin('currency_options as co', 'co.price_id', 'pr.id'),
        t, 'pl',
      ).select(['co.currency', 'pr.interval', 'pr.interval_count']).execute();
      const currencies = [...new Set(rows.map((r: Row) => r.currency).filter(Boolean))].sort() as string[];
      const intervals = new Map<string, { interval: string | null; intervalCount: number | null }>();
      for (const r of rows as Row[]) intervals.set(`${r.interval}/${r.interval_count}`, { interval: r.interval, intervalCount: r.interval_count });
      return { currencies, intervals: [...intervals.values()] };
    },
    save: async (p) => {
      if (p.tierTag) await saveTierTag(db, p.tierTag);
      await upsert(db, 'plans', [{
        id: p.id, organisation_id: p.organisationId, is_test: p.isTest, product_id: p.productId, key: p.key, name: p.name,
        display_name: p.displayName, description: p.description, active: p.active, visibility: p.visibility, license_type: p.licenseType,
        plan_type: p.planType, pricing_type: p.pricingType, interval: p.interval, length: p.length, trial_days: p.trialDays,
        evaluation: p.evaluation, eval_days: p.evalDays, per_seat_amount: p.perSeatAmount, usage_based: p.usageBased,
        environment: p.environment, app_kind: p.appKind, service_plan: p.servicePlan, provider_plan_id: p.providerPlanId,
        tier_tag_id: p.tierTag?.id ?? null, archived_at: p.archivedAt, created_at: p.createdAt, updated_at: p.updatedAt,
      }]);
      await replaceLinks(db, 'plan_currencies', 'plan_id', p.id, p.currencies.map((c, position) => ({
        plan_id: p.id, currency_id: c.currencyId, amount_minor: c.amountMinor, payment_plan_id: c.paymentPlanId, position,
      })));
      await replaceLinks(db, 'plan_capabilities', 'plan_id', p.id, p.capabilityIds.map((capability_id, position) => ({ plan_id: p.id, capability_id, position })));
      await replaceLinks(db, 'plan_features', 'plan_id', p.id, p.features.map((f, position) => ({
        plan_id: p.id, feature_id: f.featureId, value: f.value, enum_option_id: f.enumOptionId, is_unlimited: f.isUnlimited, is_usage: f.isUsage,
        price_per_unit: f.pricePerUnit, min_usage: f.minUsage, max_usage: f.maxUsage, position, updated_at: f.updatedAt,
      })));
      await saveLineItems(db, p);
    },
    delete: async (id) => {
      await db.deleteFrom('plans').where('id', '=', id).execute();
    },
    getTierTag: async (id) => {
      const row = await db.selectFrom('tier_tags').selectAll().where('id', '=', id).executeTakeFirst();
      return row ? tierTag(row) : undefined;
    },
    saveTierTag: (tag) => saveTierTag(db, tag),
  };
}

const saveTierTag = (db: AnyDb, t: TierTag) =>
  upsert(db, 'tier_tags', [{ id: t.id, organisation_id: t.organisationId, name: t.name, created_at: t.createdAt, updated_at: t.updatedAt }]);

// ---------------------------------------------------------------------------------------------

async function loadTables(db: AnyDb, rows: Row[]): Promise<PricingTable[]> {
  if (rows.length === 0) return [];
  const ids = rows.map((r) => r.id);
  const [plans, features] = await Promise.all([
    db.selectFrom('pricing_table_plans').selectAll().where('pricing_table_id', 'in', ids).orderBy('sort_order').execute(),
    db.selectFrom('pricing_table_features').selectAll().where('pricing_table_id', 'in', ids).orderBy('sort_order').execute(),
  ]);
  const plansBy = groupBy(plans, (p: Row) => p.pricing_table_id);
  const featuresBy = groupBy(features, (f: Row) => f.pricing_table_id);
  return rows.map((r) => ({
    id: r.id, organisationId: r.organisation_id, isTest: r.is_test, productId: r.product_id, key: r.key, name: r.name, status: r.status,
    title: r.title, text: r.text, theme: r.theme, featureOrder: r.feature_order, customTheme: r.custom_theme ?? null,
    featuredPlanId: r.featured_plan_id, updatedAt: r.updated_at,
    plans: (plansBy.get(r.id) ?? []).map((p: Row) => ({ planId: p.plan_id, sortOrder: p.sort_order, updatedAt: p.updated_at })),
    features: (featuresBy.get(r.id) ?? []).map((f: Row) => ({ featureId: f.feature_id, sortOrder: f.sort_order, updatedAt: f.updated_at })),
  }));
}

export function pricingTableRepository(db: AnyDb): PricingTableRepository {
  return {
    get: async (id) => (await loadTables(db, await db.selectFrom('pricing_tables').selectAll().where('id', '=', id).execute()))[0],
    listByProduct: async (productId) =>
      loadTables(db, await db.selectFrom('pricing_tables').selectAll().where('product_id', '=', productId).orderBy('name').orderBy('id').execute()),
    save: async (t) => {
      await upsert(db, 'pricing_tables', [{
        id: t.id, organisation_id: t.organisationId, is_test: t.isTest, product_id: t.productId, key: t.key, name: t.name, status: t.status,
        title: t.title, text: t.text, theme: t.theme, feature_order: t.featureOrder, custom_theme: t.customTheme === null ? null : json(t.customTheme),
        featured_plan_id: t.featuredPlanId, updated_at: t.updatedAt,
      }]);
      await replaceLinks(db, 'pricing_table_plans', 'pricing_table_id', t.id, t.plans.map((p) => ({ pricing_table_id: t.id, plan_id: p.planId, sort_order: p.sortOrder, updated_at: p.updatedAt })));
      await replaceLinks(db, 'pricing_table_features', 'pricing_table_id', t.id, t.features.map((f) => ({ pricing_table_id: t.id, feature_id: f.featureId, sort_order: f.sortOrder, updated_at: f.updatedAt })));
    },
  };
}
