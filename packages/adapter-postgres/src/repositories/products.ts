import type { Capability, Feature, Product, ProductRepository } from '@tollgate/core';
import { sql, type Selectable } from 'kysely';
import type { DB } from '../schema';
import { containing, groupBy, keysetPage, replaceLinks, syncChildren, tenantOf, upsert, type Db } from './db';

type ProductRow = Selectable<DB['products']>;

/** Products with their settings, currencies, features (with enum options) and capabilities, in five queries. */
async function loadProducts(db: Db, rows: ProductRow[]): Promise<Product[]> {
  if (rows.length === 0) return [];
  const ids = rows.map((r) => r.id);
  const [settings, currencies, features, capabilities] = await Promise.all([
    db.selectFrom('product_settings').selectAll().where('product_id', 'in', ids).execute(),
    db.selectFrom('product_currencies').selectAll().where('product_id', 'in', ids).orderBy('position').execute(),
    db.selectFrom('features').selectAll().where('product_id', 'in', ids).orderBy('sort_order').orderBy('id').execute(),
    db.selectFrom('capabilities').selectAll().where('product_id', 'in', ids).orderBy('position').execute(),
  ]);
  const featureIds = features.map((f) => f.id);
  const options = featureIds.length
    ? await db.selectFrom('feature_enum_options').selectAll().where('feature_id', 'in', featureIds).orderBy('position').execute()
    : [];
  const settingsBy = new Map(settings.map((s) => [s.product_id, s]));
  const currenciesBy = groupBy(currencies, (c) => c.product_id);
  const featuresBy = groupBy(features, (f) => f.product_id);
  const capabilitiesBy = groupBy(capabilities, (c) => c.product_id);
  const optionsBy = groupBy(options, (o) => o.feature_id);
  return rows.map((r) => {
    const s = settingsBy.get(r.id);
    if (!s) throw new Error(`product ${r.id} has no settings row`);
    return {
      id: r.id,
      organisationId: r.organisation_id,
      isTest: r.is_test,
      key: r.key,
      name: r.name,
      displayName: r.display_name,
      description: r.description,
      appType: r.app_type,
      paid: r.paid,
      paymentIntegrationId: r.payment_integration_id,
      paymentProductId: r.payment_product_id,
      archivedAt: r.archived_at,
      createdAt: r.created_at,
      updatedAt: r.updated_at,
      settings: {
        id: s.id,
        successUrl: s.success_url,
        cancelUrl: s.cancel_url,
        allowPromoCodes: s.allow_promo_codes,
        automaticTax: s.automatic_tax,
        collectBillingAddress: s.collect_billing_address,
        collectShippingAddress: s.collect_shipping_address,
        cardPrefillPreference: s.card_prefill_preference as Product['settings']['cardPrefillPreference'],
        pastDueEntitlements: s.past_due_entitlements,
        createdAt: s.created_at,
        updatedAt: s.updated_at,
      },
      currencies: (currenciesBy.get(r.id) ?? []).map((c) => ({ currencyId: c.currency_id, isDefault: c.is_default })),
      features: (featuresBy.get(r.id) ?? []).map((f): Feature => ({
        id: f.id,
        productId: f.product_id,
        key: f.key,
        name: f.name,
        displayName: f.display_name,
        description: f.description,
        variableName: f.variable_name,
        status: f.status as Feature['status'],
        visibility: f.visibility as Feature['visibility'],
        valueType: f.value_type as Feature['valueType'],
        defaultValue: f.default_value,
        showUnlimited: f.show_unlimited,
        sortOrder: f.sort_order,
        updatedAt: f.updated_at,
        enumOptions: (optionsBy.get(f.id) ?? []).map((o) => ({ id: o.id, featureId: o.feature_id, name: o.name, updatedAt: o.updated_at })),
      })),
      capabilities: (capabilitiesBy.get(r.id) ?? []).map((c): Capability => ({
        id: c.id,
        productId: c.product_id,
        name: c.name,
        description: c.description,
        status: c.status as Capability['status'],
        createdAt: c.created_at,
        updatedAt: c.updated_at,
      })),
    };
  });
}

export function productRepository(db: Db): ProductRepository {
  const products = () => db.selectFrom('products as p').selectAll('p');
  return {
    get: async (id) => (await loadProducts(db, await products().where('p.id', '=', id).execute()))[0],
    getForUpdate: async (id) => (await loadProducts(db, await products().where('p.id', '=', id).forNoKeyUpdate().execute()))[0],
    findByKey: async (t, key) =>
      (
        await loadProducts(
          db,
          await products()
            .where((eb) => eb.and({ 'p.organisation_id': t.organisationId, 'p.is_test': t.isTest }))
            .where('p.key', '=', key)
            .execute(),
        )
      )[0],
    list: async (t, o) => {
      let q = products().where((eb) => eb.and({ 'p.organisation_id': t.organisationId, 'p.is_test': t.isTest }));
      if (!o?.includeArchived) q = q.where('p.archived_at', 'is', null);
      return loadProducts(db, await q.orderBy('p.created_at').orderBy('p.id').execute());
    },
    page: async (t, q) => {
      const page = await keysetPage(
        () => {
          let b = products().where((eb) => eb.and({ 'p.organisation_id': t.organisationId, 'p.is_test': t.isTest }));
          if (!q.includeArchived) b = b.where('p.archived_at', 'is', null);
          if (q.search) b = b.where(sql<boolean>`p.name ilike ${containing(q.search)}`);
          return b;
        },
        'p',
        q,
      );
      return { ...page, items: await loadProducts(db, page.items) };
    },
    capabilityProduct: async (capabilityId) =>
      (await db.selectFrom('capabilities').select('product_id').where('id', '=', capabilityId).executeTakeFirst())?.product_id,
    getOwnership: async (id) => {
      const r = await db
        .selectFrom('products')
        .select(['id', 'organisation_id', 'is_test', 'archived_at'])
        .where('id', '=', id)
        .executeTakeFirst();
      return r ? { id: r.id, organisationId: r.organisation_id, isTest: r.is_test, archivedAt: r.archived_at } : undefined;
    },
    save: async (p) => {
      await upsert(db, 'products', [
        {
          id: p.id,
          ...tenantOf(p),
          key: p.key,
          name: p.name,
          display_name: p.displayName,
          description: p.description,
          app_type: p.appType,
          paid: p.paid,
          payment_integration_id: p.paymentIntegrationId,
          payment_product_id: p.paymentProductId,
          archived_at: p.archivedAt,
          created_at: p.createdAt,
          updated_at: p.updatedAt,
        },
      ]);
      const s = p.settings;
      await upsert(db, 'product_settings', [
        {
          id: s.id,
          product_id: p.id,
          success_url: s.successUrl,
          cancel_url: s.cancelUrl,
          allow_promo_codes: s.allowPromoCodes,
          automatic_tax: s.automaticTax,
          collect_billing_address: s.collectBillingAddress,
          collect_shipping_address: s.collectShippingAddress,
          card_prefill_preference: s.cardPrefillPreference,
          past_due_entitlements: s.pastDueEntitlements,
          created_at: s.createdAt,
          updated_at: s.updatedAt,
        },
      ]);
      await replaceLinks(
        db,
        'product_currencies',
        'product_id',
        p.id,
        p.currencies.map((c, position) => ({ product_id: p.id, currency_id: c.currencyId, is_default: c.isDefault, position })),
      );
      await syncChildren(
        db,
        'capabilities',
        'product_id',
        p.id,
        p.capabilities.map((c, position) => ({
          id: c.id,
          product_id: p.id,
          name: c.name,
          description: c.description,
          status: c.status,
          position,
          created_at: c.createdAt,
          updated_at: c.updatedAt,
        })),
      );
      await syncChildren(
        db,
        'features',
        'product_id',
        p.id,
        p.features.map((f) => ({
          id: f.id,
          product_id: p.id,
          key: f.key,
          name: f.name,
          display_name: f.displayName,
          description: f.description,
          variable_name: f.variableName,
          status: f.status,
          visibility: f.visibility,
          value_type: f.valueType,
          default_value: f.defaultValue,
          show_unlimited: f.showUnlimited,
          sort_order: f.sortOrder,
          updated_at: f.updatedAt,
        })),
      );
      for (const f of p.features) {
        await syncChildren(
          db,
          'feature_enum_options',
          'feature_id',
          f.id,
          f.enumOptions.map((o, position) => ({ id: o.id, feature_id: f.id, name: o.name, position, updated_at: o.updatedAt })),
        );
      }
    },
    delete: async (id) => {
      await db.deleteFrom('products').where('id', '=', id).execute();
    },
  };
}
