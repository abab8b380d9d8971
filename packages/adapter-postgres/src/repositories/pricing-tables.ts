import type { PricingTable, PricingTableRepository } from '@tollgate/core';
import type { Selectable } from 'kysely';
import type { DB } from '../schema';
import { groupBy, json, replaceLinks, tenantOf, upsert, type Db } from './db';

async function loadTables(db: Db, rows: Selectable<DB['pricing_tables']>[]): Promise<PricingTable[]> {
  if (rows.length === 0) return [];
  const ids = rows.map((r) => r.id);
  const [plans, features] = await Promise.all([
    db.selectFrom('pricing_table_plans').selectAll().where('pricing_table_id', 'in', ids).orderBy('sort_order').execute(),
    db.selectFrom('pricing_table_features').selectAll().where('pricing_table_id', 'in', ids).orderBy('sort_order').execute(),
  ]);
  const plansBy = groupBy(plans, (p) => p.pricing_table_id);
  const featuresBy = groupBy(features, (f) => f.pricing_table_id);
  return rows.map((r) => ({
    id: r.id,
    organisationId: r.organisation_id,
    isTest: r.is_test,
    productId: r.product_id,
    key: r.key,
    name: r.name,
    status: r.status as PricingTable['status'],
    title: r.title,
    text: r.text,
    theme: r.theme,
    featureOrder: r.feature_order,
    customTheme: (r.custom_theme as Record<string, unknown> | null) ?? null,
    featuredPlanId: r.featured_plan_id,
    updatedAt: r.updated_at,
    plans: (plansBy.get(r.id) ?? []).map((p) => ({ planId: p.plan_id, sortOrder: p.sort_order, updatedAt: p.updated_at })),
    features: (featuresBy.get(r.id) ?? []).map((f) => ({ featureId: f.feature_id, sortOrder: f.sort_order, updatedAt: f.updated_at })),
  }));
}

export function pricingTableRepository(db: Db): PricingTableRepository {
  return {
    get: async (id) => (await loadTables(db, await db.selectFrom('pricing_tables').selectAll().where('id', '=', id).execute()))[0],
    listByProduct: async (productId) =>
      loadTables(
        db,
        await db.selectFrom('pricing_tables').selectAll().where('product_id', '=', productId).orderBy('name').orderBy('id').execute(),
      ),
    save: async (t) => {
      await upsert(db, 'pricing_tables', [
        {
          id: t.id,
          ...tenantOf(t),
          product_id: t.productId,
          key: t.key,
          name: t.name,
          status: t.status,
          title: t.title,
          text: t.text,
          theme: t.theme,
          feature_order: t.featureOrder,
          custom_theme: t.customTheme === null ? null : json(t.customTheme),
          featured_plan_id: t.featuredPlanId,
          updated_at: t.updatedAt,
        },
      ]);
      await replaceLinks(
        db,
        'pricing_table_plans',
        'pricing_table_id',
        t.id,
        t.plans.map((p) => ({ pricing_table_id: t.id, plan_id: p.planId, sort_order: p.sortOrder, updated_at: p.updatedAt })),
      );
      await replaceLinks(
        db,
        'pricing_table_features',
        'pricing_table_id',
        t.id,
        t.features.map((f) => ({ pricing_table_id: t.id, feature_id: f.featureId, sort_order: f.sortOrder, updated_at: f.updatedAt })),
      );
    },
  };
}
