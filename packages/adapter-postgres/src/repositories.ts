import { sql } from 'kysely';
import type {
  CheckoutSession,
  ApiKey, Customer, DomainEvent, License, LicenseFilter, Organisation, PaymentIntegration, Repositories, Subscription, Tenant,
} from '@tollgate/core';
import { productRepository, planRepository, pricingTableRepository } from './catalog-repositories';
import { json, num, upsert, type AnyDb } from './sql-helpers';

/* eslint-disable @typescript-eslint/no-explicit-any */
type Row = Record<string, any>;

const inTenant = (q: any, t: Tenant) => q.where('organisation_id', '=', t.organisationId).where('is_test', '=', t.isTest);
const owned = (r: Row) => ({ id: r.id, organisationId: r.organisation_id, isTest: r.is_test });
const ownedRow = (o: { id: string; organisationId: string; isTest: boolean }) => ({ id: o.id, organisation_id: o.organisationId, is_test: o.isTest });

const toOrganisation = (r: Row): Organisation => ({ id: r.id, name: r.name, createdAt: r.created_at });
const toApiKey = (r: Row): ApiKey => ({
  id: r.id, organisationId: r.organisation_id, name: r.name, keyHash: r.key_hash, prefix: r.prefix, scopes: r.scopes, isTest: r.is_test,
  createdAt: r.created_at, revokedAt: r.revoked_at,
});
const toIntegration = (r: Row): PaymentIntegration => ({
  ...owned(r), integrationName: r.integration_name, accountName: r.account_name, accountId: r.account_id, accountData: r.account_data, updatedAt: r.updated_at,
});
const toCustomer = (r: Row): Customer => ({
  ...owned(r), value: r.value, emailAddress: r.email_address, paymentCustomerId: r.payment_customer_id, createdAt: r.created_at, updatedAt: r.updated_at,
});
const toSubscription = (r: Row): Subscription => ({
  ...owned(r), productId: r.product_id, planId: r.plan_id, customerId: r.customer_id, granteeId: r.grantee_id, email: r.email,
  paymentProvider: r.payment_provider, paymentSubscriptionId: r.payment_subscription_id, type: r.type, quantity: r.quantity, status: r.status,
  currency: r.currency, currentPeriodStart: r.current_period_start, currentPeriodEnd: r.current_period_end, cancelAtPeriodEnd: r.cancel_at_period_end,
  canceledAt: r.canceled_at, replacesId: r.replaces_id, lineItemIds: r.line_item_ids, createdAt: r.created_at, updatedAt: r.updated_at,
});
const toLicense = (r: Row): License => ({
  ...owned(r), productId: r.product_id, planId: r.plan_id, subscriptionId: r.subscription_id, granteeId: r.grantee_id, purchaser: r.purchaser,
  email: r.email, name: r.name, paymentService: r.payment_service, type: r.type, status: r.status, cancelAtPeriodEnd: r.cancel_at_period_end,
  startTime: r.start_time, endTime: r.end_time, metadata: r.metadata, createdAt: r.created_at, updatedAt: r.updated_at,
});
const licenseRow = (l: License) => ({
  ...ownedRow(l), product_id: l.productId, plan_id: l.planId, subscription_id: l.subscriptionId, grantee_id: l.granteeId, purchaser: l.purchaser,
  email: l.email, name: l.name, payment_service: l.paymentService, type: l.type, status: l.status, cancel_at_period_end: l.cancelAtPeriodEnd,
  start_time: l.startTime, end_time: l.endTime, metadata: json(l.metadata), created_at: l.createdAt, updated_at: l.updatedAt,
});
const toSession = (r: Row): CheckoutSession => ({
  ...owned(r), productId: r.product_id, planId: r.plan_id, granteeId: r.grantee_id, member: r.member, successUrl: r.success_url, cancelUrl: r.cancel_url,
  options: r.options, provider: r.provider, providerSessionId: r.provider_session_id, status: r.status, subscriptionId: r.subscription_id,
  createdAt: r.created_at, completedAt: r.completed_at,
});
const toEvent = (r: Row): DomainEvent => ({
  ...owned(r), type: r.type, subscriptionId: r.subscription_id, payload: r.payload, status: r.status, attempts: r.attempts, runAt: r.run_at,
  lastError: r.last_error, createdAt: r.created_at, updatedAt: r.updated_at,
});

function licenseFilter(q: any, f: LicenseFilter): any {
  if (f.status) q = q.where('status', '=', f.status);
  if (f.subscriptionId) q = q.where('subscription_id', '=', f.subscriptionId);
  if (f.productId) q = q.where('product_id', '=', f.productId);
  return q;
}

/** Every repository over one kysely handle (a transaction, inside the unit of work). */
export function repositories(db: AnyDb): Repositories {
  const first = async <T>(q: any, map: (r: Row) => T): Promise<T | undefined> => {
    const r = await q.executeTakeFirst();
    return r ? map(r) : undefined;
  };
  return {
    organisations: {
      get: (id) => first(db.selectFrom('organisations').selectAll().where('id', '=', id), toOrganisation),
      findByName: (name) => first(db.selectFrom('organisations').selectAll().where('name', '=', name), toOrganisation),
      save: (o) => upsert(db, 'organisations', [{ id: o.id, name: o.name, created_at: o.createdAt }]),
      any: async () => !!(await db.selectFrom('organisations').select('id').limit(1).executeTakeFirst()),
    },
    apiKeys: {
      findByHash: (h) => first(db.selectFrom('api_keys').selectAll().where('key_hash', '=', h), toApiKey),
      get: (id) => first(db.selectFrom('api_keys').selectAll().where('id', '=', id), toApiKey),
      listByOrganisation: async (orgId) =>
        (await db.selectFrom('api_keys').selectAll().where('organisation_id', '=', orgId).orderBy('created_at', 'desc').orderBy('id', 'desc').execute()).map(toApiKey),
      save: (k) => upsert(db, 'api_keys', [{
        id: k.id, organisation_id: k.organisationId, name: k.name, key_hash: k.keyHash, prefix: k.prefix, scopes: json(k.scopes), is_test: k.isTest,
        created_at: k.createdAt, revoked_at: k.revokedAt,
      }]),
    },
    paymentIntegrations: {
      get: (id) => first(db.selectFrom('payment_integrations').selectAll().where('id', '=', id), toIntegration),
      findByName: (t, name) => first(inTenant(db.selectFrom('payment_integrations').selectAll(), t).where('integration_name', '=', name), toIntegration),
      save: (p) => upsert(db, 'payment_integrations', [{
        ...ownedRow(p), integration_name: p.integrationName, account_name: p.accountName, account_id: p.accountId, account_data: json(p.accountData), updated_at: p.updatedAt,
      }]),
    },
    currencies: {
      list: async () => (await db.selectFrom('currencies').selectAll().orderBy('short_name').execute()).map((r: Row) => ({ id: r.id, shortName: r.short_name, longName: r.long_name, symbol: r.symbol })),
      save: (c) => upsert(db, 'currencies', [{ id: c.id, short_name: c.shortName, long_name: c.longName, symbol: c.symbol }]),
    },
    products: productRepository(db),
    plans: planRepository(db),
    pricingTables: pricingTableRepository(db),
    customers: {
      get: (id) => first(db.selectFrom('customers').selectAll().where('id', '=', id), toCustomer),
      findByValue: (t, v) => first(inTenant(db.selectFrom('customers').selectAll(), t).where('value', '=', v), toCustomer),
      save: (c) => upsert(db, 'customers', [{
        ...ownedRow(c), value: c.value, email_address: c.emailAddress, payment_customer_id: c.paymentCustomerId, created_at: c.createdAt, updated_at: c.updatedAt,
      }]),
    },
    subscriptions: {
      get: (id) => first(db.selectFrom('subscriptions').selectAll().where('id', '=', id), toSubscription),
      getForUpdate: (id) => first(db.selectFrom('subscriptions').selectAll().where('id', '=', id).forUpdate(), toSubscription),
      findByPaymentId: (pid) => first(db.selectFrom('subscriptions').selectAll().where('payment_subscription_id', '=', pid), toSubscription),
      listByPlan: async (planId) =>
        (await db.selectFrom('subscriptions').selectAll().where('plan_id', '=', planId).orderBy('created_at').orderBy('id').execute()).map(toSubscription),
      countReferencing: async ({ planId, productId }) => {
        let q = db.selectFrom('subscriptions').select(sql<number>`count(*)::int`.as('n'));
        if (planId && productId) q = q.where((eb: any) => eb.or([eb('plan_id', '=', planId), eb('product_id', '=', productId)]));
        else if (planId) q = q.where('plan_id', '=', planId);
        else if (productId) q = q.where('product_id', '=', productId);
        else return 0;
        return num((await q.executeTakeFirst())?.n ?? 0);
      },
      listDueForCancellation: async (now, limit) =>
        (await db.selectFrom('subscriptions').select('id').where('cancel_at_period_end', '=', true).where('status', '<>', 'CANCELED')
          .where('current_period_end', '<=', now).orderBy('current_period_end').limit(limit).execute()).map((r: Row) => r.id),
      listDueForRenewal: async (now, providers, limit) =>
        providers.length
          ? (await db.selectFrom('subscriptions').select('id').where('cancel_at_period_end', '=', false).where('status', '<>', 'CANCELED')
            .where('current_period_end', '<=', now).where('payment_provider', 'in', providers).orderBy('current_period_end').limit(limit).execute()).map((r: Row) => r.id)
          : [],
      save: (s) => upsert(db, 'subscriptions', [{
        ...ownedRow(s), product_id: s.productId, plan_id: s.planId, customer_id: s.customerId, grantee_id: s.granteeId, email: s.email,
        payment_provider: s.paymentProvider, payment_subscription_id: s.paymentSubscriptionId, type: s.type, quantity: s.quantity, status: s.status,
        currency: s.currency, current_period_start: s.currentPeriodStart, current_period_end: s.currentPeriodEnd, cancel_at_period_end: s.cancelAtPeriodEnd,
        canceled_at: s.canceledAt, replaces_id: s.replacesId, line_item_ids: json(s.lineItemIds), created_at: s.createdAt, updated_at: s.updatedAt,
      }]),
    },
    licenses: {
      get: (id) => first(db.selectFrom('licenses').selectAll().where('id', '=', id), toLicense),
      // Locks in id order, so two batches over the same licenses cannot deadlock.
      getManyForUpdate: async (ids) =>
        ids.length ? (await db.selectFrom('licenses').selectAll().where('id', 'in', ids).orderBy('id').forUpdate().execute()).map(toLicense) : [],
      listBySubscription: async (sid) =>
        (await db.selectFrom('licenses').selectAll().where('subscription_id', '=', sid).orderBy('created_at').orderBy('id').execute()).map(toLicense),
      list: async (t, f) => (await licenseFilter(inTenant(db.selectFrom('licenses').selectAll(), t), f).orderBy('created_at').orderBy('id').execute()).map(toLicense),
      count: async (t, f) => {
        const r = await licenseFilter(inTenant(db.selectFrom('licenses'), t), f)
          .select([sql<number>`count(*)::int`.as('count'), sql<number>`count(grantee_id)::int`.as('assigned')]).executeTakeFirst();
        const count = num(r?.count ?? 0);
        const assigned = num(r?.assigned ?? 0);
        return { count, assigned, unassigned: count - assigned };
      },
      findForCheck: async (t, productId, grantees) =>
        grantees.length
          ? (await inTenant(db.selectFrom('licenses').selectAll(), t).where('product_id', '=', productId).where('grantee_id', 'in', grantees).execute()).map(toLicense)
          : [],
      saveMany: (ls) => upsert(db, 'licenses', ls.map(licenseRow)),
      deleteMany: async (ids) => {
        if (ids.length) await db.deleteFrom('licenses').where('id', 'in', ids).execute();
      },
    },
    events: {
      get: (id) => first(db.selectFrom('events').selectAll().where('id', '=', id), toEvent),
      save: (e) => upsert(db, 'events', [{
        ...ownedRow(e), type: e.type, subscription_id: e.subscriptionId, payload: json(e.payload), status: e.status, attempts: e.attempts,
        run_at: e.runAt, last_error: e.lastError, created_at: e.createdAt, updated_at: e.updatedAt,
      }]),
      claimNext: (now) =>
        first(
          db.selectFrom('events').selectAll().where('status', 'in', ['queued', 'pending']).where('run_at', '<=', now)
            .orderBy('seq').limit(1).forUpdate().skipLocked(),
          toEvent,
        ),
    },
    signingKeys: {
      listActive: async (orgId, algorithm) =>
        (await db.selectFrom('signing_keys').selectAll().where('organisation_id', '=', orgId).where('algorithm', '=', algorithm).where('retired_at', 'is', null)
          .orderBy('created_at', 'desc').orderBy('id', 'desc').execute()).map((r: Row) => ({
          id: r.id, organisationId: r.organisation_id, algorithm: r.algorithm, publicKey: r.public_key, secretCiphertext: r.secret_ciphertext,
          createdAt: r.created_at, retiredAt: r.retired_at,
        })),
      save: (k) => upsert(db, 'signing_keys', [{
        id: k.id, organisation_id: k.organisationId, algorithm: k.algorithm, public_key: k.publicKey, secret_ciphertext: k.secretCiphertext,
        created_at: k.createdAt, retired_at: k.retiredAt,
      }]),
    },
    checkoutSessions: {
      get: (id) => first(db.selectFrom('checkout_sessions').selectAll().where('id', '=', id), toSession),
      getForUpdate: (id) => first(db.selectFrom('checkout_sessions').selectAll().where('id', '=', id).forUpdate(), toSession),
      save: (cs) => upsert(db, 'checkout_sessions', [{
        ...ownedRow(cs), product_id: cs.productId, plan_id: cs.planId, grantee_id: cs.granteeId, member: cs.member, success_url: cs.successUrl,
        cancel_url: cs.cancelUrl, options: json(cs.options), provider: cs.provider, provider_session_id: cs.providerSessionId, status: cs.status,
        subscription_id: cs.subscriptionId, created_at: cs.createdAt, completed_at: cs.completedAt,
      }]),
    },
    billingDocuments: {
      list: async (sid, kind) =>
        (await db.selectFrom('billing_documents').selectAll().where('subscription_id', '=', sid).where('kind', '=', kind).orderBy('created_at', 'desc').orderBy('seq', 'desc').execute())
          .map((r: Row) => ({ id: r.id, organisationId: r.organisation_id, subscriptionId: r.subscription_id, kind: r.kind, body: r.body, createdAt: r.created_at })),
      save: (d) => upsert(db, 'billing_documents', [{ id: d.id, organisation_id: d.organisationId, subscription_id: d.subscriptionId, kind: d.kind, body: json(d.body), created_at: d.createdAt }]),
    },
    idempotency: {
      find: (orgId, key, since) =>
        first(db.selectFrom('idempotency_keys').selectAll().where('organisation_id', '=', orgId).where('key', '=', key).where('created_at', '>=', since), (r: Row) => ({
          organisationId: r.organisation_id, key: r.key, fingerprint: r.fingerprint, status: r.status, body: r.body, createdAt: r.created_at,
        })),
      save: async (rec) => {
        const r = await db.insertInto('idempotency_keys').values({
          organisation_id: rec.organisationId, key: rec.key, fingerprint: rec.fingerprint, status: rec.status, body: rec.body === undefined ? null : json(rec.body), created_at: rec.createdAt,
        }).onConflict((oc: any) => oc.columns(['organisation_id', 'key']).doNothing()).executeTakeFirst();
        return Number(r.numInsertedOrUpdatedRows ?? 0) > 0;
      },
      purge: async (before) => Number((await db.deleteFrom('idempotency_keys').where('created_at', '<', before).executeTakeFirst()).numDeletedRows ?? 0),
    },
    webhookEvents: {
      record: async (provider, eventId, at) => {
        const r = await db.insertInto('webhook_events').values({ provider, event_id: eventId, received_at: at }).onConflict((oc: any) => oc.columns(['provider', 'event_id']).doNothing()).executeTakeFirst();
        return Number(r.numInsertedOrUpdatedRows ?? 0) > 0;
      },
    },
  };
}
