import { DomainError, ErrorCodes } from '@tollgate/core';
import type {
  AddedPlan,
  CheckIndexRow,
  DomainEvent,
  EventRepository,
  License,
  LicenseFilter,
  LicenseRepository,
  Subscription,
  SubscriptionLineItem,
  SubscriptionRepository,
  Tenant,
} from '@tollgate/core';
import { sql, type SelectQueryBuilder, type Selectable } from 'kysely';
import type { DB } from '../schema';
import { chunks, type Db, json, keysetPage, tenantOf, upsert } from './db';

/** The subscription (of `table`, by its name or alias) holds one of the plans as its first plan or as an added one. */
const holdsAnyPlan = (table: 'subscriptions' | 'su', planIds: string[]) =>
  sql<boolean>`(${sql.ref(`${table}.plan_id`)} in (${sql.join(planIds)}) or exists (select 1 from subscription_plans sp where sp.subscription_id = ${sql.ref(`${table}.id`)} and sp.plan_id in (${sql.join(planIds)})))`;

const toAddedPlan = (r: Selectable<DB['subscription_plans']>): AddedPlan => ({
  id: r.id,
  planId: r.plan_id,
  quantity: r.quantity,
  lineItemIds: r.line_item_ids as string[],
  // Only when known (an added plan made without a provider item has none, as in memory).
  ...(r.payment_item_id ? { paymentItemId: r.payment_item_id } : {}),
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

const toSubscription = (r: Selectable<DB['subscriptions']>, addedPlans: AddedPlan[] = []): Subscription => ({
  id: r.id,
  organisationId: r.organisation_id,
  isTest: r.is_test,
  productId: r.product_id,
  planId: r.plan_id,
  customerId: r.customer_id,
  granteeId: r.grantee_id,
  email: r.email,
  paymentProvider: r.payment_provider,
  paymentSubscriptionId: r.payment_subscription_id,
  type: r.type,
  quantity: r.quantity,
  status: r.status as Subscription['status'],
  currency: r.currency,
  currentPeriodStart: r.current_period_start,
  currentPeriodEnd: r.current_period_end,
  cancelAtPeriodEnd: r.cancel_at_period_end,
  canceledAt: r.canceled_at,
  replacesId: r.replaces_id,
  lineItemIds: r.line_item_ids as string[],
  addedPlans,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

const toLineItem = (r: Selectable<DB['subscription_line_items']>): SubscriptionLineItem => ({
  id: r.id,
  organisationId: r.organisation_id,
  isTest: r.is_test,
  subscriptionId: r.subscription_id,
  lineItemId: r.line_item_id,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

/** Why a seat removal is refused: a seat to remove has a grantee (access is never silently taken from a named user). */
const ASSIGNED_MEANWHILE = 'a seat to remove was assigned meanwhile, so none was removed; try again';

/** A UUID no record has: an empty `in` list matches nothing. */
const NONE = '00000000-0000-0000-0000-000000000000';

export function subscriptionRepository(db: Db): SubscriptionRepository {
  /** The rows as subscriptions, each with the plans it holds beyond its first (one query for all). */
  const withPlans = async (rows: Selectable<DB['subscriptions']>[]): Promise<Subscription[]> => {
    if (rows.length === 0) return [];
    const added = await db
      .selectFrom('subscription_plans')
      .selectAll()
      .where(
        'subscription_id',
        'in',
        rows.map((r) => r.id),
      )
      .orderBy('position')
      .execute();
    const by = new Map<string, AddedPlan[]>();
    for (const a of added) by.set(a.subscription_id, [...(by.get(a.subscription_id) ?? []), toAddedPlan(a)]);
    return rows.map((r) => toSubscription(r, by.get(r.id)));
  };
  const one = async (id: string, forUpdate: boolean) => {
    const q = db.selectFrom('subscriptions').selectAll().where('id', '=', id);
    const r = await (forUpdate ? q.forUpdate() : q).executeTakeFirst();
    return r && (await withPlans([r]))[0];
  };
  const due = (now: Date, limit: number) =>
    db
      .selectFrom('subscriptions')
      .select('id')
      .where('status', '<>', 'CANCELED')
      .where('current_period_end', '<=', now)
      .orderBy('current_period_end')
      .limit(limit);
  return {
    get: (id) => one(id, false),
    getForUpdate: (id) => one(id, true),
    findByPaymentId: async (pid) => {
      const r = await db.selectFrom('subscriptions').selectAll().where('payment_subscription_id', '=', pid).executeTakeFirst();
      return r && (await withPlans([r]))[0];
    },
    // The row version's writing transaction: every update (even of unchanged values) makes a new one.
    revision: async (id) =>
      (
        await db
          .selectFrom('subscriptions')
          .select(sql<string>`xmin::text`.as('revision'))
          .where('id', '=', id)
          .executeTakeFirst()
      )?.revision,
    listByPlan: async (planId) =>
      withPlans(
        await db
          .selectFrom('subscriptions')
          .selectAll()
          .where(holdsAnyPlan('subscriptions', [planId]))
          .orderBy('created_at')
          .orderBy('id')
          .execute(),
      ),
    countReferencing: async ({ planId, productId, customerId }) => {
      if (!planId && !productId && !customerId) return 0;
      const r = await db
        .selectFrom('subscriptions')
        .select(sql<number>`count(*)::int`.as('n'))
        .where((eb) =>
          eb.or([
            ...(planId ? [holdsAnyPlan('subscriptions', [planId])] : []),
            ...(productId ? [eb('product_id', '=', productId)] : []),
            ...(customerId ? [eb('customer_id', '=', customerId)] : []),
          ]),
        )
        .executeTakeFirst();
      return Number(r?.n ?? 0);
    },
    page: async (t, q) => {
      const page = await keysetPage(
        () => {
          let b = db
            .selectFrom('subscriptions as su')
            .selectAll('su')
            .where((eb) => eb.and({ 'su.organisation_id': t.organisationId, 'su.is_test': t.isTest }));
          if (q.customerIds) b = b.where('su.customer_id', 'in', q.customerIds.length ? q.customerIds : [NONE]);
          if (q.planIds) {
            const planIds = q.planIds.length ? q.planIds : [NONE];
            b = b.where(holdsAnyPlan('su', planIds));
          }
          if (q.productIds) b = b.where('su.product_id', 'in', q.productIds.length ? q.productIds : [NONE]);
          if (q.ids) b = b.where('su.id', 'in', q.ids.length ? q.ids : [NONE]);
          if (q.statuses) b = b.where('su.status', 'in', q.statuses.length ? q.statuses : ['']);
          return b;
        },
        'su',
        q,
      );
      return { ...page, items: await withPlans(page.items) };
    },
    delete: async (id) => {
      await db.deleteFrom('licenses').where('subscription_id', '=', id).execute();
      await db.deleteFrom('billing_documents').where('subscription_id', '=', id).execute();
      await db.deleteFrom('events').where('subscription_id', '=', id).execute();
      await db.updateTable('checkout_sessions').set({ subscription_id: null }).where('subscription_id', '=', id).execute();
      await db.deleteFrom('groups').where('subscription_id', '=', id).execute();
      await db.deleteFrom('subscription_plans').where('subscription_id', '=', id).execute();
      await db.deleteFrom('subscriptions').where('id', '=', id).execute();
    },
    listDueForCancellation: async (now, limit) =>
      (await due(now, limit).where('cancel_at_period_end', '=', true).execute()).map((r) => r.id),
    listDueForRenewal: async (now, providers, limit, testModeOnly = []) => {
      if (!providers.length) return [];
      let q = due(now, limit).where('cancel_at_period_end', '=', false).where('payment_provider', 'in', providers);
      if (testModeOnly.length) q = q.where((eb) => eb.or([eb('is_test', '=', true), eb('payment_provider', 'not in', testModeOnly)]));
      return (await q.execute()).map((r) => r.id);
    },
    lineItems: async (subscriptionId) => {
      const s = await one(subscriptionId, false);
      const rows = (await db.selectFrom('subscription_line_items').selectAll().where('subscription_id', '=', subscriptionId).execute()).map(
        toLineItem,
      );
      const held = s ? [...s.lineItemIds, ...s.addedPlans.flatMap((a) => a.lineItemIds)] : [];
      return held.flatMap((li) => rows.filter((r) => r.lineItemId === li));
    },
    subscriptionOfPlan: async (id) =>
      (await db.selectFrom('subscription_plans').select('subscription_id').where('id', '=', id).executeTakeFirst())?.subscription_id,
    getLineItem: async (id) => {
      const r = await db.selectFrom('subscription_line_items').selectAll().where('id', '=', id).executeTakeFirst();
      return r && toLineItem(r);
    },
    save: async (s) => {
      await saveRow(s);
      // The added plans follow `addedPlans` (a kept one keeps its row).
      let dropped = db.deleteFrom('subscription_plans').where('subscription_id', '=', s.id);
      if (s.addedPlans.length)
        dropped = dropped.where(
          'id',
          'not in',
          s.addedPlans.map((a) => a.id),
        );
      await dropped.execute();
      if (s.addedPlans.length)
        await upsert(
          db,
          'subscription_plans',
          s.addedPlans.map((a, position) => ({
            id: a.id,
            subscription_id: s.id,
            plan_id: a.planId,
            quantity: a.quantity,
            line_item_ids: json(a.lineItemIds),
            payment_item_id: a.paymentItemId ?? null,
            position,
            created_at: a.createdAt,
            updated_at: a.updatedAt,
          })),
        );
      // The line items follow `lineItemIds` and the added plans'; a kept one keeps its id.
      const lineItemIds = [...s.lineItemIds, ...s.addedPlans.flatMap((a) => a.lineItemIds)];
      let gone = db.deleteFrom('subscription_line_items').where('subscription_id', '=', s.id);
      if (lineItemIds.length) gone = gone.where('line_item_id', 'not in', lineItemIds);
      await gone.execute();
      if (lineItemIds.length)
        await db
          .insertInto('subscription_line_items')
          .values(
            lineItemIds.map((lineItemId) => ({
              organisation_id: s.organisationId,
              is_test: s.isTest,
              subscription_id: s.id,
              line_item_id: lineItemId,
              created_at: s.updatedAt,
              updated_at: s.updatedAt,
            })),
          )
          .onConflict((oc) => oc.columns(['subscription_id', 'line_item_id']).doNothing())
          .execute();
    },
  };
  async function saveRow(s: Subscription): Promise<void> {
    await upsert(db, 'subscriptions', [
      {
        id: s.id,
        organisation_id: s.organisationId,
        is_test: s.isTest,
        product_id: s.productId,
        plan_id: s.planId,
        customer_id: s.customerId,
        grantee_id: s.granteeId,
        email: s.email,
        payment_provider: s.paymentProvider,
        payment_subscription_id: s.paymentSubscriptionId,
        type: s.type,
        quantity: s.quantity,
        status: s.status,
        currency: s.currency,
        current_period_start: s.currentPeriodStart,
        current_period_end: s.currentPeriodEnd,
        cancel_at_period_end: s.cancelAtPeriodEnd,
        canceled_at: s.canceledAt,
        replaces_id: s.replacesId,
        line_item_ids: json(s.lineItemIds),
        created_at: s.createdAt,
        updated_at: s.updatedAt,
      },
    ]);
  }
}

export const toLicense = (r: Selectable<DB['licenses']>): License => ({
  id: r.id,
  organisationId: r.organisation_id,
  isTest: r.is_test,
  productId: r.product_id,
  planId: r.plan_id,
  subscriptionId: r.subscription_id,
  granteeId: r.grantee_id,
  purchaser: r.purchaser,
  email: r.email,
  name: r.name,
  paymentService: r.payment_service,
  type: r.type,
  status: r.status as License['status'],
  cancelAtPeriodEnd: r.cancel_at_period_end,
  startTime: r.start_time,
  endTime: r.end_time,
  metadata: r.metadata as Record<string, unknown>,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

const licenseRow = (l: License) => ({
  id: l.id,
  organisation_id: l.organisationId,
  is_test: l.isTest,
  product_id: l.productId,
  plan_id: l.planId,
  subscription_id: l.subscriptionId,
  grantee_id: l.granteeId,
  purchaser: l.purchaser,
  email: l.email,
  name: l.name,
  payment_service: l.paymentService,
  type: l.type,
  status: l.status,
  cancel_at_period_end: l.cancelAtPeriodEnd,
  start_time: l.startTime,
  end_time: l.endTime,
  metadata: json(l.metadata),
  created_at: l.createdAt,
  updated_at: l.updatedAt,
});

/** The tenant's licenses matching the filter. */
export function licensesOf<O>(
  q: SelectQueryBuilder<DB, 'licenses', O>,
  t: Tenant,
  f: LicenseFilter,
): SelectQueryBuilder<DB, 'licenses', O> {
  let out = q.where((eb) => eb.and(tenantOf(t)));
  if (f.status) out = out.where('status', '=', f.status);
  if (f.live) out = out.where('status', '<>', 'CANCELED');
  if (f.subscriptionId) out = out.where('subscription_id', '=', f.subscriptionId);
  if (f.productId) out = out.where('product_id', '=', f.productId);
  if (f.planId) out = out.where('plan_id', '=', f.planId);
  if (f.purchaser !== undefined) out = out.where('purchaser', '=', f.purchaser);
  if (f.granteeId !== undefined) out = out.where('grantee_id', '=', f.granteeId);
  return out;
}

export function licenseRepository(db: Db): LicenseRepository {
  return {
    get: async (id) => {
      const r = await db.selectFrom('licenses').selectAll().where('id', '=', id).executeTakeFirst();
      return r && toLicense(r);
    },
    // Locks in id order, so two batches over the same licenses cannot deadlock.
    getManyForUpdate: async (ids) => {
      const out: License[] = [];
      for (const chunk of chunks([...ids].sort(), 1)) {
        out.push(
          ...(await db.selectFrom('licenses').selectAll().where('id', 'in', chunk).orderBy('id').forUpdate().execute()).map(toLicense),
        );
      }
      return out;
    },
    subscriptionsOf: async (ids) => {
      const out = new Set<string>();
      for (const chunk of chunks(ids, 1))
        for (const r of await db
          .selectFrom('licenses')
          .select('subscription_id')
          .distinct()
          .where('id', 'in', chunk)
          .where('subscription_id', 'is not', null)
          .execute())
          out.add(r.subscription_id as string);
      return [...out].sort();
    },
    listBySubscription: async (sid) =>
      (await db.selectFrom('licenses').selectAll().where('subscription_id', '=', sid).orderBy('created_at').orderBy('id').execute()).map(
        toLicense,
      ),
    list: async (t, f) =>
      (await licensesOf(db.selectFrom('licenses').selectAll(), t, f).orderBy('created_at').orderBy('id').execute()).map(toLicense),
    page: async (t, f, q) => {
      const page = await keysetPage(() => licensesOf(db.selectFrom('licenses').selectAll(), t, f), 'licenses', q);
      return { ...page, items: page.items.map(toLicense) };
    },
    count: async (t, f) => {
      const r = await licensesOf(
        db.selectFrom('licenses').select([sql<number>`count(*)::int`.as('count'), sql<number>`count(grantee_id)::int`.as('assigned')]),
        t,
        f,
      ).executeTakeFirst();
      const count = Number(r?.count ?? 0);
      const assigned = Number(r?.assigned ?? 0);
      return { count, assigned, unassigned: count - assigned };
    },
    findForCheck: async (t, productId, grantees) =>
      grantees.length
        ? (
            await db
              .selectFrom('licenses')
              .selectAll()
              .where((eb) => eb.and(tenantOf(t)))
              .where('product_id', '=', productId)
              .where('grantee_id', 'in', grantees)
              .execute()
          ).map(toLicense)
        : [],
    scanForCheck: async (statuses, batch, visit) => {
      // A cursor of this transaction: one snapshot, reduced by the database (one row per grantee,
      // product and plan: 100 000 rows for 1 000 000 licenses), `batch` rows at a time, in the
      // port's shape (no copy per row), ends as numbers (no date parsing; floor: postgres-date's truncation).
      await sql`set local work_mem = '64MB'`.execute(db);
      await sql`
        declare tollgate_check_index no scroll cursor for
        select l.product_id as "productId", l.grantee_id as "granteeId", l.plan_id as "planId", min(l.status) as status,
          case when bool_or(l.end_time is null) then null else floor(extract(epoch from max(l.end_time)) * 1000)::float8 end as "endMs"
        from licenses l
        join products p on p.id = l.product_id and p.organisation_id = l.organisation_id and p.is_test = l.is_test
        where l.grantee_id is not null and l.status = any(${[...statuses]}::text[])
        group by l.product_id, l.grantee_id, l.plan_id`.execute(db);
      try {
        for (;;) {
          const { rows } =
            await sql<CheckIndexRow>`fetch ${sql.raw(String(Math.max(1, Math.floor(batch))))} from tollgate_check_index`.execute(db);
          if (rows.length === 0 || !visit(rows)) return;
        }
      } finally {
        await sql`close tollgate_check_index`.execute(db).catch(() => undefined);
      }
    },
    // licenses_evaluation_end (end_time) where status = 'EVALUATION': the predicate written as the index's.
    listEndedEvaluations: async (now, limit) =>
      (
        await db
          .selectFrom('licenses')
          .select('id')
          .where('status', '=', 'EVALUATION')
          .where('end_time', '<=', now)
          .where('subscription_id', 'is', null)
          .orderBy('end_time')
          .orderBy('id')
          .limit(limit)
          .execute()
      ).map((r) => r.id),
    saveMany: (ls) => upsert(db, 'licenses', ls.map(licenseRow)),
    // Only unassigned seats go: a seat assigned since the caller read it stays, and the whole unit of
    // work fails (nothing removed) rather than silently taking a named user's access.
    deleteMany: async (ids) => {
      for (const chunk of chunks(ids, 1)) {
        // A row updated concurrently is checked again once its writer commits (read committed).
        await db.deleteFrom('licenses').where('id', 'in', chunk).where('grantee_id', 'is', null).execute();
        // What is left of them was assigned (one removed by another transaction is simply gone).
        if (await db.selectFrom('licenses').select('id').where('id', 'in', chunk).limit(1).executeTakeFirst())
          throw new DomainError(ErrorCodes.CONFLICT, ASSIGNED_MEANWHILE);
      }
    },
  };
}

const toEvent = (r: Selectable<DB['events']>): DomainEvent => ({
  id: r.id,
  organisationId: r.organisation_id,
  isTest: r.is_test,
  type: r.type as DomainEvent['type'],
  subscriptionId: r.subscription_id,
  payload: r.payload as unknown as DomainEvent['payload'],
  status: r.status as DomainEvent['status'],
  attempts: r.attempts,
  runAt: r.run_at,
  lastError: r.last_error,
  errorCode: r.error_code,
  lockedUntil: r.locked_until,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

export function eventRepository(db: Db): EventRepository {
  const one = async (id: string, forUpdate: boolean) => {
    const q = db.selectFrom('events').selectAll().where('id', '=', id);
    const r = await (forUpdate ? q.forUpdate() : q).executeTakeFirst();
    return r && toEvent(r);
  };
  return {
    get: (id) => one(id, false),
    getForUpdate: (id) => one(id, true),
    save: (e) =>
      upsert(db, 'events', [
        {
          id: e.id,
          organisation_id: e.organisationId,
          is_test: e.isTest,
          type: e.type,
          subscription_id: e.subscriptionId,
          payload: json(e.payload),
          status: e.status,
          attempts: e.attempts,
          run_at: e.runAt,
          last_error: e.lastError,
          error_code: e.errorCode,
          locked_until: e.lockedUntil,
          created_at: e.createdAt,
          updated_at: e.updatedAt,
        },
      ]),
    countOpen: async () => {
      const rows = await db
        .selectFrom('events')
        .select(['status', (eb) => eb.fn.countAll<string>().as('n')])
        .where('status', 'in', ['queued', 'pending'])
        .groupBy('status')
        .execute();
      const n = (s: string) => Number(rows.find((r) => r.status === s)?.n ?? 0);
      return { queued: n('queued'), pending: n('pending') };
    },
    hasOpen: async (subscriptionId) =>
      // events_open_by_subscription
      (await db
        .selectFrom('events')
        .select('id')
        .where('subscription_id', '=', subscriptionId)
        .where('status', 'in', ['queued', 'pending'])
        .limit(1)
        .executeTakeFirst()) !== undefined,
    claimNext: async (now, leaseUntil) => {
      const r = await db
        .selectFrom('events as e')
        .selectAll('e')
        .where('e.status', 'in', ['queued', 'pending'])
        .where('e.run_at', '<=', now)
        .where((eb) => eb.or([eb('e.locked_until', 'is', null), eb('e.locked_until', '<=', now)]))
        // An earlier unfinished event of the same subscription (leased or not) goes first.
        .where(({ not, exists, selectFrom }) =>
          not(
            exists(
              selectFrom('events as p')
                .select('p.id')
                .whereRef('p.subscription_id', '=', 'e.subscription_id')
                .whereRef('p.seq', '<', 'e.seq')
                .where('p.status', 'in', ['queued', 'pending']),
            ),
          ),
        )
        .orderBy('e.seq')
        .limit(1)
        .forUpdate()
        .skipLocked()
        .executeTakeFirst();
      if (!r) return undefined;
      await db.updateTable('events').set({ locked_until: leaseUntil }).where('id', '=', r.id).execute();
      return { ...toEvent(r), lockedUntil: leaseUntil };
    },
  };
}
