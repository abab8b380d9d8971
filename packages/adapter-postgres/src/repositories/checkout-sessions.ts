import type { CheckoutItem, CheckoutOptions, CheckoutSession, CheckoutSessionRepository } from '@tollgate/core';
import { sql, type Selectable } from 'kysely';
import type { DB } from '../schema';
import { json, keysetPage, upsert, type Db } from './db';

const toSession = (r: Selectable<DB['checkout_sessions']>): CheckoutSession => ({
  id: r.id,
  organisationId: r.organisation_id,
  isTest: r.is_test,
  productId: r.product_id,
  planId: r.plan_id,
  granteeId: r.grantee_id,
  groupId: r.group_id,
  extraItems: r.extra_items as unknown as CheckoutItem[],
  member: r.member,
  successUrl: r.success_url,
  cancelUrl: r.cancel_url,
  options: r.options as unknown as CheckoutOptions,
  provider: r.provider,
  providerSessionId: r.provider_session_id,
  status: r.status as CheckoutSession['status'],
  subscriptionId: r.subscription_id,
  createdAt: r.created_at,
  completedAt: r.completed_at,
});

export function checkoutSessionRepository(db: Db): CheckoutSessionRepository {
  const one = async (id: string, forUpdate: boolean) => {
    const q = db.selectFrom('checkout_sessions').selectAll().where('id', '=', id);
    const r = await (forUpdate ? q.forUpdate() : q).executeTakeFirst();
    return r && toSession(r);
  };
  return {
    lockDeferredLink: async (key, now) => {
      // A concurrent insert of the same key waits for the first to commit, then finds its row.
      await db
        .insertInto('deferred_checkouts')
        .values({ link_key: key, session_id: null, created_at: now })
        .onConflict((oc) => oc.doNothing())
        .execute();
      const r = await db
        .selectFrom('deferred_checkouts')
        .select('session_id')
        .where('link_key', '=', key)
        .forUpdate()
        .executeTakeFirstOrThrow();
      return { sessionId: r.session_id };
    },
    setDeferredLink: async (key, sessionId) => {
      await db.updateTable('deferred_checkouts').set({ session_id: sessionId }).where('link_key', '=', key).execute();
    },
    pageCompleted: async (t, q) => {
      const page = await keysetPage(
        () => {
          let base = db
            .selectFrom('checkout_sessions')
            .selectAll()
            .where('organisation_id', '=', t.organisationId)
            .where('is_test', '=', t.isTest)
            .where('status', '=', 'completed');
          if (q.subscriptionId) base = base.where('subscription_id', '=', q.subscriptionId);
          if (q.members) base = q.members.length ? base.where('member', 'in', q.members) : base.where(sql<boolean>`false`);
          // A receipt bought a plan as its first plan or as one of a cart's other plans (`extra_items`).
          if (q.planIds)
            base = q.planIds.length
              ? base.where(
                  sql<boolean>`(plan_id::text = any(${q.planIds}::text[]) or exists (select 1 from jsonb_array_elements(extra_items) e where e->>'planId' = any(${q.planIds}::text[])))`,
                )
              : base.where(sql<boolean>`false`);
          if (q.search) base = base.where(sql<boolean>`strpos(lower(member), lower(${q.search})) > 0`);
          return base;
        },
        'checkout_sessions',
        q,
      );
      return { ...page, items: page.items.map(toSession) };
    },
    hasOpenForPlan: async (planId, since, providers) =>
      providers.length > 0 &&
      !!(await db
        .selectFrom('checkout_sessions')
        .select('id')
        // The partial index checkout_sessions_open_recent: open sessions by age.
        .where('status', '=', 'open')
        .where('created_at', '>=', since)
        .where('provider', 'in', providers)
        // Its first plan, or one of a cart's other plans (`extra_items`).
        .where(
          sql<boolean>`(plan_id = ${planId}::uuid or exists (select 1 from jsonb_array_elements(extra_items) e where e->>'planId' = ${planId}))`,
        )
        .limit(1)
        .executeTakeFirst()),
    get: (id) => one(id, false),
    getForUpdate: (id) => one(id, true),
    save: (cs) =>
      upsert(db, 'checkout_sessions', [
        {
          id: cs.id,
          organisation_id: cs.organisationId,
          is_test: cs.isTest,
          product_id: cs.productId,
          plan_id: cs.planId,
          grantee_id: cs.granteeId,
          group_id: cs.groupId,
          extra_items: json(cs.extraItems),
          member: cs.member,
          success_url: cs.successUrl,
          cancel_url: cs.cancelUrl,
          options: json(cs.options),
          provider: cs.provider,
          provider_session_id: cs.providerSessionId,
          status: cs.status,
          subscription_id: cs.subscriptionId,
          created_at: cs.createdAt,
          completed_at: cs.completedAt,
        },
      ]),
  };
}
