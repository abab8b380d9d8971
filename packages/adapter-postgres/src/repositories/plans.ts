import type {
  CurrencyOption,
  Interval,
  LineItem,
  Meter,
  Plan,
  PlanListQuery,
  PlanRepository,
  Price,
  Tier,
  TierTag,
  UsageTerms,
} from '@tollgate/core';
import { sql, type SelectQueryBuilder, type Selectable } from 'kysely';
import type { DB } from '../schema';
import { byPosition, containing, groupBy, keysetPage, replaceLinks, tenantOf, upsert, type Db } from './db';

type PlanRow = Selectable<DB['plans']>;
type LineItemRow = Selectable<DB['line_items']>;

const tierTag = (t: Selectable<DB['tier_tags']>): TierTag => ({
  id: t.id,
  organisationId: t.organisation_id,
  name: t.name,
  createdAt: t.created_at,
  updatedAt: t.updated_at,
});

/** Plans with currencies, capability links, feature values, tier tag and their catalog pricing tree. */
async function loadPlans(db: Db, rows: PlanRow[]): Promise<Plan[]> {
  if (rows.length === 0) return [];
  const ids = rows.map((r) => r.id);
  const tagIds = [...new Set(rows.map((r) => r.tier_tag_id).filter((t): t is string => !!t))];
  const [currencies, capabilities, features, lineItems, tags] = await Promise.all([
    db.selectFrom('plan_currencies').selectAll().where('plan_id', 'in', ids).orderBy('position').execute(),
    db.selectFrom('plan_capabilities').selectAll().where('plan_id', 'in', ids).orderBy('position').execute(),
    db.selectFrom('plan_features').selectAll().where('plan_id', 'in', ids).orderBy('position').execute(),
    db.selectFrom('line_items').selectAll().where('plan_id', 'in', ids).orderBy('position').execute(),
    tagIds.length ? db.selectFrom('tier_tags').selectAll().where('id', 'in', tagIds).execute() : Promise.resolve([]),
  ]);
  const lineItemsById = await loadLineItems(db, lineItems);
  const tagsBy = new Map(tags.map((t) => [t.id, tierTag(t)]));
  const currenciesBy = groupBy(currencies, (c) => c.plan_id);
  const capabilitiesBy = groupBy(capabilities, (c) => c.plan_id);
  const featuresBy = groupBy(features, (f) => f.plan_id);
  const lineItemsBy = groupBy(lineItems, (l) => l.plan_id);
  return rows.map((r) => ({
    id: r.id,
    organisationId: r.organisation_id,
    isTest: r.is_test,
    productId: r.product_id,
    key: r.key,
    name: r.name,
    displayName: r.display_name,
    description: r.description,
    active: r.active,
    visibility: r.visibility as Plan['visibility'],
    licenseType: r.license_type as Plan['licenseType'],
    planType: r.plan_type as Plan['planType'],
    pricingType: r.pricing_type as Plan['pricingType'],
    interval: r.interval as Interval,
    length: r.length,
    trialDays: r.trial_days,
    evaluation: r.evaluation,
    evalDays: r.eval_days,
    perSeatAmount: r.per_seat_amount,
    usageBased: r.usage_based,
    environment: r.environment,
    appKind: r.app_kind,
    servicePlan: r.service_plan,
    providerPlanId: r.provider_plan_id,
    tierTag: r.tier_tag_id ? (tagsBy.get(r.tier_tag_id) ?? null) : null,
    archivedAt: r.archived_at,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    currencies: (currenciesBy.get(r.id) ?? []).map((c) => ({
      currencyId: c.currency_id,
      amountMinor: Number(c.amount_minor),
      paymentPlanId: c.payment_plan_id,
    })),
    capabilityIds: (capabilitiesBy.get(r.id) ?? []).map((c) => c.capability_id),
    features: (featuresBy.get(r.id) ?? []).map((f) => ({
      featureId: f.feature_id,
      value: f.value,
      enumOptionId: f.enum_option_id,
      isUnlimited: f.is_unlimited,
      isUsage: f.is_usage,
      pricePerUnit: Number(f.price_per_unit),
      minUsage: Number(f.min_usage),
      maxUsage: Number(f.max_usage),
      updatedAt: f.updated_at,
    })),
    lineItems: (lineItemsBy.get(r.id) ?? []).map((l) => lineItemsById.get(l.id) as LineItem),
  }));
}

/** Usage terms as stored: quantities as decimal strings (exact), read back as bigint. */
const usageTermsJson = (t: UsageTerms) => ({
  allowance: String(t.allowance),
  maxUsage: t.maxUsage === null ? null : String(t.maxUsage),
  minUsage: String(t.minUsage),
  rollover: t.rollover.kind === 'upTo' ? { kind: 'upTo', units: String(t.rollover.units) } : t.rollover,
});
function usageTermsOf(raw: unknown): UsageTerms | null {
  if (raw === null || raw === undefined) return null;
  const t = (typeof raw === 'string' ? JSON.parse(raw) : raw) as ReturnType<typeof usageTermsJson>;
  return {
    allowance: BigInt(t.allowance),
    maxUsage: t.maxUsage === null ? null : BigInt(t.maxUsage),
    minUsage: BigInt(t.minUsage),
    rollover:
      t.rollover.kind === 'upTo'
        ? { kind: 'upTo', units: BigInt((t.rollover as { units: string }).units) }
        : { kind: t.rollover.kind as 'none' | 'all' },
  };
}

async function loadLineItems(db: Db, items: LineItemRow[]): Promise<Map<string, LineItem>> {
  if (items.length === 0) return new Map();
  const meterIds = [...new Set(items.map((i) => i.meter_id).filter((m): m is string => !!m))];
  const [prices, meters] = await Promise.all([
    db
      .selectFrom('prices')
      .selectAll()
      .where(
        'line_item_id',
        'in',
        items.map((i) => i.id),
      )
      .execute(),
    meterIds.length ? db.selectFrom('meters').selectAll().where('id', 'in', meterIds).execute() : Promise.resolve([]),
  ]);
  const options = prices.length
    ? await db
        .selectFrom('currency_options')
        .selectAll()
        .where(
          'price_id',
          'in',
          prices.map((p) => p.id),
        )
        .execute()
    : [];
  const tiers = options.length
    ? await db
        .selectFrom('tiers')
        .selectAll()
        .where(
          'currency_option_id',
          'in',
          options.map((o) => o.id),
        )
        .execute()
    : [];
  const tiersBy = groupBy([...tiers].sort(byPosition), (t) => t.currency_option_id);
  const optionsBy = groupBy([...options].sort(byPosition), (o) => o.price_id);
  const pricesBy = groupBy([...prices].sort(byPosition), (p) => p.line_item_id);
  const metersBy = new Map(
    meters.map((m): [string, Meter] => [
      m.id,
      {
        id: m.id,
        slug: m.slug,
        name: m.name,
        paymentMeterId: m.payment_meter_id,
        // A decimal meter's scale gives its terms and tiers their meaning (absent on whole-unit meters).
        ...(Number(m.scale) ? { scale: Number(m.scale) } : {}),
        createdAt: m.created_at,
        updatedAt: m.updated_at,
      },
    ]),
  );
  return new Map(
    items.map((i): [string, LineItem] => [
      i.id,
      {
        id: i.id,
        name: i.name,
        slug: i.slug,
        paymentProductId: i.payment_product_id,
        nickname: i.nickname,
        priceType: i.price_type as LineItem['priceType'],
        intervalType: i.interval_type as LineItem['intervalType'],
        billingScheme: i.billing_scheme as LineItem['billingScheme'],
        tiersMode: i.tiers_mode as LineItem['tiersMode'],
        minQuantity: i.min_quantity,
        maxQuantity: i.max_quantity,
        isActive: i.is_active,
        allowChangingQuantity: i.allow_changing_quantity,
        unitLabel: i.unit_label,
        meter: i.meter_id ? (metersBy.get(i.meter_id) ?? null) : null,
        // Only a metered line item with terms has them (the member is absent otherwise).
        ...(i.usage_terms ? { usage: usageTermsOf(i.usage_terms) } : {}),
        archivedAt: i.archived_at,
        createdAt: i.created_at,
        updatedAt: i.updated_at,
        prices: (pricesBy.get(i.id) ?? []).map((p): Price => ({
          id: p.id,
          paymentPriceId: p.payment_price_id,
          interval: p.interval as Interval | null,
          intervalCount: p.interval_count,
          archivedAt: p.archived_at,
          createdAt: p.created_at,
          updatedAt: p.updated_at,
          currencyOptions: (optionsBy.get(p.id) ?? []).map((o): CurrencyOption => ({
            id: o.id,
            currency: o.currency,
            unitAmount: o.unit_amount === null ? null : Number(o.unit_amount),
            isDefault: o.is_default,
            createdAt: o.created_at,
            updatedAt: o.updated_at,
            tiers: (tiersBy.get(o.id) ?? []).map((t): Tier => ({
              id: t.id,
              upTo: t.up_to,
              flatAmount: t.flat_amount === null ? null : Number(t.flat_amount),
              unitAmount: Number(t.unit_amount),
              createdAt: t.created_at,
              updatedAt: t.updated_at,
            })),
          })),
        })),
      },
    ]),
  );
}

/** Line items are owned by the plan alone: the whole tree is replaced (children cascade). */
async function saveLineItems(db: Db, plan: Plan): Promise<void> {
  await db.deleteFrom('line_items').where('plan_id', '=', plan.id).execute();
  for (const [position, li] of plan.lineItems.entries()) {
    if (li.meter) {
      const m = li.meter;
      await upsert(db, 'meters', [
        { id: m.id, slug: m.slug, name: m.name, payment_meter_id: m.paymentMeterId, created_at: m.createdAt, updated_at: m.updatedAt },
      ]);
    }
    await db
      .insertInto('line_items')
      .values({
        id: li.id,
        plan_id: plan.id,
        position,
        name: li.name,
        slug: li.slug,
        payment_product_id: li.paymentProductId,
        nickname: li.nickname,
        price_type: li.priceType,
        interval_type: li.intervalType,
        billing_scheme: li.billingScheme,
        tiers_mode: li.tiersMode,
        min_quantity: li.minQuantity,
        max_quantity: li.maxQuantity,
        is_active: li.isActive,
        allow_changing_quantity: li.allowChangingQuantity,
        unit_label: li.unitLabel,
        meter_id: li.meter?.id ?? null,
        usage_terms: li.usage ? JSON.stringify(usageTermsJson(li.usage)) : null,
        archived_at: li.archivedAt,
        created_at: li.createdAt,
        updated_at: li.updatedAt,
      })
      .execute();
    for (const [pp, p] of li.prices.entries()) {
      await db
        .insertInto('prices')
        .values({
          id: p.id,
          line_item_id: li.id,
          position: pp,
          payment_price_id: p.paymentPriceId,
          interval: p.interval,
          interval_count: p.intervalCount,
          archived_at: p.archivedAt,
          created_at: p.createdAt,
          updated_at: p.updatedAt,
        })
        .execute();
      for (const [op, o] of p.currencyOptions.entries()) {
        await db
          .insertInto('currency_options')
          .values({
            id: o.id,
            price_id: p.id,
            position: op,
            currency: o.currency,
            unit_amount: o.unitAmount,
            is_default: o.isDefault,
            created_at: o.createdAt,
            updated_at: o.updatedAt,
          })
          .execute();
        if (o.tiers.length) {
          await db
            .insertInto('tiers')
            .values(
              o.tiers.map((t, tp) => ({
                id: t.id,
                currency_option_id: o.id,
                position: tp,
                up_to: t.upTo,
                flat_amount: t.flatAmount,
                unit_amount: t.unitAmount,
                created_at: t.createdAt,
                updated_at: t.updatedAt,
              })),
            )
            .execute();
        }
      }
    }
  }
}

type PlanQuery = SelectQueryBuilder<DB & { pl: DB['plans'] }, 'pl', PlanRow>;

function planFilters(b: PlanQuery, q: PlanListQuery): PlanQuery {
  if (!q.includeArchived) b = b.where('pl.archived_at', 'is', null);
  if (q.search) b = b.where(sql<boolean>`pl.name ilike ${containing(q.search)}`);
  if (q.productId) b = b.where('pl.product_id', '=', q.productId);
  if (q.isActive === true) b = b.where('pl.active', '=', true).where('pl.archived_at', 'is', null);
  if (q.isActive === false) b = b.where(sql<boolean>`(not pl.active or pl.archived_at is not null)`);
  if (q.currency) {
    b =
      b.where(sql<boolean>`exists (select 1 from line_items li join prices pr on pr.line_item_id = li.id join currency_options co on co.price_id = pr.id
      where li.plan_id = pl.id and co.currency = ${q.currency.toLowerCase()})`);
  }
  if (q.interval || q.intervalCount !== undefined) {
    b = b.where(sql<boolean>`exists (select 1 from line_items li join prices pr on pr.line_item_id = li.id where li.plan_id = pl.id
      ${q.interval === 'one_off' ? sql`and pr.interval is null` : q.interval ? sql`and pr.interval = ${q.interval}` : sql``} ${q.intervalCount !== undefined ? sql`and pr.interval_count = ${q.intervalCount}` : sql``})`);
  }
  return b;
}

const saveTierTag = (db: Db, t: TierTag) =>
  upsert(db, 'tier_tags', [
    { id: t.id, organisation_id: t.organisationId, name: t.name, created_at: t.createdAt, updated_at: t.updatedAt },
  ]);

export function planRepository(db: Db): PlanRepository {
  const plans = () => db.selectFrom('plans').selectAll();
  return {
    get: async (id) => (await loadPlans(db, await plans().where('id', '=', id).execute()))[0],
    getForUpdate: async (id) => (await loadPlans(db, await plans().where('id', '=', id).forNoKeyUpdate().execute()))[0],
    getMany: async (ids) => (ids.length ? loadPlans(db, await plans().where('id', 'in', ids).execute()) : []),
    findByKey: async (productId, key) =>
      (await loadPlans(db, await plans().where('product_id', '=', productId).where('key', '=', key).execute()))[0],
    listByProduct: async (productId) =>
      loadPlans(db, await plans().where('product_id', '=', productId).orderBy('created_at').orderBy('id').execute()),
    page: async (t, q) => {
      const page = await keysetPage(
        () =>
          planFilters(
            db
              .selectFrom('plans as pl')
              .selectAll('pl')
              .where((eb) => eb.and({ 'pl.organisation_id': t.organisationId, 'pl.is_test': t.isTest })),
            q,
          ),
        'pl',
        q,
      );
      return { ...page, items: await loadPlans(db, page.items) };
    },
    capabilityNames: async (planIds) => {
      if (planIds.length === 0) return new Map();
      const rows = await db
        .selectFrom('plan_capabilities as pc')
        .innerJoin('capabilities as c', 'c.id', 'pc.capability_id')
        .select(['pc.plan_id', 'c.name'])
        .where('pc.plan_id', 'in', planIds)
        .orderBy('pc.plan_id')
        .orderBy('pc.position')
        .execute();
      const out = new Map<string, string[]>();
      for (const r of rows) out.set(r.plan_id, [...(out.get(r.plan_id) ?? []), r.name]);
      return out;
    },
    planOfPart: async (id) => {
      const { rows } = await sql<{ plan_id: string }>`
        select plan_id from line_items where id = ${id}
        union all select li.plan_id from prices p join line_items li on li.id = p.line_item_id where p.id = ${id}
        union all select li.plan_id from currency_options o join prices p on p.id = o.price_id
          join line_items li on li.id = p.line_item_id where o.id = ${id}
        union all select li.plan_id from tiers t join currency_options o on o.id = t.currency_option_id
          join prices p on p.id = o.price_id join line_items li on li.id = p.line_item_id where t.id = ${id}
        limit 1`.execute(db);
      return rows[0]?.plan_id;
    },
    filterOptions: async (t) => {
      const rows = await db
        .selectFrom('plans as pl')
        .innerJoin('line_items as li', 'li.plan_id', 'pl.id')
        .innerJoin('prices as pr', 'pr.line_item_id', 'li.id')
        .leftJoin('currency_options as co', 'co.price_id', 'pr.id')
        .where((eb) => eb.and({ 'pl.organisation_id': t.organisationId, 'pl.is_test': t.isTest }))
        .select(['co.currency', 'pr.interval', 'pr.interval_count'])
        .execute();
      const currencies = [...new Set(rows.map((r) => r.currency).filter((c): c is string => !!c))].sort();
      const intervals = new Map<string, { interval: string | null; intervalCount: number | null }>();
      for (const r of rows) intervals.set(`${r.interval}/${r.interval_count}`, { interval: r.interval, intervalCount: r.interval_count });
      return { currencies, intervals: [...intervals.values()] };
    },
    save: async (p) => {
      if (p.tierTag) await saveTierTag(db, p.tierTag);
      await upsert(db, 'plans', [
        {
          id: p.id,
          ...tenantOf(p),
          product_id: p.productId,
          key: p.key,
          name: p.name,
          display_name: p.displayName,
          description: p.description,
          active: p.active,
          visibility: p.visibility,
          license_type: p.licenseType,
          plan_type: p.planType,
          pricing_type: p.pricingType,
          interval: p.interval,
          length: p.length,
          trial_days: p.trialDays,
          evaluation: p.evaluation,
          eval_days: p.evalDays,
          per_seat_amount: p.perSeatAmount,
          usage_based: p.usageBased,
          environment: p.environment,
          app_kind: p.appKind,
          service_plan: p.servicePlan,
          provider_plan_id: p.providerPlanId,
          tier_tag_id: p.tierTag?.id ?? null,
          archived_at: p.archivedAt,
          created_at: p.createdAt,
          updated_at: p.updatedAt,
        },
      ]);
      await replaceLinks(
        db,
        'plan_currencies',
        'plan_id',
        p.id,
        p.currencies.map((c, position) => ({
          plan_id: p.id,
          currency_id: c.currencyId,
          amount_minor: c.amountMinor,
          payment_plan_id: c.paymentPlanId,
          position,
        })),
      );
      await replaceLinks(
        db,
        'plan_capabilities',
        'plan_id',
        p.id,
        p.capabilityIds.map((capability_id, position) => ({ plan_id: p.id, capability_id, position })),
      );
      await replaceLinks(
        db,
        'plan_features',
        'plan_id',
        p.id,
        p.features.map((f, position) => ({
          plan_id: p.id,
          feature_id: f.featureId,
          value: f.value,
          enum_option_id: f.enumOptionId,
          is_unlimited: f.isUnlimited,
          is_usage: f.isUsage,
          price_per_unit: f.pricePerUnit,
          min_usage: f.minUsage,
          max_usage: f.maxUsage,
          position,
          updated_at: f.updatedAt,
        })),
      );
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
    findTierTag: async (orgId, name) => {
      const row = await db
        .selectFrom('tier_tags')
        .selectAll()
        .where('organisation_id', '=', orgId)
        .where(sql<boolean>`lower(name) = lower(${name})`)
        .orderBy('created_at')
        .orderBy('id')
        .executeTakeFirst();
      return row ? tierTag(row) : undefined;
    },
    pageTierTags: async (orgId, q) => {
      const page = await keysetPage(
        () => {
          const base = db.selectFrom('tier_tags').selectAll().where('organisation_id', '=', orgId);
          return q.search ? base.where(sql<boolean>`strpos(lower(name), lower(${q.search})) > 0`) : base;
        },
        'tier_tags',
        q,
      );
      return { ...page, items: page.items.map(tierTag) };
    },
  };
}
